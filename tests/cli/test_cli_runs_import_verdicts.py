"""`dialjudge runs import` of pairwise verdicts on pre-paired data: the import prints what matched and the
agreement table, and a native pairwise run compares with the imported one (`judge --versus-run`)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

DATA = Path(__file__).resolve().parents[1] / "data"
PAIRS = str(DATA / "judge_bench_pairs.json")


@pytest.fixture(autouse=True)
def fake_judge_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_fake_judges(tmp_path, monkeypatch, "fa")


def _cells(out: str, who: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.strip("│ ").startswith(who))
    return [cell.strip() for cell in line.strip().strip("│").split("│")]


def test_verdicts_import_prints_the_problems_and_the_agreement_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "runs", "import", str(DATA / "imports" / "pair_verdicts.csv"), "--dataset", PAIRS)
    assert code == 0, err
    assert "pair_verdicts.csv: verdicts format, 17 scores, judges: alpha, beta" in out
    assert "matched 15 of 17 scores to 6 of 6 items" in out
    assert "rows matching no item: 1 — line 17 (p9)" in out
    assert "verdicts without the reply shown first (taken as reply A first): 1 — line 18 (p3, beta)" in out
    alpha = _cells(out, "alpha")
    # Hand-counted (tests/imports/test_import_verdicts.py): 6/6 with ties, 4/4 without, p3 flips,
    # the reply shown first wins 6 of 10 decisive orders.
    assert alpha[2].startswith("100.0% (4/4)") and alpha[4].startswith("100.0% (6/6)")
    assert alpha[7] == "16.7% (1/6)" and alpha[8] == "60.0% (6/10)"
    assert "run 1: imported from pair_verdicts.csv (verdicts), kind imported" in out

    code, out, err = run(capsys, "judge", "--dataset", PAIRS, "--template", "pairwise-plain", "--judge", "fa",
                         "--versus-run", "1")
    assert code == 0, err
    assert "Same pairs, two ways of judging" in out and "alpha" in out


def test_strict_refuses_the_verdicts_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "runs", "import", str(DATA / "imports" / "pair_verdicts.csv"), "--dataset", PAIRS,
                         "--strict")
    assert code != 0
    assert "--strict" in err and "line 17 (p9)" in err


def test_a_native_pairwise_run_exported_and_imported_gives_the_same_preference_report(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from dialjudge.core.api import PreferenceRequest
    from dialjudge.core.api.preferences import stored_preference_report
    from dialjudge.core.judges.store.run_store import RunStore
    from dialjudge.core.loaders import load_dataset

    code, native_out, err = run(capsys, "judge", "--dataset", PAIRS, "--template", "pairwise-plain", "--judge", "fa")
    assert code == 0, err
    exported = tmp_path / "run-1.jsonl"
    code, _, err = run(capsys, "runs", "export", "1", "--format", "jsonl", "--output", str(exported))
    assert code == 0, err
    code, out, err = run(capsys, "runs", "import", str(exported), "--dataset", PAIRS)
    assert code != 0 and "--template" in err  # the export does not name its template: the user gives it
    code, out, err = run(capsys, "runs", "import", str(exported), "--dataset", PAIRS, "--template", "pairwise-plain")
    assert code == 0, err
    assert "matched 12 of 12 scores to 6 of 6 items" in out
    # The printed row of the judge: the same cells, intervals included.
    assert _cells(out, "fa") == _cells(native_out, "fa")
    dataset = load_dataset(DATA / "judge_bench_pairs.json")
    with RunStore() as store:
        assert store.runs.get_run(2).kind == "imported"
        native, imported = (stored_preference_report(store, r, dataset, PreferenceRequest(n_boot=200, seed=1))
                            for r in (1, 2))
    mine, theirs = native.judges["fa"], imported.judges["fa"]
    assert (theirs.with_ties, theirs.without_ties, theirs.order, theirs.tie_calibrated) == (
        mine.with_ties, mine.without_ties, mine.order, mine.tie_calibrated)
    assert theirs.pairs == mine.pairs and (theirs.missing, theirs.failed) == (0, 0)
