"""No dead ends and no contradictions across datasets: the Scores header shows only the open dataset's run,
a dataset that fails to open at launch leaves screens that say why (and lead to the Datasets screen), and
``q`` asks before unsaved Prompt lab edits are lost."""

from __future__ import annotations

from test_run_screen import choose_judges, open_run_screen
from textual.widgets import Static
from tui_helpers import SIZE, settle, static_text, wait_until

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.datasets import DatasetsScreen
from dialjudge.tui.screens.prompt_lab import PromptLabScreen
from dialjudge.tui.screens.quit_dialog import QuitDialog
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


async def test_a_failed_open_at_launch_leaves_screens_that_say_why_and_lead_to_the_datasets_screen(
        services, worker_failures):
    app = make_app("nosuch", services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        worker_failures.expect("nosuch")
        app.clear_notifications()  # the toast goes; what the screens say stays
        await pilot.pause()
        assert app.workspace.dataset is None
        assert "No dataset open: press d for the Datasets screen" in scores_status(app)
        reason = "no dataset named 'nosuch'"
        assert reason in " ".join(static_text(app.screen.query_one("#correlation-body", Static)).split())
        for key, widget in (("j", "#run-plan"), ("d", "#dataset-summary")):
            await pilot.press(key)
            await settle(pilot)
            text = " ".join(static_text(app.screen.query_one(widget, Static)).split())
            assert "Opening the dataset" not in text
            assert reason in text, f"the {key} screen does not say why: {text!r}"
        screen = app.screen
        assert isinstance(screen, DatasetsScreen)
        assert "pick one in the list, or open a file (f)" in " ".join(
            static_text(screen.query_one("#dataset-summary", Static)).split()).lower()

        # The way out works: another dataset opens and every screen follows it.
        app.datasets.open("sample")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert app.workspace.dataset.name == "sample" and app.datasets.open_error is None
        assert scores_status(app).startswith("sample ·")


async def test_q_with_unsaved_prompt_lab_edits_asks_first(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        lab = app.screen
        assert isinstance(lab, PromptLabScreen)
        await wait_until(pilot, lambda: lab.template is not None, "the lab shows a template")
        name = lab.template.name
        lab.editor.focus()
        lab.editor.insert("# my change\n", (0, 0))
        await pilot.press("escape")  # leave the editor: q is a key again, not a letter
        await settle(pilot)

        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), "the quit question is put")
        text = static_text(app.screen.query_one("#quit-text", Static))
        assert f"edits to template {name} are not saved" in text and "quitting loses them" in text
        assert "in progress" not in text  # nothing runs: only the edits are at stake
        await pilot.press("n")
        await wait_until(pilot, lambda: app.screen is lab, "the lab is back")
        assert app.is_running and name in lab.editor.text and "# my change" in lab.editor.text

        await pilot.press("q")
        await wait_until(pilot, lambda: isinstance(app.screen, QuitDialog), "the question is put again")
        await pilot.press("y")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited")


async def test_q_without_edits_quits_at_once(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        await pilot.press("q")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited without asking")
