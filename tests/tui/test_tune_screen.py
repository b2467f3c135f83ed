"""The Tune screen: load a search space, run the search with the fake judge, follow the leaderboard
and the judgments spent, read the held-out result, save the winner, and cancel with Esc."""

from __future__ import annotations

import asyncio
from pathlib import Path

from test_run_progress_live import HeldJudge, ManualClock
from textual.widgets import DataTable, Input, Select, Static
from tui_helpers import FAKE_JUDGE_SEARCH_SPACE, SIZE, make_services, settle, static_text, wait_until

from dialjudge.core.format import duration_text
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


def space_with_quality(tmp_path: Path, quality: str) -> Path:
    path = tmp_path / "space.toml"
    path.write_text(FAKE_JUDGE_SEARCH_SPACE.replace('quality = "overall"', f'quality = "{quality}"'),
                    encoding="utf-8")
    return path


async def test_the_quality_picker_follows_the_space_and_a_dataset_without_its_quality_can_be_tuned(tmp_path):
    app = make_app(services=make_services(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tune(pilot, space_with_quality(tmp_path, "Overall"))
        picker = screen.query_one("#tune-quality", Select)
        assert picker.value == "overall"  # the space's quality, as the dataset spells it
        assert {v for _, v in picker._options if isinstance(v, str)} == set(app.workspace.qualities())

        # A space whose quality the dataset lacks: the quality on view is offered, and another can be picked.
        screen.query_one("#tune-space-path", Input).value = str(space_with_quality(tmp_path, "Nosuch"))
        await pilot.press("o")
        await settle(pilot)
        assert picker.value == app.workspace.quality == "overall"
        picker.value = "coherence"
        await pilot.pause()
        await pilot.press("r")
        await wait_until(pilot, lambda: app.tune.state.report is not None, "the search reports")
        await settle(pilot)
        assert app.tune.state.report.quality == "coherence"


async def test_the_search_shows_its_eta_from_the_pace_of_its_judgments(tmp_path):
    clock, judge = ManualClock(), HeldJudge()
    app = make_app(services=make_services(tmp_path, make_backend=judge.make, clock=clock, show_timings=True))
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_tune(pilot, write_space(tmp_path))
        status = lambda: static_text(screen.query_one("#tune-status", Static))  # noqa: E731
        await pilot.press("r")
        await wait_until(pilot, lambda: app.tune.state.planned > 0, "the search says what it plans")
        planned = app.tune.state.planned
        await wait_until(pilot, lambda: f"{planned} planned" in status() and "ETA after the first judgments" in status(),
                         "no ETA before a judgment")
        clock.advance(10)  # the judgments so far took 10 s: the rest at their pace
        judge.loaded.set()
        judge.release(10)  # the first variant's first round, which ends with its score (and the spent count)

        def eta_shown() -> bool:
            spent = app.tune.state.spent
            return spent > 0 and f"ETA {duration_text(10.0 / spent * (planned - spent))}" in status()

        await wait_until(pilot, eta_shown, "the ETA reads the time left at the pace so far")
        judge.all_answers.set()
        await wait_until(pilot, lambda: app.tune.state.report is not None, "the search reports")
        await settle(pilot)
        assert "ETA" not in status() and "planned" not in status()
