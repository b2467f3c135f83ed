"""`dialjudge leaderboard` on the bundled sample with a pointwise and a pairwise fake-judge run: every run
on the dataset and quality when none is named, the pairwise judge's bias card, the method under the table,
and the exports with the numbers the use case computes."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.api import (
    LeaderboardRequest,
    Session,
    leaderboard,
)
from dialjudge.core.api.leaderboards import table_rows


@pytest.fixture(autouse=True)
def fake_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa")


def judge_both(capsys: pytest.CaptureFixture[str]) -> None:
    common = ("--judge", "fa", "--aspect", "coherence", "--no-metrics", "--bootstrap", "0")
    assert run(capsys, "judge", "--template", "adv-0to1", *common)[0] == 0
    assert run(capsys, "judge", "--template", "pairwise-plain", "--mode", "pairwise", "--pairs", "2", *common)[0] == 0


def test_the_table_ranks_every_run_and_names_the_method(capsys: pytest.CaptureFixture[str],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    judge_both(capsys)
    monkeypatch.setenv("COLUMNS", "240")
    code, out, err = run(capsys, "leaderboard", "--dataset", "sample", "--quality", "coherence", "--no-metrics",
                         "--bootstrap", "0")
    assert code == 0, err
    lines = out.splitlines()
    row = next(line for line in lines if "run 2 fa:winrate" in line)
    cells = [c.strip() for c in row.strip("│").split("│")]
    # The pairwise judge shows its flip rate and first-position share.
    header = next(line for line in lines if "evaluator" in line and "flip" in line)
    names = [c.strip() for c in header.strip("┃").split("┃")]
    assert cells[names.index("flip")].endswith("%") and cells[names.index("1st")].endswith("%")
    assert any("run 1 fa " in line for line in lines) and any("human ceiling" in line for line in lines)
    text = " ".join(out.split())
    for fragment in ("paired permutation test over contexts", "Holm", "greedy rule of mt-metrics-eval",
                     "net votes over both orders"):
        assert fragment in text
    # The same rows as the use case gives (digit for digit).
    board = leaderboard(Session(), LeaderboardRequest("sample", "coherence", metrics=False, n_boot=0))
    for expected in table_rows(board):
        assert any([c.strip() for c in line.strip("│").split("│")] == list(expected) for line in lines), expected


def test_csv_export_has_one_row_per_evaluator(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    judge_both(capsys)
    target = tmp_path / "board.csv"
    code, out, err = run(capsys, "leaderboard", "--dataset", "sample", "--quality", "coherence", "--no-metrics",
                         "--format", "csv", "--output", str(target), "--bootstrap", "100")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert [r["evaluator"] for r in rows][-1] == "human ceiling"
    assert {"run 1 fa", "run 2 fa:winrate", "response length", "random scorer (seed 0)"} <= {r["evaluator"] for r in rows}
    pairwise = next(r for r in rows if r["evaluator"] == "run 2 fa:winrate")
    assert pairwise["flip_rate"] != "" and pairwise["template_hash"] and pairwise["ci_low"] != ""


def test_a_bad_level_is_an_argparse_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "leaderboard", "--dataset", "sample", "--quality", "coherence", "--level", "corpus")
