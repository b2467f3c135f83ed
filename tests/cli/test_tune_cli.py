"""`dialjudge tune` in-process, with fake judges on the bundled sample."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.judges.prompts.templates import load_template_file, user_template_dir

SPACE = """
[search]
quality = "overall"
first_sample = 2
finalists = 2
n_boot = 100
[defaults]
template = "likert-1to5"
aspect = "overall"
judge = "fa"
mode = "logprob"
[[variant]]
name = "plain"
[grid]
persona = ["calibrated-annotator", "strict-fact-checker"]
fewshot = ["none", "random:2"]
"""


@pytest.fixture
def space(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    use_fake_judges(tmp_path, monkeypatch, "fa")
    path = tmp_path / "space.toml"
    path.write_text(SPACE, encoding="utf-8")
    return path


def test_tune_prints_progress_and_exports_json(space: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "tune", "--dataset", "sample", "--space", str(space), "--budget", "200",
                         "--format", "json")
    assert code == 0, err
    assert "round 1: 5 variants" in err and "held-out" in err
    report = json.loads(out)
    assert report["spent"] <= 200 and report["budget"] == 200
    assert report["leaderboard"][0]["variant"] == report["winner"]
    assert len(report["leaderboard"]) == 5 and report["baseline"] == "plain"
    heldout = {r["variant"]: r for r in report["heldout"]}
    assert report["winner"] in heldout and "plain" in heldout
    assert set(report["split"]["tuning"]).isdisjoint(report["split"]["heldout"])
    for row in heldout.values():
        if row["tuning"] is not None and row["held_out"] is not None:
            assert row["gap"] == pytest.approx(row["tuning"] - row["held_out"])
    stored = list((user_template_dir().parent / "searches").glob("*.json"))
    assert len(stored) == 1 and json.loads(stored[0].read_text())["split"] == report["split"]


def test_tune_writes_csv_and_saves_the_winner(space: Path, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    out_path = tmp_path / "report.csv"
    code, _out, err = run(capsys, "tune", "--dataset", "sample", "--space", str(space), "--format", "csv",
                          "--out", str(out_path), "--save-winner", "sample-tuned", "--seed", "3")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out_path.read_text(encoding="utf-8"))))
    assert {r["table"] for r in rows} == {"tuning", "held-out"}
    saved = user_template_dir() / "sample-tuned.toml"
    assert saved.is_file() and load_template_file(saved).name == "sample-tuned"
    assert "sample-tuned" in err


def test_tune_names_the_bad_key(space: Path, capsys: pytest.CaptureFixture[str]) -> None:
    space.write_text(SPACE.replace("first_sample = 2", "first_samples = 2"), encoding="utf-8")
    code, _out, err = run(capsys, "tune", "--dataset", "sample", "--space", str(space))
    assert code == 2 and "search.first_samples" in err
