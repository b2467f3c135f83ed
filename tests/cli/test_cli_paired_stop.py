"""`dialjudge runs compare` prints paired verdict lines; `dialjudge judge` stops on a stop rule (fake judges)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.compare import compare_runs
from dialjudge.core.judges.store.run_store import RunStore


@pytest.fixture(autouse=True)
def fake_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_fake_judges(tmp_path, monkeypatch, "fa", "fb")



JUDGE = ("judge", "--aspect", "coherence", "--bootstrap", "50", "--no-metrics")


def test_runs_compare_prints_the_paired_table_and_a_verdict_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, *JUDGE, "--judge", "fa")[0] == 0
    assert run(capsys, *JUDGE, "--judge", "fb")[0] == 0
    code, out, err = run(capsys, "runs", "compare", "1", "2", "--bootstrap", "300")
    assert code == 0, err
    text = " ".join(out.split())
    assert "Paired comparison (CI: 300 bootstrap resamples of contexts" in text
    with RunStore() as store:
        comparison = compare_runs(store, 1, 2, paired_boot=300)
    (paired,) = comparison.paired
    assert (paired.name_a, paired.name_b, paired.n_items, paired.n_groups) == ("run 1 fa", "run 2 fb", 60, 12)
    # The paired Δ is B's coefficient minus A's, the same numbers as the plain delta table.
    spearman = next(d for d in comparison.deltas if d.coefficient == "spearman" and d.evaluator == "fa")
    assert paired.delta("spearman").a == pytest.approx(spearman.before)
    assert paired.verdict() in text
    assert "n = 60 items in 12 contexts" in paired.verdict()


def test_judge_stops_on_the_ci_width_rule_and_resumes_to_the_end(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *JUDGE, "--judge", "fa", "--stop-when-ci-width", "1.99", "--check-every", "1")
    assert code == 0, err
    assert "stop rule, 50 items in 10 contexts: enough evidence: CI of ρ narrower than 1.99" in " ".join(err.split())
    assert "run 1 stopped by the stop rule after 50 items in 10 contexts" in " ".join(err.split())
    with RunStore() as store:
        # Requests already in flight when the rule decided (the fake judge runs 4 at once) are kept.
        assert store.runs.get_run(1).status == "cancelled" and 50 <= store.judgments.count_judgments(1) < 60
    code, out, err = run(capsys, *JUDGE, "--judge", "fa")
    assert code == 0, err
    assert "Run 1 (finished" in err
    with RunStore() as store:
        assert store.judgments.count_judgments(1) == 60


def test_a_stop_rule_without_a_target_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, *JUDGE, "--judge", "fa", "--stop-when-ci-width", "0")
    assert code == 2 and "CI width must be positive" in err


def test_two_judges_print_the_inter_judge_matrix_before_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *JUDGE, "--judge", "fa", "--judge", "fb")
    assert code == 0, err
    text = " ".join(out.split())
    assert text.index("Inter-judge agreement (Spearman ρ on items both scored)") < text.index("Judges and metrics")
    assert "fa │ 1.000 (n=60) │" in text
