"""`runs export`: the confusion matrices, calibration and inter-judge matrix beside the agreement table,
recomputed here from the exported judgments and the dataset's votes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.dataset_catalogue import open_dataset


@pytest.fixture(autouse=True)
def fake_judge_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_fake_judges(tmp_path, monkeypatch, "fa", "fb")


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def test_a_probability_run_on_a_binary_quality_exports_calibration_and_the_inter_judge_kappa(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "judge", "--dataset", "incar-kpi", "--template", "inca-kpi", "--kpi", "harmful-input",
                       "--mode", "logprob", "--judge", "fa", "--judge", "fb", "--no-metrics", "--bootstrap", "0")
    assert code == 0, err
    out = tmp_path / "exports"
    code, _, err = run(capsys, "runs", "export", "1", "--to", str(out))
    assert code == 0, err
    for name in ("confusion.csv", "kappa.csv", "calibration.csv", "interjudge.csv", "diagnostics.json",
                 "diagnostics.md"):
        assert (out / f"run-1-{name}").is_file() and str(out / f"run-1-{name}") in err

    # The same numbers from the exported judgments and the annotators' votes.
    judgments = [json.loads(line) for line in (out / "run-1-judgments.jsonl").read_text(encoding="utf-8").splitlines()]
    p = {judge: {j["item_id"]: j["normalized"] for j in judgments if j["judge"] == judge} for judge in ("fa", "fb")}
    dataset = open_dataset("incar-kpi", remember=False)
    votes = {ex.id: ex.ratings["harmful-input"].present for ex in dataset if "kpi:harmful-input" in ex.tags}
    human = {i: float(sum(v) / len(v) > 0.5) for i, v in votes.items()}  # 5 annotators: never a tie
    assert set(p["fa"]) == set(human) and len(human) == 15
    ids = sorted(human)
    outcome = np.array([human[i] for i in ids])

    calibration = read_csv(out / "run-1-calibration.csv")
    for judge in ("fa", "fb"):
        predicted = np.array([p[judge][i] for i in ids])
        rows = [r for r in calibration if r["evaluator"] == judge]
        assert float(rows[0]["brier"]) == pytest.approx(float(np.mean((predicted - outcome) ** 2)))
        bins = np.minimum((predicted * 10).astype(int), 9)
        assert [int(r["n"]) for r in rows] == [int((bins == k).sum()) for k in range(10)]
        ece = sum((bins == k).mean() * abs(outcome[bins == k].mean() - predicted[bins == k].mean())
                  for k in range(10) if (bins == k).any())
        assert float(rows[0]["ece"]) == pytest.approx(ece)

    labels = {judge: np.array([float(p[judge][i] > 0.5) for i in ids]) for judge in ("fa", "fb")}
    cells = read_csv(out / "run-1-confusion.csv")
    fa_counts = {(r["judge_label"], r["human_label"]): int(r["count"]) for r in cells if r["evaluator"] == "fa"}
    assert fa_counts == {(str(a), str(b)): int(((labels["fa"] == a) & (outcome == b)).sum())
                         for a in (0, 1) for b in (0, 1)}
    a, b = labels["fa"], labels["fb"]
    observed = float((a == b).mean())
    expected = a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean())
    inter = read_csv(out / "run-1-interjudge.csv")
    assert inter[0]["measure"] == "kappa" and int(inter[0]["n"]) == 15
    assert float(inter[0]["value"]) == pytest.approx((observed - expected) / (1 - expected))
    document = json.loads((out / "run-1-diagnostics.json").read_text(encoding="utf-8"))
    assert document["meta"]["run_id"] == 1
    assert [c["evaluator"] for c in document["results"][0]["calibration"]] == ["fa", "fb"]


def test_a_generate_run_has_no_calibration(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "judge", "--dataset", "incar-kpi", "--template", "inca-kpi", "--kpi", "harmful-input",
                       "--mode", "generate", "--judge", "fa", "--no-metrics", "--bootstrap", "0")
    assert code == 0, err
    code, _, err = run(capsys, "runs", "export", "1", "--to", str(tmp_path / "x"), "--file", "csv")
    assert code == 0, err
    assert sorted(f.name for f in (tmp_path / "x").iterdir()) == [
        "run-1-agreement.csv", "run-1-confusion.csv", "run-1-kappa.csv"]
