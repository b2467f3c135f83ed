"""`dialjudge jury`, `dialjudge cascade` and `leaderboard --jury` on fake-judge runs of the bundled sample:
the tables print the use cases' numbers digit for digit, a failing member abstains, the tie rule and the
cost are said, and bad input is a message (exit 2), never a traceback."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.core.api import Session
from dialjudge.core.api.cascade import CascadeRequest, cascade_rows, run_cascade
from dialjudge.core.api.jury import JuryRequest, jury_rows, load_panel, run_jury
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.model import Aggregation

#: Three simulated judges of the sample's coherence ratings; the third answers nonsense every 4th time.
JUDGES = """
[judges.s1]
backend = "fake"
model = "s1"
options = { agreement = 0.6, dataset = "sample", quality = "coherence" }
[judges.s2]
backend = "fake"
model = "s2"
options = { agreement = 0.5, dataset = "sample", quality = "coherence" }
[judges.s3]
backend = "fake"
model = "s3"
options = { agreement = 0.4, dataset = "sample", quality = "coherence", garbage_every = 4 }
"""


@pytest.fixture(autouse=True)
def simulated_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "dialjudge.toml"
    config.write_text(JUDGES, encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    monkeypatch.setenv("COLUMNS", "220")


def judge_three(capsys: pytest.CaptureFixture[str], mode: str = "logprob") -> None:
    for judge in ("s1", "s2", "s3"):
        code, _, err = run(capsys, "judge", "--dataset", "sample", "--judge", judge, "--aspect", "coherence",
                           "--template", "likert-1to5", "--mode", mode, "--no-metrics", "--bootstrap", "0")
        assert code == 0, err


def body_rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("│").split("│")] for line in text.splitlines()
            if line.strip().startswith("│")]


def test_a_jury_prints_the_use_cases_rows_and_a_failing_member_abstains(capsys: pytest.CaptureFixture[str]) -> None:
    judge_three(capsys)
    code, out, err = run(capsys, "jury", "1", "2", "3", "--bootstrap", "100")
    assert code == 0, err
    report = run_jury(Session(), JuryRequest(("1", "2", "3"), n_boot=100))
    expected = jury_rows(report)
    assert body_rows(out) == [list(r) for r in expected]
    # The third member failed on a quarter of its items; the jury still judged every item.
    assert report.rows[2].abstained == 15 and report.jury.abstained == 0
    assert report.jury.points.n == 60 and report.jury.calls == 180
    text = " ".join(out.split())
    assert "a tie goes to the tied point nearest the mean of the tied points" in text
    assert f"({report.ties} ties)" in text
    assert "selective trust" in text


def test_learned_weights_from_a_labels_file_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    judge_three(capsys, mode="generate")
    dataset = open_dataset("sample", remember=False)
    labels = tmp_path / "labels.csv"
    rows = ["item_id,label"] + [f"{ex.id},{round(ex.human('coherence', Aggregation.MEAN))}"
                                for ex in dataset.examples[:40]]
    labels.write_text("\n".join(rows) + "\n", encoding="utf-8")
    code, out, err = run(capsys, "jury", "1,2", "3", "--method", "learned", "--labels", str(labels),
                         "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert [r["evaluator"] for r in data["rows"]][-1] == "jury learned (1 s1, 2 s2, 3 s3)"
    assert any("cross-fitted over context folds" in line and "40 labels from a file" in line
               for line in data["method"])
    assert all(0.0 <= r["point_agreement"] <= 1.0 for r in data["rows"])


def test_bad_jury_input_is_a_message(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    judge_three(capsys, mode="generate")
    code, _, err = run(capsys, "jury", "1")
    assert code == 2 and "at least 2 judges" in err
    code, _, err = run(capsys, "jury", "1", "two")
    assert code == 2 and "RUN or RUN:JUDGE" in err
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,label\nsample-c01-ref,good\n", encoding="utf-8")
    code, _, err = run(capsys, "jury", "1", "2", "--labels", str(bad))
    assert code == 2 and "record 1" in err and "'label'" in err
    # A cascade needs answer probabilities: generate mode has none.
    code, _, err = run(capsys, "cascade", "1", "2")
    assert code == 2 and "no answer probabilities" in err


def test_a_cascade_prints_its_coverage_agreement_and_cost(capsys: pytest.CaptureFixture[str],
                                                         tmp_path: Path) -> None:
    judge_three(capsys)
    # Calibration labels on half the contexts: the strong judge's own points (it agrees with them), so that
    # both thresholds exist and the cascade decides items; it is then checked on the other contexts.
    dataset = open_dataset("sample", remember=False)
    groups = sorted({ex.group_id for ex in dataset.examples})[:6]
    strong = strong_points("1")
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,label\n" + "".join(f"{ex.id},{strong[ex.id]:g}\n" for ex in dataset.examples
                                                  if ex.group_id in groups), encoding="utf-8")
    code, out, err = run(capsys, "cascade", "2", "1", "--target", "0.6", "--delta", "0.2", "--labels", str(labels))
    assert code == 0, err
    result = run_cascade(Session(), CascadeRequest("2", "1", target=0.6, delta=0.2, labels_file=labels))
    assert body_rows(out) == [list(r) for r in cascade_rows(result)]
    assert result.thresholds.strong.threshold is not None
    assert result.n_checked == sum(1 for ex in dataset.examples if ex.group_id not in groups)
    assert sum(result.decided_by.values()) == result.n_checked
    assert result.escalated == result.n_checked - result.decided_by["cheap"]
    assert result.decided_by["strong"] > 0 and result.agreement.n == result.n_checked - result.decided_by["abstain"]
    assert result.tokens_cascade is not None and result.tokens_strong_alone is not None
    text = " ".join(out.split())
    assert "for the strong judge alone" in text and "Trust or Escalate" in text


def strong_points(run_id: str) -> dict[str, int]:
    """Run ``run_id``'s judge's score of every item as a point of the 1-5 scale (halves up, as the jury reads it)."""
    with Session().store() as store:
        member = load_panel(store, [run_id, "2"]).members[0]
    return {i: 1 + math.floor(4 * v + 0.5) for i, v in member.scores.items() if not math.isnan(v)}


def test_the_leaderboard_ranks_a_jury(capsys: pytest.CaptureFixture[str]) -> None:
    judge_three(capsys, mode="generate")
    code, out, err = run(capsys, "leaderboard", "--dataset", "sample", "--quality", "coherence", "--no-metrics",
                         "--bootstrap", "0", "--jury", "1,2,3", "--jury-method", "mean")
    assert code == 0, err
    row = next(r for r in body_rows(out) if len(r) > 2 and r[2].startswith("jury mean"))
    assert row[2] == "jury mean (1 s1, 2 s2, 3 s3)" and row[3] != "–" and row[4] == "60/12"


def test_a_live_cascade_asks_the_strong_judge_where_needed_and_prints_the_calls_saved(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    judge_three(capsys)
    dataset = open_dataset("sample", remember=False)
    groups = sorted({ex.group_id for ex in dataset.examples})[:6]
    strong = strong_points("1")
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,label\n" + "".join(f"{ex.id},{strong[ex.id]:g}\n" for ex in dataset.examples
                                                  if ex.group_id in groups), encoding="utf-8")
    code, out, err = run(capsys, "cascade", "2", "--strong-judge", "s1", "--target", "0.6", "--delta", "0.2",
                         "--labels", str(labels), "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["strong_run"] == 4 and data["items"] == 60
    assert data["strong_calls_saved"] == 60 - data["asked_calibration"] - data["asked_checked"]
    assert any("strong-judge calls saved" in line for line in data["method"])
    # The table is the stored-run cascade's on the cheap run and the strong judge's new run.
    code, live_out, err = run(capsys, "cascade", "2", "--strong-judge", "s1", "--target", "0.6", "--delta", "0.2",
                              "--labels", str(labels))
    assert code == 0, err
    stored = run_cascade(Session(), CascadeRequest("2", "4", target=0.6, delta=0.2, labels_file=labels))
    assert body_rows(live_out) == [list(r) for r in cascade_rows(stored)]
    code, _, err = run(capsys, "cascade", "2")
    assert code == 2 and "--strong-judge" in err
    code, _, err = run(capsys, "cascade", "2", "1", "--strong-judge", "s1")
    assert code == 2 and "one of the two" in err
    code, _, err = run(capsys, "cascade", "2", "1", "--mode", "yesno")
    assert code == 2 and "--strong-judge" in err
