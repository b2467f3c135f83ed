"""`dialjudge judge --template pairwise-plain` on pre-paired files (JUDGE-BENCH pairs, MT-Bench human
judgments, a generic CSV): exit 0 and the agreement table with n = the number of pairs, κ, the flip rate
and the humans' length preference, matching core's report."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.judges.post_run.preference_report import (
    agreement_rows,
    implied_preference_report,
    preference_report,
)
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.loaders import load_dataset
from dialjudge.core.stats.preference import compare_agreement

DATA = Path(__file__).parent.parent / "data"


@pytest.fixture(autouse=True)
def fake_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa")


def cells(out: str, who: str) -> list[str]:
    row = next(line for line in out.splitlines() if line.startswith(f"│{who}"))
    return [c.strip() for c in row.split("│")[1:-1]]


@pytest.mark.parametrize("name, pairs", [("judge_bench_pairs.json", 6), ("mt_bench_human.jsonl", 4),
                                         ("pairs_generic.csv", 3)])
def test_the_agreement_table_of_each_format(capsys: pytest.CaptureFixture[str], name: str, pairs: int) -> None:
    path = DATA / name
    code, out, err = run(capsys, "judge", "--dataset", str(path), "--template", "pairwise-plain", "--judge", "fa",
                         "--bootstrap", "200")
    assert code == 0, err
    assert f"pairwise: {pairs} pre-paired pairs with the humans' votes, both orders: {2 * pairs} judgments" in err
    judge, humans = cells(out, "fa "), cells(out, "humans")
    assert judge[1] == humans[1] == str(pairs)
    with RunStore() as store:
        record = store.runs.list_runs()[0]
        report = preference_report(record.run_config, load_dataset(path), store.judgments.load_judgments(record.id),
                                   n_boot=200)
    expected = agreement_rows(report)
    assert tuple(judge) == expected[0] and tuple(humans) == expected[1]
    assert "κ, ties counted" in out and "flip under swap" in out and "longer reply wins" in out
    assert humans[-1] == expected[1][-1] != "–"  # the humans' own longer-reply share
    assert f"{pairs} pairs, asked in both orders" in out


def test_one_order_halves_the_judgments(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--dataset", str(DATA / "judge_bench_pairs.json"), "--template",
                         "pairwise-plain", "--judge", "fa", "--one-order", "--bootstrap", "0")
    assert code == 0, err
    assert "6 pre-paired pairs with the humans' votes, one order each, drawn with seed 0: 6 judgments" in err
    assert cells(out, "fa ")[7] == "–"  # no pair asked in both orders: no flip rate
    assert "6 pairs judged in one order only" in out


def test_the_table_is_written_as_csv(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--dataset", str(DATA / "pairs_generic.csv"), "--template",
                         "pairwise-plain", "--judge", "fa", "--bootstrap", "0", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["who"] for r in rows] == ["fa", "humans (preference)"] and rows[0]["pairs"] == "3"


def test_a_pointwise_run_on_pairs_reports_the_implied_preference_and_the_paired_comparison(
        capsys: pytest.CaptureFixture[str]) -> None:
    path = str(DATA / "judge_bench_pairs.json")
    code, _, err = run(capsys, "judge", "--dataset", path, "--template", "pairwise-plain", "--judge", "fa",
                       "--bootstrap", "0")
    assert code == 0, err
    code, out, err = run(capsys, "judge", "--dataset", path, "--template", "likert-1to5", "--aspect", "overall",
                         "--judge", "fa", "--bootstrap", "100", "--tie-band", "0.1", "--versus-run", "1")
    assert code == 0, err
    with RunStore() as store:
        pointwise, pairwise = sorted(store.runs.list_runs(), key=lambda r: -r.id)[:2]
        dataset = load_dataset(path)
        mine = implied_preference_report(pointwise.run_config, dataset, store.judgments.load_judgments(pointwise.id),
                                         band=0.1, n_boot=100)
        theirs = preference_report(pairwise.run_config, dataset, store.judgments.load_judgments(pairwise.id),
                                   n_boot=100)
    assert len(store_items := mine.judges["fa"].pairs) == 6 and store_items[0].direct is not None
    assert tuple(cells(out, "fa ")) == agreement_rows(mine)[0]
    assert "each reply rated alone (pointwise)" in out and "at most 0.1 (0-1 scale) is a tie" in out
    paired = compare_agreement(mine.judges["fa"].pairs, theirs.judges["fa"].pairs, n_boot=100)
    row = cells(out, "fa (run 2")
    assert row[2] == str(paired.n) == "6"
    assert row[6] == f"{paired.only_x} / {paired.only_y}"


def test_a_negative_tie_band_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--dataset", str(DATA / "pairs_generic.csv"), "--template", "likert-1to5",
                         "--aspect", "overall", "--judge", "fa", "--tie-band", "-1")
    assert code == 2 and "--tie-band must be at least 0" in err
    assert "judging" not in err  # refused before the run
