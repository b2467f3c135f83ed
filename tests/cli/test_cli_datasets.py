"""`dialjudge datasets list|show|stats` and how the command line reports a user's mistake."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run

from shared_data import shared_data_dir


def assert_one_line_error(err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dialjudge: error: "), err
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0]


def test_list_names_bundled_and_data_folder_sets(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "datasets", "list")
    assert code == 0
    rows = {line.split("│")[1].strip(): line for line in out.splitlines() if line.count("│") > 3}
    for name in ("sample", "incar-kpi", "usr-topicalchat", "usr-personachat", "fed", "fed-turn", "fed-dialog"):
        assert name in rows
    assert "bundled" in rows["sample"] and "yes" in rows["sample"]
    if (shared_data_dir() / "usr" / "usr_topical_chat.json").is_file():
        assert "data-folder" in rows["usr-topicalchat"] and "yes" in rows["usr-topicalchat"]


def test_list_without_data_folders_says_how_to_add_them(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "empty.toml"
    config.write_text("", encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    code, out, _ = run(capsys, "datasets", "list")
    assert code == 0
    assert "No data folders configured" in out and "[data] dirs" in out


def test_show_describes_the_sample(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "datasets", "show", "sample")
    assert code == 0
    assert "sample (illustrative)" in out
    assert "60 (60 turn level, 0 dialog level)" in out
    assert "30 open / 30 closed / 0 untagged" in out
    assert "12 (date: 2, place: 3, number: 5, negation: 2)" in out
    assert "ordinal 1–5" in out and "coherence" in out
    assert "retrieval-bot" in out


def test_show_fed_has_dialog_level_qualities(capsys: pytest.CaptureFixture[str], shared_data: Path) -> None:
    if not (shared_data / "fed" / "fed_data.json").is_file():
        pytest.skip("fed/fed_data.json is absent from the shared data folder")
    code, out, _ = run(capsys, "datasets", "show", "fed-dialog")
    assert code == 0
    assert "125 (0 turn level, 125 dialog level)" in out
    assert "Error recovery" in out


def test_stats_prints_the_annotator_agreement(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "datasets", "stats", "incar-kpi")
    assert code == 0
    assert "Annotator agreement — incar-kpi" in out
    assert "Krippendorff α" in out
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    cells = next(row for row in rows if row[0] == "harmful-input")
    assert cells[:5] == ["harmful-input", "turn", "binary 0-1", "15", "5"]
    # A binary quality is a label quality: % agreement (pairs), kappa, the pairs it rests on, then alpha.
    assert 0.0 <= float(cells[5]) <= 100.0 and all(-1.0 <= float(c) <= 1.0 for c in (cells[6], cells[8]))
    pairs, raters, items = (int(n) for n in cells[7].split(" / "))
    assert pairs == 10 and raters == 5 and items == 15  # five annotators on all 15 items: every pair counts


def test_stats_gives_the_graded_pairwise_spearman_of_scipy_with_n_and_ci(
        capsys: pytest.CaptureFixture[str], shared_data: Path) -> None:
    """USR Topical-Chat's Overall: five annotators in rotating triples (10 pairs); the column is the mean
    of scipy's ρ over the pairs, weighted by their shared items, recomputed here from the raw file."""
    import json

    import numpy as np
    from scipy import stats

    path = shared_data / "usr" / "usr_topical_chat.json"
    if not path.is_file():
        pytest.skip("usr/usr_topical_chat.json is absent from the shared data folder")
    votes: dict[str, dict[int, float]] = {}
    item = 0
    for context in json.loads(path.read_text("utf-8")):
        for response in context["responses"]:
            for name, score in zip(context["annotators"], response["Overall"], strict=True):
                votes.setdefault(name, {})[item] = float(score)
            item += 1
    rhos, weights = [], []
    names = sorted(votes)
    for k, first in enumerate(names):
        for second in names[k + 1:]:
            shared = sorted(set(votes[first]) & set(votes[second]))
            rhos.append(stats.spearmanr([votes[first][i] for i in shared], [votes[second][i] for i in shared])[0])
            weights.append(len(shared))
    code, out, _ = run(capsys, "datasets", "stats", str(path))
    assert code == 0
    header = next(line for line in out.splitlines() if "pairwise Spearman" in line and line.startswith("┃"))
    columns = [c.strip() for c in header.split("┃")[1:-1]]
    rows = [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]
    cells = dict(zip(columns, next(row for row in rows if row[0] == "Overall"), strict=True))
    value, interval = cells["pairwise Spearman"].split(" ", 1)
    assert float(value) == pytest.approx(np.average(rhos, weights=weights), abs=5e-4)
    low, high = (float("0" + bound) for bound in interval.strip("[]").split(","))
    assert low < float(value) < high  # its 95% CI, a bootstrap of whole contexts
    assert cells["pairs / raters / items"] == f"10 / 5 / {item}"
    assert cells["LOO raters / items"] == f"5 / {item}"


def test_a_path_works_and_is_then_listed_as_recent(capsys: pytest.CaptureFixture[str]) -> None:
    tiny = Path(__file__).resolve().parents[1] / "data" / "tiny_native.jsonl"
    code, out, _ = run(capsys, "datasets", "show", str(tiny))
    assert code == 0 and "tiny-zh" in out
    _, listing, _ = run(capsys, "datasets", "list")
    assert "recent" in listing and "tiny_native.jsonl" in listing


@pytest.mark.parametrize("argv", [
    ("datasets", "show", "usr-topical"),
    ("datasets", "stats", "no/such/file.jsonl"),
])
def test_unknown_dataset_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert_one_line_error(err, f"no dataset named {argv[-1]!r}", "sample", "usr-topicalchat")


def test_a_broken_config_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[judges.x]\nbackend = 'fake'\ncolour = 'red'\n", encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    code, _, err = run(capsys, "datasets", "list")
    assert code == 2
    assert_one_line_error(err, str(config), "unknown key judges.x.colour")
