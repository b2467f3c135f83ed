"""The Scores screen on pre-paired preference data: after a pairwise run, the agreement table with the humans'
votes and the per-pair rows (the human label, the judge's verdict in each order), the same rows core.api
computes from the stored run (and the CLI prints); hidden for another dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Select, SelectionList
from tui_helpers import SIZE, make_services, settle, static_text

from dialjudge.cli.main import main
from dialjudge.core.api import PreferenceRequest
from dialjudge.core.api.preferences import (
    PAIR_VOTE_COLUMNS,
    agreement_rows,
    pair_rows,
    stored_preference_report,
)
from dialjudge.core.judges.store.run_store import default_store_path
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.runs import RunsScreen
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.widgets.preference_report import PreferencePanel, PreferenceReportView

PAIRS = Path(__file__).parent.parent / "data" / "judge_bench_pairs.json"
#: Each pair's votes (p1 … p6), counted by hand from the file.
VOTES = ("3 A", "2 B, 1 tie", "1 A, 2 tie", "1 A, 1 B", "1 B", "1 A, 2 B")


async def run_pairwise_on_pairs(pilot: Pilot[Any], dataset: str, *, both_orders: bool = True) -> int:
    """Open ``dataset`` and run the fake judge with pairwise-plain on it from the Run screen; the run's id."""
    app = pilot.app
    await settle(pilot)
    app.datasets.open(dataset)
    await settle(pilot)
    await pilot.press("j")
    await settle(pilot)
    screen = app.screen
    judges = screen.query_one("#run-judges", SelectionList)
    judges.deselect_all()
    judges.select("fake")
    screen.query_one("#run-template", Select).value = "pairwise-plain"
    await pilot.pause()
    await pilot.press("ctrl+r")
    await settle(pilot)
    state = app.runs.state
    assert state is not None and state.status == "finished", state
    return state.run_id


async def test_scores_screen_shows_the_agreement_table_and_the_pairs_after_a_pairwise_run(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        panel = app.screen.query_one(PreferencePanel)
        assert isinstance(app.screen, ScoresScreen) and not panel.display  # the bundled sample has no pairs

        run_id = await run_pairwise_on_pairs(pilot, str(PAIRS))
        await pilot.press("s")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ScoresScreen)
        panel = screen.query_one(PreferencePanel)
        assert panel.display
        shown = static_text(panel.query_one(PreferenceReportView), width=260)
        assert f"Judges vs the humans' preferences — run {run_id}" in shown

        dataset = app.workspace.dataset
        assert dataset is not None
        with services.session.store() as store:
            report = stored_preference_report(store, run_id, dataset, PreferenceRequest())
        fake_row, humans_row = agreement_rows(report)
        assert fake_row[1] == humans_row[1] == str(len(dataset)) == "6"
        for cell in (*fake_row, *humans_row):
            assert cell in shown
        for column in PAIR_VOTE_COLUMNS:
            assert column in shown
        rows = pair_rows(report, "fake")
        assert len(rows) == 6
        table_rows = {cells[0]: tuple(cells) for line in shown.splitlines() if line.startswith("│")
                      for cells in [[c.strip() for c in line.strip().strip("│").split("│")]]}
        # one line per pair: its id, its votes (counted by hand from tests/data/judge_bench_pairs.json), the
        # humans' label, the verdict with A shown first, with B shown first, and overall
        for (pair, *rest), votes in zip(rows, VOTES, strict=True):
            assert table_rows[pair] == (pair, votes, *rest)
        # each pair judged in both orders: every order holds a verdict
        assert all(a != "not asked" and b != "not asked" for _, _, a, b, _ in rows)


async def test_the_agreement_table_leaves_when_another_dataset_opens(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await run_pairwise_on_pairs(pilot, str(PAIRS))
        await pilot.press("s")
        await settle(pilot)
        panel = app.screen.query_one(PreferencePanel)
        assert panel.display
        app.datasets.open("sample")
        await settle(pilot)
        assert app.workspace.dataset is not None and app.workspace.dataset.name != "judge_bench_pairs"
        assert not panel.display
        assert app.pairwise.preference is not None  # kept, but not shown beside another dataset's items


FAKE_JUDGE_CONFIG = """
[judges.fa]
backend = "fake"
model = "fake-a"
"""


@pytest.fixture
def cli_rows(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The agreement rows `dialjudge judge --template pairwise-plain` prints for the pairs (run 1 of the store)."""
    config = tmp_path / "dialjudge.toml"
    config.write_text(FAKE_JUDGE_CONFIG, encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    code = main(["judge", "--dataset", str(PAIRS), "--template", "pairwise-plain", "--judge", "fa"])
    out, err = capsys.readouterr()
    assert code == 0, err
    first_table = out[: out.index("└") + 1]
    printed = [line for line in first_table.splitlines() if line.startswith(("│fa ", "│humans"))]
    assert len(printed) == 2
    return printed


async def test_the_scores_screen_shows_the_command_lines_agreement_table(cli_rows: list[str], tmp_path: Path) -> None:
    """The app, opening the command line's stored run from the Runs screen, shows the same agreement rows on
    the Scores screen, digit for digit (the same bootstrap: 1000 resamples, seed 0)."""
    services = make_services(tmp_path).with_store_at(default_store_path())
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.datasets.open(str(PAIRS))
        await settle(pilot)
        await pilot.press("u")  # the Runs screen: the command line's run
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        runs.table.move_cursor_to(0)
        await pilot.press("a")  # to the Scores screen
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        panel = app.screen.query_one(PreferencePanel)
        assert panel.display
        shown = static_text(panel.query_one(PreferenceReportView), width=400)
    assert "Judges vs the humans' preferences — run 1" in shown
    for line in cli_rows:
        cells = [c.strip() for c in line.strip("│").split("│")]
        row = next(r for r in shown.splitlines() if r.startswith(f"│{cells[0]} "))
        assert [c.strip() for c in row.strip().strip("│").split("│")] == cells
