"""A batch file replayed through llama.cpp's OpenAI-compatible server (tests/batch_replay.py posts each
line and writes the batch output format) and imported: the same answers as a live run of the same judge
through the same server at temperature 0 (text and verdicts identical, probabilities within 0.02)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from batch_replay import replay
from dialjudge.core.api import (
    RunRequest,
    plan_runs,
)
from dialjudge.core.api.batch import import_answers, write_batch
from dialjudge.core.api.judging import judge
from dialjudge.core.api.session import Session
from dialjudge.core.config import Config, JudgeConfig, Sampling
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.run.events import RunStatus
from dialjudge.core.judges.run.options import EngineOptions

ITEMS = 3
#: Probabilities read from two answers of one server to one prompt: equal up to its arithmetic.
TOLERANCE = 0.02

CASES = {
    # Held to the answer format by a grammar (the small model's free text rarely holds a rating).
    "generate": RunRequest(template="likert-1to5", judges=("local",), mode="generate", aspect="overall",
                           quality="overall", limit=ITEMS, constrain="answer"),
    "logprob": RunRequest(template="likert-1to5", judges=("local",), mode="logprob", aspect="overall",
                          quality="overall", limit=ITEMS),
    "pairwise": RunRequest(template="pairwise-plain", judges=("local",), mode="logprob", aspect="overall",
                           quality="overall", limit=ITEMS, pairs="1"),
}


def judgments(session: Session, run_id: int) -> dict[tuple[str, int], Any]:
    with session.store() as store:
        return {(item, j.repeat): j for item, j in store.judgments.load_judgments(run_id)["local"].items()}


@pytest.mark.server
@pytest.mark.parametrize("case", list(CASES))
def test_a_replayed_batch_scores_as_a_live_run(llama_server: str, bundled_model: Path, tmp_path: Path,
                                               case: str) -> None:
    dataset = open_dataset("sample", remember=False)
    judge_config = JudgeConfig(name="local", backend="openai", model="smollm2", base_url=llama_server,
                               endpoint="chat", concurrency=1, timeout=120.0, max_retries=0,
                               sampling=Sampling(max_tokens=16), extra={"chat_template": str(bundled_model),
                                                                  "constrain_with": "grammar",
                                                                  # the small model's ratings hold 30-40%
                                                                  "min_valid_mass": 0.2})
    session = Session(Config(path=None, judges={"local": judge_config}), store_path=tmp_path / "runs.sqlite3")
    request = CASES[case]
    exported = write_batch(session, plan_runs(request, dataset, session.config)[0], dataset, tmp_path / "in.jsonl")
    replay(tmp_path / "in.jsonl", llama_server, tmp_path / "out.jsonl")
    imported = import_answers(session, exported.run_id, [tmp_path / "out.jsonl"], dataset)
    assert imported.status is RunStatus.FINISHED and imported.problems == []

    named = dataclasses.replace(request, name="live")
    # Live, past the response cache (which now holds the batch's answers): every request sent again.
    live = judge(session, plan_runs(named, dataset, session.config), dataset, fresh=True,
                 options=EngineOptions(use_cache=False))
    assert live.summaries[0].cached == 0 and live.summaries[0].backend_calls == exported.total
    batch, direct = judgments(session, exported.run_id), judgments(session, live.run_ids[0])
    assert batch.keys() == direct.keys() and len(batch) == exported.total
    assert any(j.score is not None for j in direct.values())  # the comparison is of scores, not of failures
    for key, answer in direct.items():
        other = batch[key]
        assert (other.error is None) == (answer.error is None), key
        if case == "generate":
            assert (other.raw_output, other.score) == (answer.raw_output, answer.score), key
        else:
            assert other.normalized == pytest.approx(answer.normalized, abs=TOLERANCE), key
            assert other.valid_mass == pytest.approx(answer.valid_mass, abs=TOLERANCE), key
