"""`dialjudge runs export RUN --to FOLDER`: the files the app's Runs screen writes, from the shell."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.evaluation import evaluate
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.run_columns import run_scores
from dialjudge.core.run_export import FORMAT_LABELS


@pytest.fixture(autouse=True)
def fake_judge_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_fake_judges(tmp_path, monkeypatch, "fa")



def test_export_to_a_folder_writes_what_the_app_writes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "judge", "--judge", "fa", "--template", "likert-1to5", "--aspect", "overall", "--limit", "12", "--no-metrics",
                       "--bootstrap", "0")
    assert code == 0, err
    out_dir = tmp_path / "exports"
    code, _, err = run(capsys, "runs", "export", "1", "--to", str(out_dir))
    assert code == 0, err
    assert sorted(p.name for p in out_dir.iterdir()) == sorted(
        f"run-1-{kind}" for kind in ("agreement.csv", "agreement.json", "agreement.md", "agreement.tex",
                                     "judgments.csv", "judgments.jsonl", "report.html",
                                     # an ordinal quality: its confusion matrix and kappas beside the table
                                     "confusion.csv", "kappa.csv", "diagnostics.json", "diagnostics.md"))
    assert all(str(out_dir / f"run-1-agreement.{ending}") in err for ending in ("csv", "json", "md", "tex"))
    assert len(FORMAT_LABELS) == 7

    # The table holds the coefficients core/evaluation computes from the stored judgments.
    dataset = open_dataset("sample", remember=False)
    with RunStore() as store:
        scores, failures = run_scores(store, 1)
        stored = store.judgments.export_rows(1)
    expected = next(r for r in evaluate(dataset, qualities=["overall"], extra_scores=scores, failures=failures,
                                        include_metrics=False, n_boot=0).records if r["evaluator"] == "fa")
    with (out_dir / "run-1-agreement.csv").open(encoding="utf-8") as f:
        rows = [r for r in csv.DictReader(f) if r["evaluator"] == "fa" and r["subset"] == "all"]
    assert float(rows[0]["spearman"]) == pytest.approx(expected["spearman"])
    assert int(rows[0]["n"]) == expected["n"] == 12
    assert json.loads((out_dir / "run-1-agreement.json").read_text(encoding="utf-8"))["meta"]["run_id"] == 1
    lines = (out_dir / "run-1-judgments.jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["item_id"] for line in lines] == [r["item_id"] for r in stored]


def test_export_chooses_files_and_may_add_the_metrics(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "judge", "--judge", "fa", "--template", "likert-1to5", "--aspect", "overall", "--limit", "6", "--no-metrics",
                       "--bootstrap", "0")
    assert code == 0, err
    code, _, err = run(capsys, "runs", "export", "1", "--to", str(tmp_path / "one"), "--file", "csv",
                       "--with-metrics")
    assert code == 0, err
    assert sorted(p.name for p in (tmp_path / "one").iterdir()) == [
        "run-1-agreement.csv", "run-1-confusion.csv", "run-1-kappa.csv"]
    with (tmp_path / "one" / "run-1-agreement.csv").open(encoding="utf-8") as f:
        evaluators = {r["evaluator"] for r in csv.DictReader(f)}
    assert {"fa", "BLEU-1", "human ceiling"} <= evaluators

    code, _, err = run(capsys, "runs", "export", "1", "--file", "csv")
    assert code != 0 and "--to" in err
