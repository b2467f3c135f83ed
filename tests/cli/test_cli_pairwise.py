"""`dialjudge judge --mode pairwise` with a fake judge on the bundled sample: the pair count first, then
the pairwise report and the win-rate and Bradley-Terry columns, matching core's numbers."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.post_run.pairwise_report import pairwise_report, share_text
from dialjudge.core.judges.store.run_store import RunStore

PAIRWISE = ("judge", "--judge", "fa", "--template", "pairwise-plain", "--mode", "pairwise", "--pairs", "2",
            "--pair-seed", "3", "--limit", "20", "--no-metrics", "--bootstrap", "50")


@pytest.fixture(autouse=True)
def fake_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa")


def test_pairwise_run_prints_the_pair_count_then_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *PAIRWISE)
    assert code == 0, err
    # 20 items of the sample = 4 contexts of 5 candidates; 2 pairs each, both orders.
    assert err.splitlines()[0] == ("pairwise: 8 pairs of 20 candidates in 4 contexts (up to 2 pairs per context "
                                   "drawn with seed 3), both orders: 16 judgments per judge")
    assert err.index("pairwise: 8 pairs") < err.index("judging")  # before the run starts

    with RunStore() as store:
        record = store.runs.list_runs()[0]
        report = pairwise_report(record.run_config, open_dataset("sample"), store.judgments.load_judgments(record.id))
    judge = report.judges["fa"]
    row = next(line for line in out.splitlines() if line.startswith("│fa "))
    cells = [c.strip() for c in row.split("│")[1:-1]]
    assert cells[3] == share_text(judge.position.flips, judge.position.both_orders)
    assert cells[4] == share_text(judge.position.first_wins, judge.position.first_wins + judge.position.second_wins)
    assert cells[6] == share_text(judge.length.longer_wins, judge.length.n)
    assert judge.accuracy is not None and cells[7] == share_text(judge.accuracy.correct, judge.accuracy.n)
    assert "humans (overall)" in out
    assert "fa:bt: Spearman with overall ρ = " in out
    assert "│fa:winrate" in out and "│fa:bt" in out and "human ceiling" in out


def test_pairwise_columns_are_written_like_any_agreement_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, *PAIRWISE, "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    evaluators = {r["evaluator"] for r in rows}
    assert {"fa:winrate", "fa:bt"} <= evaluators


@pytest.mark.parametrize("argv, fragment", [
    (("--template", "likert-1to5", "--aspect", "overall", "--mode", "pairwise"), "needs a pairwise template"),
    (("--template", "pairwise-plain", "--mode", "pairwise", "--pairs", "0"), "pairs must be 'all' or a number"),
    (("--template", "pairwise-plain", "--mode", "pairwise", "--fewshot", "random:2"), "pairwise runs are zero-shot"),
    (("--template", "pairwise-plain", "--mode", "pairwise", "--stop-when-ci-width", "0.2"), "judges pairs of items"),
])
def test_pairwise_mistakes_are_one_line_with_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                                    fragment: str) -> None:
    code, out, err = run(capsys, "judge", "--judge", "fa", *argv)
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], err


def test_help_documents_the_pairwise_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "judge", "--help")
    text = " ".join(capsys.readouterr().out.split())
    for option in ("pairwise", "--pairs all|N", "--pair-seed", "--one-order", "--pair-scoring"):
        assert option in text
