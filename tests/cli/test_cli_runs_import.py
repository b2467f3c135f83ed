"""`dialjudge runs import`: a native run exported and imported again is the same run to the last digit."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.compare import compare_runs
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.evaluation import evaluate
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.run_columns import run_scores

FILES = Path(__file__).resolve().parents[1] / "data" / "imports"


@pytest.fixture(autouse=True)
def fake_judge_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_fake_judges(tmp_path, monkeypatch, "fa", "fb")


def test_export_then_import_gives_the_same_agreement_to_the_last_digit(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "judge", "--judge", "fa", "--judge", "fb", "--template", "likert-1to5", "--aspect",
                       "overall", "--limit", "30", "--no-metrics", "--bootstrap", "0")
    assert code == 0, err
    exported = tmp_path / "run-1.jsonl"
    code, _, err = run(capsys, "runs", "export", "1", "--format", "jsonl", "--output", str(exported))
    assert code == 0, err
    code, out, err = run(capsys, "runs", "import", str(exported), "--dataset", "sample", "--quality", "overall")
    assert code == 0, err
    assert "dialjudge format, 60 scores, judges: fa, fb" in out
    assert "matched 60 of 60 scores to 30 of 60 items" in out
    assert "run 2: imported from run-1.jsonl (dialjudge), kind imported" in out

    dataset = open_dataset("sample", remember=False)
    with RunStore() as store:
        assert store.runs.get_run(2).kind == "imported" and store.runs.get_run(1).kind == "judged"
        comparison = compare_runs(store, 1, 2, dataset=dataset, paired_boot=200)
        tables = [evaluate(dataset, qualities=["overall"], extra_scores=run_scores(store, r)[0],
                           failures=run_scores(store, r)[1], include_metrics=False, n_boot=0).records
                  for r in (1, 2)]
        assert store.judgments.export_rows(1)[0].keys() == store.judgments.export_rows(2)[0].keys()
        assert [{k: v for k, v in row.items() if k not in ("run_id", "created", "cache_key")}
                for row in store.judgments.export_rows(1)] == \
               [{k: v for k, v in row.items() if k not in ("run_id", "created", "cache_key")}
                for row in store.judgments.export_rows(2)]
    assert tables[0] == tables[1]  # every coefficient, n and p-value, exactly
    assert comparison.deltas and all(d.change == 0.0 for d in comparison.deltas if d.change is not None)
    assert comparison.paired and all(est.delta == 0.0 for p in comparison.paired for est in p.deltas.values())

    code, out, err = run(capsys, "runs", "compare", "1", "2", "--bootstrap", "200")
    assert code == 0, err
    assert "no clear difference between run 1 fa and run 2 fa" in out.replace("\n", " ")

    # The answers came along: the imported run rescores like the native one.
    code, out, err = run(capsys, "runs", "rescore", "2", "--top-k", "0", "--name", "again")
    assert code == 0, err
    assert "run 3: run 2 rescored" in out and "0 changed" in out

    code, out, _ = run(capsys, "runs", "show", "2")
    assert "imported from" in out and "run-1.jsonl (dialjudge format" in out


def test_import_prints_what_matched_and_refuses_under_strict(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "runs", "import", str(FILES / "wide.csv"), "--dataset", "sample", "--strict")
    assert code == 2 and "--strict" in err
    assert "rows matching no item: 1 — line 6 (no-such-item)" in out
    with RunStore() as store:
        assert store.runs.list_runs() == []
    code, out, err = run(capsys, "runs", "import", str(FILES / "ten_point.csv"), "--dataset", "sample",
                         "--scale", "1-10", "--name", "ten")
    assert code == 0, err
    assert "scale: 1-10 mapped linearly onto 1-5" in out and "values outside the scale: 1" in out
    code, out, _ = run(capsys, "runs", "list")
    assert "ten (imported)" in out


def test_importing_a_file_again_shows_the_run_it_made(capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 33: the same bytes imported again with the same settings made a second run."""
    args = ("runs", "import", str(FILES / "ten_point.csv"), "--dataset", "sample", "--scale", "1-10")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "run 1: imported from ten_point.csv" in out
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "run 1 was imported from these bytes of ten_point.csv with these settings: shown again" in out
    with RunStore() as store:
        assert [r.id for r in store.runs.list_runs()] == [1]
    code, out, err = run(capsys, *args, "--name", "copy")
    assert code == 0 and "run 2: imported from ten_point.csv" in out, err
