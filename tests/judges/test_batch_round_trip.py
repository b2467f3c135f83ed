"""A run through a batch engine: its requests written as the live run's (same bodies, same judgments),
its answers imported and scored as a live run's, every unusable answer line counted and named."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from batch_replay import replay
from dialjudge.core.api import (
    RunRequest,
    plan_runs,
)
from dialjudge.core.api.batch import awaiting_run, batch_state, import_answers, retry_batch, write_batch
from dialjudge.core.api.judging import judge
from dialjudge.core.api.session import Session
from dialjudge.core.config import Config, JudgeConfig, ModelPrice, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import BackendError, ConfigError
from dialjudge.core.judges.post_run.cost import run_usage
from dialjudge.core.judges.run.events import RunStatus
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.model import Dataset

ITEMS = 6
SECRET = "sk-batch-secret-never-written"


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", remember=False)


def session_for(tmp_path: Path, base_url: str, **options: Any) -> Session:
    judge = JudgeConfig(name="api", backend="openai", model="m-1", base_url=base_url, endpoint="chat",
                        concurrency=1, timeout=10.0, max_retries=0, api_key_env="BATCH_TEST_KEY",
                        extra=dict(options))
    return Session(Config(path=None, judges={"api": judge}), store_path=tmp_path / "runs.sqlite3")


def plan_for(session: Session, dataset: Dataset, mode: str, *, name: str = "") -> Any:
    request = RunRequest(template="likert-1to5", judges=("api",), mode=mode, aspect="overall",
                         quality="overall", limit=ITEMS, name=name)
    return plan_runs(request, dataset, session.config)[0]


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def scores_of(session: Session, run_id: int) -> dict[str, tuple[float | None, str]]:
    with session.store() as store:
        return {item: (j.score, j.raw_output) for item, j in store.judgments.load_judgments(run_id)["api"].items()}


@pytest.mark.parametrize("mode", ["generate", "logprob"])
def test_imported_answers_score_as_the_live_run_does(tmp_path, sample, fault_server, monkeypatch, mode):
    monkeypatch.setenv("BATCH_TEST_KEY", SECRET)
    server = fault_server()
    session = session_for(tmp_path, server.base_url, continuation="prefill")
    plan = plan_for(session, sample, mode)
    exported = write_batch(session, plan, sample, tmp_path / "requests.jsonl")
    requests = lines_of(tmp_path / "requests.jsonl")
    assert exported.requests == exported.total == len(requests) == ITEMS
    assert SECRET not in (tmp_path / "requests.jsonl").read_text(encoding="utf-8")
    assert {r["url"] for r in requests} == {"/v1/chat/completions"}
    assert len({r["custom_id"] for r in requests}) == ITEMS
    if mode == "logprob":  # what a probability mode needs: log-probabilities, top-K, the prefill
        assert all(r["body"]["logprobs"] is True and r["body"]["top_logprobs"] >= 5 for r in requests)
        assert all(r["body"]["messages"][-1]["role"] == "assistant" for r in requests)
    with session.store() as store:
        record = store.runs.get_run(exported.run_id)
    assert record.status is RunStatus.AWAITING_ANSWERS
    assert batch_state(record) == f"awaiting {ITEMS} of {ITEMS} answers"
    assert awaiting_run(session, plan) == record

    replay(tmp_path / "requests.jsonl", server.base_url, tmp_path / "answers.jsonl")
    imported = import_answers(session, exported.run_id, [tmp_path / "answers.jsonl"], sample)
    assert (imported.status, imported.stored, imported.scored_now, imported.problems) == (
        RunStatus.FINISHED, ITEMS, ITEMS, [])
    assert imported.files[0]["provider"] == "OpenAI Batch API" and imported.files[0]["models"] == {"m-1": ITEMS}
    # The answers were asked for this run (through the batch), not reused: its usage counts their tokens.
    with session.store() as store:
        usage = run_usage(store, exported.run_id, {})
        stored = list(store.judgments.iter_judgments(exported.run_id))
    (judge_usage,) = usage.judges
    assert (judge_usage.asked, judge_usage.reused) == (ITEMS, 0)
    assert judge_usage.prompt_tokens == sum(j.prompt_tokens for j in stored) > 0
    # At the batch engine's prices where the config gives them (here input only: output at the live price).
    with session.store() as store:
        priced = run_usage(store, exported.run_id, {"m-1": ModelPrice(4.0, 8.0, batch_input_per_million=2.0)})
    tokens = (judge_usage.prompt_tokens, judge_usage.completion_tokens)
    assert priced.judges[0].cost == pytest.approx((tokens[0] * 2.0 + tokens[1] * 8.0) / 1e6)

    # Live, past the response cache (which now holds the batch's answers): every request sent again.
    sent = server.stats.requests
    live = judge(session, [plan_for(session, sample, mode, name="live")], sample, fresh=True,
                 options=EngineOptions(use_cache=False))
    assert live.summaries[0].status is RunStatus.FINISHED
    assert server.stats.requests - sent >= ITEMS and live.summaries[0].cached == 0
    assert scores_of(session, live.run_ids[0]) == scores_of(session, exported.run_id)


def test_a_probability_mode_needs_the_continuation_stated(tmp_path, sample):
    session = session_for(tmp_path, "http://127.0.0.1:9/v1")
    with pytest.raises(BackendError, match="options.chat_template.*options.continuation"):
        write_batch(session, plan_for(session, sample, "logprob"), sample, tmp_path / "r.jsonl")
    assert not (tmp_path / "r.jsonl").exists()


def test_a_judge_without_an_openai_api_cannot_be_batched(tmp_path, sample):
    session = Session(store_path=tmp_path / "runs.sqlite3")
    request = RunRequest(template="likert-1to5", mode="generate", aspect="overall", quality="overall", limit=2)
    plan = plan_runs(request, sample, session.config)[0]
    with pytest.raises(ConfigError, match="a batch file is for a judge behind an OpenAI-compatible API"):
        write_batch(session, plan, sample, tmp_path / "r.jsonl")


def answer(cid: str, text: str, n: int, *, model: str = "m-1") -> dict[str, Any]:
    body = {"model": model, "choices": [{"index": 0, "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1}}
    return {"id": f"batch_req_{n}", "custom_id": cid, "response": {"status_code": 200, "body": body}, "error": None}


def test_every_unusable_answer_line_is_counted_and_named(tmp_path, sample):
    session = session_for(tmp_path, "http://127.0.0.1:9/v1")
    exported = write_batch(session, plan_for(session, sample, "generate"), sample, tmp_path / "requests.jsonl")
    ids = [r["custom_id"] for r in lines_of(tmp_path / "requests.jsonl")]
    good = [answer(cid, str(n % 5 + 1), n) for n, cid in enumerate(ids)]
    lines = [json.dumps(good[0]), json.dumps(good[1]),
             json.dumps(answer(ids[1], "5", 99)),  # a duplicate of line 2, with another answer
             json.dumps({"id": "batch_req_7", "custom_id": ids[2], "response": None,
                         "error": {"code": "batch_expired", "message": "not reached in 24h"}}),
             json.dumps({"id": "batch_req_8", "custom_id": ids[3],
                         "response": {"status_code": 400, "body": {"error": {"message": "bad max_tokens"}}},
                         "error": None}),
             json.dumps(answer("dj999-0-abcdef012345", "3", 9)),  # another run's line
             json.dumps(answer(ids[0].rsplit('-', 1)[0] + '-zzzzzzzzzzzz', "3", 10)),  # this run's judgment, another request
             # ids[4] is missing; ids[5]'s line is cut short as the file ends
             json.dumps(good[5])[:40]]
    (tmp_path / "answers.jsonl").write_text("\n".join(lines), encoding="utf-8")
    first = import_answers(session, exported.run_id, [tmp_path / "answers.jsonl"], sample)
    assert first.counts == {"duplicate": 1, "expired": 1, "error": 1, "other run": 1, "unmatched": 1,
                            "truncated": 1}
    where = {p.kind: p.where for p in first.problems}
    path = str(tmp_path / "answers.jsonl")
    assert where["duplicate"] == f"{path}, line 3 (id {ids[1]!r})"
    assert where["truncated"] == f"{path}, line 8"
    assert where["unmatched"] == f"{path}, line 7 (id {ids[0].rsplit('-', 1)[0] + '-zzzzzzzzzzzz'!r}), field 'custom_id'"
    assert where["other run"] == f"{path}, line 6 (id 'dj999-0-abcdef012345'), field 'custom_id'"
    assert "HTTP 400: bad max_tokens" in next(str(p) for p in first.problems if p.kind == "error")
    # Scored: the two good lines only (the duplicate's other answer is not); the error and the expired
    # line are failed requests; the missing and the truncated line still await an answer.
    assert (first.status, first.scored_now, first.stored, first.awaiting) == (RunStatus.AWAITING_ANSWERS, 2, 4, 2)
    assert set(first.missing) == {ids[4], ids[5]}
    scored = scores_of(session, exported.run_id)
    assert sorted(s for s, _ in scored.values() if s is not None) == [1.0, 2.0]

    # The rest, from another file (a model other than the planned one answered one of them); the first
    # file once more is harmless: its lines are stored already.
    (tmp_path / "rest.jsonl").write_text(
        json.dumps(answer(ids[5], "4", 5, model="other-model")) + "\n" + json.dumps(good[4]) + "\n")
    second = import_answers(session, exported.run_id, [tmp_path / "rest.jsonl", tmp_path / "answers.jsonl"], sample)
    assert second.status is RunStatus.FINISHED and second.stored == ITEMS
    assert second.other_models == {"other-model": 1}
    assert second.counts["already answered"] == 4  # lines 1-3 and 7: stored by the first import

    # runs retry: the two failed requests go into a new batch file; their answers finish the run scored.
    retried = retry_batch(session, exported.run_id, sample, tmp_path / "retry.jsonl")
    assert sorted(r["custom_id"] for r in lines_of(tmp_path / "retry.jsonl")) == sorted([ids[2], ids[3]])
    assert retried.requests == 2
    (tmp_path / "retry-answers.jsonl").write_text("\n".join(json.dumps(good[n]) for n in (2, 3)) + "\n")
    third = import_answers(session, exported.run_id, [tmp_path / "retry-answers.jsonl"], sample)
    assert third.status is RunStatus.FINISHED and third.problems == []
    # Each answer went to the judgment its request asked: the item is found from the request's own
    # prompt (the one run item whose candidate it shows), not from the custom id.
    final = {item: score for item, (score, _) in scores_of(session, exported.run_id).items()}
    given = {n: float(n % 5 + 1) for n in range(ITEMS)} | {5: 4.0}  # ids[5]: the other model's answer
    assert final == {_item_of(request, sample, final): given[n]
                     for n, request in enumerate(lines_of(tmp_path / "requests.jsonl"))}


def _item_of(request: dict[str, Any], dataset: Dataset, items: dict[str, Any]) -> str:
    prompt = request["body"]["messages"][-1]["content"]
    (item,) = [ex.id for ex in dataset.examples if ex.id in items and ex.candidate and ex.candidate in prompt]
    return item


def test_files_are_split_at_the_request_and_size_limits(tmp_path, sample):
    from dialjudge.core.judges.batch.requests import plan_batch, write_requests

    session = session_for(tmp_path, "http://127.0.0.1:9/v1")
    plan = plan_for(session, sample, "generate")
    batch = plan_batch(plan.config, sample, session.backends_for(plan.config), context_order_seed=0)
    whole = write_requests(batch, 7, tmp_path / "all.jsonl")
    assert [Path(f.path).name for f in whole] == ["all.jsonl"] and whole[0].requests == ITEMS
    lines = (tmp_path / "all.jsonl").read_bytes().splitlines(keepends=True)
    by_count = write_requests(batch, 7, tmp_path / "n.jsonl", max_requests=4)
    assert [(Path(f.path).name, f.requests) for f in by_count] == [("n-1.jsonl", 4), ("n-2.jsonl", 2)]
    assert not (tmp_path / "n.jsonl").exists()
    by_size = write_requests(batch, 7, tmp_path / "s.jsonl", max_bytes=max(map(len, lines)) + 1)
    assert [f.requests for f in by_size] == [1] * ITEMS
    for files in (by_count, by_size):  # the same lines, in the same order, whatever the split
        assert b"".join(Path(f.path).read_bytes() for f in files) == b"".join(lines)
        assert all(f.sha256 == hashlib.sha256(Path(f.path).read_bytes()).hexdigest() for f in files)


def test_a_run_awaiting_answers_is_not_offered_to_resume_as_an_interrupted_one(tmp_path, sample):
    from dialjudge.core.api.interrupted import find_interrupted_run

    session = session_for(tmp_path, "http://127.0.0.1:9/v1")
    exported = write_batch(session, plan_for(session, sample, "generate"), sample, tmp_path / "r.jsonl")
    with session.store() as store:
        assert store.runs.list_runs()[0].id == exported.run_id  # the newest run of the dataset
        assert find_interrupted_run(store, sample.name) is None
        assert store.runs.find_resumable(store.runs.get_run(exported.run_id).fingerprint) is None


def test_batch_prices_are_read_beside_the_live_ones():
    config = parse_config({"prices": {"m": {"input_per_million": 1, "output_per_million": 2,
                                            "batch_input_per_million": 0.5}}})
    assert config.prices["m"] == ModelPrice(1.0, 2.0, batch_input_per_million=0.5)
    assert config.prices["m"].for_batch() == ModelPrice(0.5, 2.0)
    with pytest.raises(ConfigError, match="batch_input_per_million must be 0 or more"):
        parse_config({"prices": {"m": {"input_per_million": 1, "output_per_million": 2,
                                       "batch_input_per_million": -1}}})


def test_lines_that_are_not_answers_are_named_and_nothing_is_scored_from_them(tmp_path, sample):
    session = session_for(tmp_path, "http://127.0.0.1:9/v1")
    exported = write_batch(session, plan_for(session, sample, "generate"), sample, tmp_path / "requests.jsonl")
    cid = lines_of(tmp_path / "requests.jsonl")[0]["custom_id"]
    (tmp_path / "answers.jsonl").write_text("\n".join([
        "<html>502 Bad Gateway</html>",
        json.dumps({"custom_id": 5, "response": {"status_code": 200, "body": {}}}),
        json.dumps({"custom_id": cid, "response": {"status_code": 200, "body": "4"}, "error": None}),
        json.dumps({"custom_id": cid, "response": {"status_code": 200, "body": {"choices": []}}, "error": None}),
        ""]), encoding="utf-8")
    report = import_answers(session, exported.run_id, [tmp_path / "answers.jsonl"], sample)
    path = str(tmp_path / "answers.jsonl")
    assert [(p.kind, p.where) for p in report.problems] == [
        ("not JSON", f"{path}, line 1"),
        ("malformed", f"{path}, line 2, field 'custom_id'"),
        ("malformed", f"{path}, line 3 (id {cid!r}), field 'response.body'"),
        ("unreadable", f"{path}, line 4 (id {cid!r}), field 'response.body'")]
    assert "empty list of choices" in str(report.problems[-1])
    # The unreadable answer is a failed request (asked again by runs retry), never a score.
    assert report.scored_now == 0
    assert [s for s, _ in scores_of(session, exported.run_id).values()] == [None]
