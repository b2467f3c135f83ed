"""The judge process's log in the app: ctrl+l on the Run screen (or the command palette) shows its end and
its path, scrolls, and Esc closes it."""

from __future__ import annotations

from textual.widgets import Log, Static
from tui_helpers import SIZE, settle, static_text, wait_until

from dialjudge.core.api.run_worker import judge_worker
from dialjudge.core.api.types import RunStatus
from dialjudge.core.planning import plan_run
from dialjudge.tui.app import make_app
from dialjudge.tui.commands import DialjudgeCommands
from dialjudge.tui.screens.judge_log_dialog import JudgeLogDialog
from dialjudge.tui.screens.run import RunScreen


async def open_log(pilot) -> JudgeLogDialog:
    await pilot.press("ctrl+l")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, JudgeLogDialog)
                     and pilot.app.screen.log_read is not None, "the log dialog has read the log")
    await pilot.pause()
    dialog = pilot.app.screen
    assert isinstance(dialog, JudgeLogDialog)
    return dialog


async def test_the_run_screen_shows_the_judge_process_log(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        assert isinstance(app.screen, RunScreen)
        dialog = await open_log(pilot)  # before any judge process: says so
        assert "No judge process has run yet" in static_text(dialog.query_one("#judge-log-path", Static))
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RunScreen)

        config = plan_run(app.workspace.dataset, services.config, template="adv-0to1", judges=["fake"],
                          aspect="coherence", limit=3).config
        await app.runs.start(config).wait()  # a run in the judge process, which writes its log
        assert app.runs.state is not None and app.runs.state.status is RunStatus.FINISHED
        path = judge_worker(services.session).log_path
        assert path is not None and path.is_file()
        dialog = await open_log(pilot)
        assert str(path) in static_text(dialog.query_one("#judge-log-path", Static), width=400)
        log = dialog.query_one("#judge-log-lines", Log)
        written = path.read_text(encoding="utf-8").splitlines()
        assert list(dialog.log_read.log.lines) == written and written  # the whole of a short log
        assert any("dialjudge judge worker, started by process" in line for line in log.lines)
        assert app.focused is log  # the keys scroll it
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RunScreen)


async def test_the_command_palette_opens_the_judge_process_log_at_80x24(services):
    app = make_app(services=services)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        titles = {c.title for c in DialjudgeCommands(app.screen).commands()}
        assert "Judge process log" in titles
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"judge process log")
        await settle(pilot)
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, JudgeLogDialog), "the palette opened the log")
        await settle(pilot)
        path, lines = app.screen.query_one("#judge-log-path", Static), app.screen.query_one("#judge-log-lines", Log)
        assert path.region.height >= 1 and lines.region.height >= 10  # the path and a screenful of the log fit
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, RunScreen)
