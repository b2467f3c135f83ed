"""Rescoring a stored run without the model, and retrying only its failed judgments (fake backend)."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from dialjudge.core.config import JudgeConfig
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends.fake import GARBAGE_OUTPUT, FakeBackend
from dialjudge.core.judges.post_run.rescore import RescoreSettings, parse_mapping, rescore_run
from dialjudge.core.judges.post_run.retry import retry_run
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.store.run_store import SCHEMA_VERSION, RunStore
from dialjudge.core.judges.types import BackendResult, JudgeRequest, ScoringMode
from dialjudge.core.model import Dataset

ITEMS = 6


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample")


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = RunStore(tmp_path / "runs.sqlite3")
    yield s
    s.close()


def make_config(dataset: Dataset, *, mode: ScoringMode = ScoringMode.LOGPROB, top_k: int = 3,
                template: str = "likert-1to5", judge: str = "fake") -> RunConfig:
    return RunConfig.build(dataset, get_template(template), [JudgeConfig(name=judge, backend="fake")],
                           aspect="overall", quality="overall", mode=mode, top_k=top_k, limit=ITEMS)


def spread_scores(item_id: str, prompt: str) -> float:
    """Scores between two ratings, so that top-1 and the weighted top-K differ."""
    return 1.3 + (sum(map(ord, item_id)) % 30) / 10


def judged(store: RunStore, config: RunConfig, dataset: Dataset, backend: FakeBackend, **kw: Any) -> int:
    summary = asyncio.run(RunEngine(config, dataset, {backend.name: backend}, store, EngineOptions(**kw)).run())
    return summary.run_id


def scores(store: RunStore, run_id: int) -> dict[str, float | None]:
    return {item: j.score for item, j in store.judgments.load_judgments(run_id)["fake"].items()}


# -- rescoring --------------------------------------------------------------------------------


@pytest.mark.parametrize(("first_k", "new_k"), [(3, 1), (1, 3), (3, 0), (0, 2)])
def test_rescoring_with_another_top_k_equals_judging_with_it_and_asks_nothing(
        store: RunStore, sample: Dataset, first_k: int, new_k: int) -> None:
    backend = FakeBackend(score_fn=spread_scores)
    source = judged(store, make_config(sample, top_k=first_k), sample, backend)
    asked = len(backend.requests)
    assert asked == ITEMS

    result = rescore_run(store, source, sample, RescoreSettings(top_k=new_k))
    assert len(backend.requests) == asked  # no model call

    fresh_backend = FakeBackend(score_fn=spread_scores)
    scratch = judged(store, make_config(sample, top_k=new_k), sample, fresh_backend, use_cache=False)
    assert len(fresh_backend.requests) == ITEMS
    rescored, from_scratch = scores(store, result.run_id), scores(store, scratch)
    assert rescored.keys() == from_scratch.keys() and len(rescored) == ITEMS
    for item in rescored:
        assert rescored[item] == pytest.approx(from_scratch[item], abs=1e-12)
    if 1 in (first_k, new_k):  # top-1 is the most likely rating; the others weigh two ratings
        assert result.changed > 0
        assert rescored != scores(store, source)


def test_top_1_by_hand(store: RunStore, sample: Dataset) -> None:
    """A score of 2.3 puts 0.7 on "2" and 0.3 on "3": top-1 reads 2, top-2 reads 0.7*2 + 0.3*3."""
    backend = FakeBackend(score_fn=lambda item, prompt: 2.3)
    source = judged(store, make_config(sample, top_k=2), sample, backend)
    assert list(scores(store, source).values()) == [pytest.approx(2.3)] * ITEMS
    top1 = rescore_run(store, source, sample, RescoreSettings(top_k=1))
    assert set(scores(store, top1.run_id).values()) == {2.0}
    assert top1.changed == ITEMS and top1.failures == 0


def test_the_new_run_names_its_source_and_keeps_the_source_unchanged(store: RunStore, sample: Dataset) -> None:
    source = judged(store, make_config(sample), sample, FakeBackend(score_fn=spread_scores))
    before = scores(store, source)
    result = rescore_run(store, source, sample, RescoreSettings(top_k=1, name="top-1"))
    record = store.runs.get_run(result.run_id)
    assert record.source_run == source and record.status.value == "finished"
    assert record.name == "top-1" and record.run_config.top_k == 1
    assert record.config["rescore"]["source_run"] == source
    assert store.runs.get_run(source).source_run is None
    assert scores(store, source) == before
    # A rescored run is never found as a run to resume by the judged configuration's fingerprint.
    assert record.fingerprint != make_config(sample, top_k=1).fingerprint
    # The answers were paid for by the source: every rescored judgment counts as reused.
    assert all(j.cached for j in store.judgments.iter_judgments(result.run_id))


def test_an_answer_mapping_weighs_the_mapped_values(store: RunStore, sample: Dataset) -> None:
    backend = FakeBackend(score_fn=lambda item, prompt: 3.25)  # 0.75 on "3", 0.25 on "4"
    source = judged(store, make_config(sample, top_k=0), sample, backend)
    mapping = parse_mapping("1=0, 2=0, 3=0, 4=1, 5=1")
    result = rescore_run(store, source, sample, RescoreSettings(mapping=mapping))
    for j in store.judgments.iter_judgments(result.run_id):
        assert j.score == pytest.approx(0.25) and j.normalized == pytest.approx(0.25)


def test_a_mapping_applies_to_generated_answers(store: RunStore, sample: Dataset) -> None:
    backend = FakeBackend(score_fn=lambda item, prompt: 4.0, garbage_every=3)
    source = judged(store, make_config(sample, mode=ScoringMode.GENERATE), sample, backend)
    result = rescore_run(store, source, sample, RescoreSettings(mapping={"1": 0, "2": 0, "3": 0, "4": 1, "5": 2}))
    got = scores(store, result.run_id)
    assert sorted(got.values(), key=lambda s: -1 if s is None else s) == [None, None] + [1.0] * (ITEMS - 2)
    assert result.failures == 2  # the garbage answers stay unparseable


def test_switching_a_yes_no_distribution_between_modes(store: RunStore, sample: Dataset) -> None:
    """yesno's g = p(yes) / (p(yes) + p(no)) is the logprob expected value with yes=1, no=0."""
    config = make_config(sample, template="dstc10-yesno", mode=ScoringMode.YESNO, top_k=0)
    source = judged(store, config, sample, FakeBackend(score_fn=lambda item, prompt: 0.8))
    modes = get_template("dstc10-yesno").output.modes
    if ScoringMode.LOGPROB not in modes:
        with pytest.raises(ConfigError, match="does not offer logprob"):
            rescore_run(store, source, sample, RescoreSettings(mode=ScoringMode.LOGPROB))
        return
    result = rescore_run(store, source, sample, RescoreSettings(mode=ScoringMode.LOGPROB))
    assert list(scores(store, result.run_id).values()) == [pytest.approx(0.8)] * ITEMS


@pytest.mark.parametrize(("settings", "message"), [
    (RescoreSettings(top_k=6), r"kept the 5 most likely first tokens .* top-K up to 5 only"),
    (RescoreSettings(mode=ScoringMode.GENERATE), "cannot be rescored as generate"),
    (RescoreSettings(mapping={"1": 0, "2": 1}), "no value for '3'"),
    (RescoreSettings(mapping={"1": 0, "2": 1, "3": 1, "4": 1, "5": 1, "6": 1}), "'6' is not an answer"),
    (RescoreSettings(top_k=-1), "top_k must be 0 or more"),
])
def test_what_cannot_be_rescored_exactly_is_refused_before_anything_is_written(
        store: RunStore, sample: Dataset, settings: RescoreSettings, message: str) -> None:
    source = judged(store, make_config(sample, top_k=3), sample, FakeBackend())
    with pytest.raises(ConfigError, match=message):
        rescore_run(store, source, sample, settings)
    assert [r.id for r in store.runs.list_runs()] == [source]


@pytest.mark.parametrize(("text", "message"), [("1=a", "not a number: 'a'"), ("1", "not ANSWER=VALUE"),
                                               (" , ", "empty")])
def test_mapping_text_mistakes_name_the_part(text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_mapping(text)


def test_a_new_parser_reads_answers_the_old_one_could_not(store: RunStore, sample: Dataset, tmp_path: Path) -> None:
    """Answers written as "Score: 4/5" fail a parser that only knows 1-5 ... and a 0-10 scale reads 4 as 4."""
    answers = iter(["Score: 4"] * ITEMS)

    class Backend(FakeBackend):
        async def complete(self, request: JudgeRequest) -> BackendResult:
            self.requests.append(request)
            return BackendResult(raw_output=next(answers))

    backend = Backend()
    source = judged(store, make_config(sample, mode=ScoringMode.GENERATE), sample, backend)
    assert set(scores(store, source).values()) == {4.0}
    template = get_template("likert-1to5")
    wider = template.text.replace("max = 5", "max = 10") if "max = 5" in template.text else None
    if wider is None:
        pytest.skip("the shipped template's scale is not written as max = 5")
    result = rescore_run(store, source, sample, RescoreSettings(template_text=wider, template_source="wider"))
    for j in store.judgments.iter_judgments(result.run_id):
        assert j.score == 4.0 and j.normalized == pytest.approx(3 / 9)
    assert len(backend.requests) == ITEMS


def test_a_changed_dataset_is_refused(store: RunStore, sample: Dataset) -> None:
    source = judged(store, make_config(sample), sample, FakeBackend())
    first = sample.examples[0]
    changed = Dataset(sample.name, [dataclasses.replace(first, candidate="something else"), *sample.examples[1:]],
                      source=sample.source, meta=sample.meta)
    with pytest.raises(ConfigError, match="no longer renders the prompt that was asked"):
        rescore_run(store, source, changed, RescoreSettings(top_k=1))


# -- the store keeps what rescoring needs ---------------------------------------------------


def test_judgments_keep_their_top_logprobs(store: RunStore, sample: Dataset) -> None:
    source = judged(store, make_config(sample, top_k=3), sample, FakeBackend(score_fn=spread_scores))
    for j in store.judgments.iter_judgments(source):
        assert j.top_logprobs is not None and len(j.top_logprobs) == 5
        assert all(isinstance(t, str) and isinstance(p, float) and p <= 0 for t, p in j.top_logprobs)


def test_a_version_2_store_gains_the_new_columns_and_keeps_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    db = sqlite3.connect(path)
    db.executescript((Path(__file__).parent / "store_schema_v1.sql").read_text(encoding="utf-8"))
    db.execute("CREATE TABLE run_locks (fingerprint TEXT PRIMARY KEY, run_id INTEGER, pid INTEGER NOT NULL, "
               "host TEXT NOT NULL, owner TEXT NOT NULL, started TEXT NOT NULL)")
    db.execute("PRAGMA user_version = 2")
    db.execute("INSERT INTO runs (created, updated, name, status, config, fingerprint, total) "
               "VALUES ('2026-01-01', '2026-01-01', 'old', 'finished', '{}', 'fp-old', 1)")
    db.execute("INSERT INTO judgments (run_id, item_id, judge, repeat, mode, prompt_hash, raw_output, score, "
               "created) VALUES (1, 'a', 'j', 0, 'logprob', 'h', '4', 4.0, '2026-01-01')")
    db.commit()
    db.close()
    with RunStore(path) as store:
        assert store.schema_version == SCHEMA_VERSION == 5
        (record,) = store.runs.list_runs()
        assert record.source_run is None and record.judgments == 1
        (judgment,) = store.judgments.iter_judgments(1)
        assert judgment.top_logprobs is None and judgment.score == 4.0
        new = store.runs.create_run({}, "fp-new", source_run=1)
        assert store.runs.get_run(new).source_run == 1
    with RunStore(path) as again:  # opening twice does not add the columns twice
        assert again.schema_version == SCHEMA_VERSION


def test_a_run_stored_without_top_logprobs_rescores_with_the_expected_value_only(
        store: RunStore, sample: Dataset) -> None:
    source = judged(store, make_config(sample, top_k=3), sample, FakeBackend(score_fn=spread_scores))
    with store._connection.transaction() as db:  # as a schema-2 store left it
        db.execute("UPDATE judgments SET top_logprobs = NULL")
    with pytest.raises(ConfigError, match="before judgments kept their top log-probabilities"):
        rescore_run(store, source, sample, RescoreSettings(top_k=2))
    result = rescore_run(store, source, sample, RescoreSettings(top_k=0))
    for item, score in scores(store, result.run_id).items():
        assert score is not None and math.isclose(score, spread_scores(item, ""), abs_tol=1e-9)


# -- retry ---------------------------------------------------------------------------------------


def test_retry_asks_again_only_for_the_failed_judgments(store: RunStore, sample: Dataset) -> None:
    config = make_config(sample, mode=ScoringMode.GENERATE)
    flaky = FakeBackend(fail_every=4, garbage_every=3)  # requests 3 and 6 unparseable, 4 raises
    source = judged(store, config, sample, flaky)
    first = store.judgments.load_judgments(source)["fake"]
    failed = {item for item, j in first.items() if j.failed}
    assert len(failed) == 3 and len(flaky.requests) == ITEMS
    kept = {item: (j.score, j.raw_output) for item, j in first.items() if not j.failed}

    healthy = FakeBackend()
    summary = asyncio.run(retry_run(store, source, sample, {"fake": healthy}))
    assert summary.run_id == source and summary.failures == 0
    assert sorted(r.item_id for r in healthy.requests) == sorted(failed)  # nothing that succeeded is asked again
    after = store.judgments.load_judgments(source)["fake"]
    assert {item: (j.score, j.raw_output) for item, j in after.items() if item in kept} == kept
    assert all(not j.failed for j in after.values()) and len(after) == ITEMS
    assert store.runs.get_run(source).status.value == "finished"
    assert len([r for r in store.runs.list_runs()]) == 1


def test_retry_of_a_run_without_failures_asks_nothing(store: RunStore, sample: Dataset) -> None:
    source = judged(store, make_config(sample), sample, FakeBackend())
    backend = FakeBackend()
    summary = asyncio.run(retry_run(store, source, sample, {"fake": backend}))
    assert backend.requests == [] and summary.failures == 0


def test_garbage_stays_failed_when_the_judge_answers_garbage_again(store: RunStore, sample: Dataset) -> None:
    config = make_config(sample, mode=ScoringMode.GENERATE)
    source = judged(store, config, sample, FakeBackend(garbage_every=2))
    still = FakeBackend(garbage_every=1)
    summary = asyncio.run(retry_run(store, source, sample, {"fake": still}))
    assert len(still.requests) == ITEMS // 2 and summary.failures == ITEMS // 2
    assert {j.raw_output for j in store.judgments.iter_judgments(source) if j.failed} == {GARBAGE_OUTPUT}


# -- the bundled model ------------------------------------------------------------------------


def test_rescoring_the_bundled_models_run_equals_judging_with_that_top_k(
        store: RunStore, sample: Dataset, llama_backend: Any) -> None:
    """Three items of the real model: top-3 stored, rescored as top-2, against a top-2 run from scratch. (Its
    most likely first token is " N", of "Score: N", so top-1 fails on both sides alike.)"""
    # The bundled model puts about 40% of the probability on "1".."5" here (its likeliest answer is
    # " N"): below the default threshold every judgment would fail on both sides, and compare nothing.
    judge = JudgeConfig(name=llama_backend.name, backend="llama", n_ctx=1024, extra={"min_valid_mass": 0.0})

    def config(top_k: int) -> RunConfig:
        return RunConfig.build(sample, get_template("likert-1to5"), [judge], aspect="overall", quality="overall",
                               mode=ScoringMode.LOGPROB, top_k=top_k, limit=3)

    backends = {llama_backend.name: llama_backend}
    source = asyncio.run(RunEngine(config(3), sample, backends, store, EngineOptions(use_cache=False)).run())
    calls = source.backend_calls
    assert calls == 3
    rescored = rescore_run(store, source.run_id, sample, RescoreSettings(top_k=2))
    scratch = asyncio.run(RunEngine(config(2), sample, backends, store, EngineOptions(use_cache=False)).run())
    assert scratch.backend_calls == 3  # the rescoring itself had no backend to call
    got = {i: j.score for i, j in store.judgments.load_judgments(rescored.run_id)[llama_backend.name].items()}
    want = {i: j.score for i, j in store.judgments.load_judgments(scratch.run_id)[llama_backend.name].items()}
    assert len(got) == 3 and got.keys() == want.keys()
    for item in got:
        assert got[item] is not None and got[item] == pytest.approx(want[item], abs=1e-9)
