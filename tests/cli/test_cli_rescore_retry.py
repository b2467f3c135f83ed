"""`dialjudge runs rescore`, `runs retry`, and cost and latency in `runs show` (fake judges)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.core.judges.store.run_store import RunStore

CONFIG = """
[prices."gpt-4o-mini"]
input_per_million = 0.15
output_per_million = 0.6

[judges.fa]
backend = "fake"
model = "fake-a"

[judges.flaky]
backend = "fake"
model = "fake-flaky"
options = { garbage_every = 3 }
"""

JUDGE = ("judge", "--template", "likert-1to5", "--aspect", "overall", "--limit", "6", "--bootstrap", "20",
         "--no-metrics")


@pytest.fixture(autouse=True)
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "dialjudge.toml"
    path.write_text(CONFIG, encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(path))
    return path


def scores(run_id: int) -> dict[str, float | None]:
    with RunStore() as store:
        return {j.item_id: j.score for j in store.judgments.iter_judgments(run_id)}


def test_rescore_makes_a_new_run_that_names_its_source(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, *JUDGE, "--judge", "fa", "--mode", "logprob", "--top-k", "3")
    assert code == 0, err
    code, out, err = run(capsys, "runs", "rescore", "1", "--top-k", "1", "--name", "top1")
    assert code == 0, err
    assert "run 2: run 1 rescored (top-1), no model called; 6 judgments, 0 without a score" in " ".join(out.split())

    code, _, err = run(capsys, *JUDGE, "--judge", "fa", "--mode", "logprob", "--top-k", "1")
    assert code == 0, err
    assert scores(2) == pytest.approx(scores(3))  # rescored = judged from scratch with top-1

    code, out, _ = run(capsys, "runs", "list")
    assert "top1 (from run 1)" in out
    code, out, _ = run(capsys, "runs", "show", "2")
    flat = " ".join(out.split())
    assert "rescored from run 1 (top_k 1)" in flat
    assert "6 answers reused (no call)" in flat
    assert "Cost and latency of run 2" in flat


def test_rescore_mistakes_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, *JUDGE, "--judge", "fa", "--mode", "logprob", "--top-k", "3")[0] == 0
    code, _, err = run(capsys, "runs", "rescore", "1")
    assert code == 2 and "say what to change" in err
    code, _, err = run(capsys, "runs", "rescore", "1", "--map", "1=0,2=x")
    assert code == 2 and "the value of '2' is not a number" in err
    code, _, err = run(capsys, "runs", "rescore", "1", "--top-k", "9")
    assert code == 2 and "top-K up to 5 only" in err


def test_retry_asks_again_for_the_failed_judgments_only(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, *JUDGE, "--judge", "flaky", "--mode", "generate")
    before = scores(1)
    failed = sorted(item for item, score in before.items() if score is None)
    assert len(failed) == 2  # requests 3 and 6 answered garbage

    code, out, err = run(capsys, "runs", "retry", "1")
    assert code == 0, err
    assert "2 of 2 failed judgments now scored, 0 still without a score" in " ".join(out.split())
    after = scores(1)
    assert all(score is not None for score in after.values())
    assert {item: after[item] for item in before if item not in failed} == \
        {item: score for item, score in before.items() if item not in failed}


def test_runs_show_prices_api_judges_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, *JUDGE, "--judge", "fa", "--mode", "generate")[0] == 0
    code, out, _ = run(capsys, "runs", "show", "1")
    flat = " ".join(out.split())
    assert code == 0 and "items/s" in flat and "prompt + " in flat
    assert "est. cost" not in flat.split("Cost and latency of run 1")[0]  # a fake judge is not priced
