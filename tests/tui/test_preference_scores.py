"""The Scores screen on pre-paired preference data: after a pairwise run, the agreement table with the humans'
votes and the per-pair rows (the human label, the judge's verdict in each order), the same rows core.api
computes from the stored run (and the CLI prints); hidden for another dataset."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.widgets import Select, SelectionList
from tui_helpers import SIZE, settle, static_text

from dialjudge.core.api import (
    PAIR_COLUMNS,
    PreferenceRequest,
    agreement_rows,
    pair_rows,
    stored_preference_report,
)
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.widgets.preference_report import PreferencePanel, PreferenceReportView

PAIRS = Path(__file__).parent.parent / "data" / "judge_bench_pairs.json"


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
        with services.open_store() as store:
            report = stored_preference_report(store, run_id, dataset, PreferenceRequest())
        fake_row, humans_row = agreement_rows(report)
        assert fake_row[1] == humans_row[1] == str(len(dataset)) == "6"
        for cell in (*fake_row, *humans_row):
            assert cell in shown
        for column in PAIR_COLUMNS:
            assert column in shown
        rows = pair_rows(report, "fake")
        assert len(rows) == 6
        table_rows = {cells[0]: tuple(cells) for line in shown.splitlines() if line.startswith("│")
                      for cells in [[c.strip() for c in line.strip().strip("│").split("│")]]}
        for row in rows:  # one line per pair: its id, the humans' label, the verdict with A first, B first, overall
            assert table_rows[row[0]] == row
        # each pair judged in both orders: every order holds a verdict, and the two orders are counted in n
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
