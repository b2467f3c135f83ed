"""A run on pre-paired preference data in the app: the Datasets screen opens the pairs, the Run screen runs
a pairwise template on them and shows the agreement table, the per-pair rows and the pairs to review,
the same rows as core.api's report of the stored run."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Select, SelectionList
from tui_helpers import SIZE, settle, static_text

from dialjudge.core.api import PreferenceRequest
from dialjudge.core.api.preferences import (
    agreement_rows,
    pairs_to_review,
    stored_preference_report,
)
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.run import RunScreen
from dialjudge.tui.widgets.preference_report import PreferenceReportView

PAIRS = Path(__file__).parent.parent / "data" / "judge_bench_pairs.json"


async def test_a_pairwise_template_on_pairs_shows_the_agreement_with_the_humans_votes(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await pilot.pause()
        await pilot.press("f")
        app.screen.query_one("#open-file", Input).value = str(PAIRS)
        await pilot.press("enter")
        await settle(pilot)
        dataset = app.workspace.dataset
        assert dataset is not None and dataset.name == "judge_bench_pairs"

        app.screen.query_one("#item-table").focus()  # out of the file field, so that "j" is a key, not text
        await pilot.press("j")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        judges = screen.query_one("#run-judges", SelectionList)
        judges.deselect_all()
        judges.select("fake")
        screen.query_one("#run-template", Select).value = "pairwise-plain"
        await pilot.pause()
        view = screen.query_one(PreferenceReportView)
        assert not view.display
        await pilot.press("ctrl+r")
        await settle(pilot)
        state = app.runs.state
        assert state is not None and state.status == "finished" and state.done == state.total == 12
        assert app.pairwise.preference is not None and app.pairwise.run_id == state.run_id
        assert view.display
        shown = static_text(view, width=260)
        assert f"Judges vs the humans' preferences — run {state.run_id}" in shown

        with services.session.store() as store:
            report = stored_preference_report(store, state.run_id, dataset, PreferenceRequest())
        fake_row, humans_row = agreement_rows(report)
        assert fake_row[1] == humans_row[1] == "6"
        for cell in (*fake_row[2:], *humans_row[2:]):
            assert cell in shown
        assert "Pairs — fake" in shown and "p4" in shown and "tie (split)" in shown
        flagged = pairs_to_review(report, "fake")
        assert "To review (fake): " in shown
        for pair, why in flagged:
            assert f"{pair} ({why})" in shown
