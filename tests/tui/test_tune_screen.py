"""The Tune screen: load a search space, run the search with the fake judge, follow the leaderboard
and the judgments spent, read the held-out result, save the winner, and cancel with Esc."""

from __future__ import annotations

import asyncio
from pathlib import Path

from textual.widgets import DataTable, Input, Static
from tui_helpers import FAKE_JUDGE_SEARCH_SPACE, SIZE, make_services, settle, static_text, wait_until

from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import load_template_file, user_template_dir
from dialjudge.core.tuning.search import SearchFinished, VariantScored
from dialjudge.tui.app import make_app
from dialjudge.tui.controllers.tune import SearchEventReceived, TuneController
from dialjudge.tui.screens.tune import TuneScreen

SPACE = FAKE_JUDGE_SEARCH_SPACE + """
[[variant]]
name = "own words"
aspect_definition = "whether you would be glad to read this reply next."
"""


def write_space(tmp_path: Path) -> Path:
    path = tmp_path / "space.toml"
    path.write_text(SPACE, encoding="utf-8")
    return path


async def open_tune(pilot, space: Path) -> TuneScreen:
    await settle(pilot)
    await pilot.press("t")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, TuneScreen)
    screen.query_one("#tune-space-path", Input).value = str(space)
    await pilot.press("o")
    await settle(pilot)
    return screen


async def test_a_search_fills_the_leaderboard_and_reports_held_out(tmp_path: Path, monkeypatch):
    services = make_services(tmp_path)
    seen: list[object] = []
    original = TuneController.event_received

    def record(controller: TuneController, message: SearchEventReceived) -> None:
        seen.append(message.event)
        original(controller, message)

    # Patched on the class before the app is made: the app routes messages to the methods it was built with.
    monkeypatch.setattr(TuneController, "event_received", record)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tune(pilot, write_space(tmp_path))
        assert app.tune.space is not None and len(app.tune.space.variants) == 4
        assert "4 variants" in static_text(screen.query_one("#tune-status", Static))
        await pilot.press("r")
        await wait_until(pilot, lambda: app.tune.state.report is not None, "the search reports")
        await settle(pilot)
        report = app.tune.state.report
        assert report is not None and not app.tune.running
        scored = [e for e in seen if isinstance(e, VariantScored)]
        assert {e.variant for e in scored if e.stage == "round 1"} == {"plain", "calibrated", "strict", "own words"}
        assert any(isinstance(e, SearchFinished) for e in seen)
        table = screen.query_one("#tune-leaderboard", DataTable)
        assert table.row_count == 4
        assert [str(table.get_row_at(i)[1]) for i in range(4)] == [s.variant for s in report.leaderboard]
        status = static_text(screen.query_one("#tune-status", Static))
        assert f"judgments {report.spent}" in status and report.winner in status
        heldout = static_text(screen.query_one("#tune-heldout", Static))
        assert "Held-out result" in heldout and "(winner)" in heldout and "gap" in heldout

        screen.query_one("#tune-winner-name", Input).value = "my-tuned"
        await pilot.press("w")
        await settle(pilot)
    path = user_template_dir() / "my-tuned.toml"
    assert path.is_file()
    assert load_template_file(path).name == "my-tuned"
    assert f"winning variant {report.winner!r}" in path.read_text(encoding="utf-8")


async def test_escape_cancels_a_running_search(tmp_path: Path):
    gate = asyncio.Event()

    async def held(_request) -> None:
        await gate.wait()

    def make_backend(config):
        return FakeBackend(name=config.name, delay=held, max_concurrency=1)

    app = make_app(services=make_services(tmp_path, make_backend=make_backend))
    async with app.run_test(size=SIZE) as pilot:
        await open_tune(pilot, write_space(tmp_path))
        await pilot.press("r")
        await wait_until(pilot, lambda: app.tune._search is not None and app.tune._search._job._engine is not None,
                         "the search is judging")
        assert app.tune.running
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.tune.running, "the search stops")
        await settle(pilot)
        assert app.tune.state.report is None
        assert "Cancelled" in app.tune.state.status
