"""No dead ends and no contradictions across datasets: the Scores header shows only the open dataset's run,
a dataset that fails to open at launch leaves screens that say why (and lead to the Datasets screen), and
``q`` asks before unsaved Prompt lab edits are lost."""

from __future__ import annotations

from test_run_screen import choose_judges, open_run_screen
from textual.widgets import Static
from tui_helpers import SIZE, settle, static_text

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.run import RunScreen
from dialjudge.tui.screens.scores import ScoresScreen


def scores_status(app) -> str:
    screen = app.screen
    assert isinstance(screen, ScoresScreen)
    return static_text(screen.query_one("#scores-status", Static))


async def test_a_dataset_switch_clears_the_other_datasets_run_from_the_scores_header(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run_screen(pilot)
        choose_judges(screen, "fake")
        await pilot.press("ctrl+r")
        await settle(pilot)
        run_id = app.runs.state.run_id
        await pilot.press("s")
        await settle(pilot)
        assert f"Run {run_id} finished" in scores_status(app)

        app.datasets.open("incar-kpi")
        await settle(pilot)
        assert app.workspace.dataset.name == "incar-kpi"
        status = scores_status(app)
        assert "incar-kpi" in status and f"Run {run_id}" not in status and "finished" not in status
        await pilot.press("j")
        await settle(pilot)
        assert isinstance(app.screen, RunScreen)
        assert f"Run {run_id}" not in static_text(app.screen.query_one("#run-progress-text", Static))

        # Back on the dataset it judged, the run shows again.
        app.datasets.open("sample")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert f"Run {run_id} finished" in scores_status(app)
