"""`dialjudge runs list`: the aspect/KPI column, and a tuning search's runs folded under one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges
from test_tune_cli import SPACE

from dialjudge.core.api.stored import list_runs
from dialjudge.core.config import user_data_dir
from dialjudge.core.format import number_text
from dialjudge.core.judges.store.run_store import RunStore


@pytest.fixture
def searched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> dict:
    """A judge run of its own, then a tuning search; the search's stored record."""
    use_fake_judges(tmp_path, monkeypatch, "fa")
    code, _, err = run(capsys, "judge", "--judge", "fa", "--template", "likert-1to5", "--aspect", "coherence",
                       "--limit", "10", "--no-metrics", "--bootstrap", "0")
    assert code == 0, err
    space = tmp_path / "space.toml"
    space.write_text(SPACE, encoding="utf-8")
    code, _, err = run(capsys, "tune", "--dataset", "sample", "--space", str(space), "--budget", "200",
                       "--format", "json")
    assert code == 0, err
    (record,) = (user_data_dir() / "searches").glob("*.json")
    return json.loads(record.read_text(encoding="utf-8"))


def rows(out: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]


def test_a_search_is_one_line_with_its_winner_and_unfold_lists_every_run(
        searched: dict, capsys: pytest.CaptureFixture[str]) -> None:
    search_ids = {i for ids in searched["run_ids"].values() for i in ids}
    with RunStore() as store:
        every = list_runs(store)
    assert len(search_ids) > 5 and len(every) == len(search_ids) + 1

    code, out, _ = run(capsys, "runs", "list")
    assert code == 0
    listed = rows(out)
    assert len(listed) == 2  # the search, then the run started by hand
    winner = searched["winner"]
    held_out = next(r["held_out"] for r in searched["heldout"] if r["variant"] == winner)
    search_row, own = listed
    assert search_row[0] == f"{min(search_ids)}–{max(search_ids)}"
    assert search_row[2] == (f"tuning search 1: {len(search_ids)} runs, best {winner!r} "
                             f"(held-out spearman {number_text(held_out)})")
    assert search_row[5] == "overall"  # aspect/KPI
    assert own[0] == "1" and own[5] == "coherence"
    assert "1 tuning search folded" in out and "--unfold" in out

    code, out, _ = run(capsys, "runs", "list", "--unfold")
    assert code == 0
    assert sorted(int(r[0]) for r in rows(out)) == sorted(r.id for r in every)
    assert all(r[2].startswith("tune ") for r in rows(out) if int(r[0]) in search_ids)


def test_an_unreadable_search_record_is_named_and_its_runs_are_listed(
        searched: dict, capsys: pytest.CaptureFixture[str]) -> None:
    (record,) = (user_data_dir() / "searches").glob("*.json")
    record.write_text('{"run_ids": {"plain": ["x"]}}', encoding="utf-8")
    code, out, _ = run(capsys, "runs", "list")
    assert code == 0
    assert len(rows(out)) == len({i for ids in searched["run_ids"].values() for i in ids}) + 1
    assert f"{record.name}: not read as a tuning search record (field run_ids.plain" in out.replace("\n", "")
