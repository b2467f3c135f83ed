"""At 80×24 each screen's primary action and its result stay in view: the Run screen in the middle of a
run shows the run's progress, and the Prompt lab shows its Try and Save buttons.

Deterministic by construction, as the other snapshot files: the bundled sample, fake judges, no clocks
on screen, the run store's clock pinned, a judge held by the test at a fixed point of the run.
Regenerate with ``python -m pytest tests/tui/test_snapshots_80x24.py --snapshot-update`` and read the
SVGs' text.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from test_run_progress_live import HeldJudge
from test_snapshots_sizes import FIXED_TIME, preview_rendered, quiet, steady_cursors
from textual.pilot import Pilot
from textual.widgets import Button, Input, ProgressBar, Select, SelectionList, Static
from tui_helpers import make_services, settle, static_text, wait_until

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.run import RunScreen

SIZE = (80, 24)
#: Judgments the held judge gives before the screenshot: a point in the middle of the run.
ANSWERED = 5


@pytest.fixture(autouse=True)
def pinned_store_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dialjudge.core.judges.store.connection._now", lambda: FIXED_TIME)


def fully_visible(screen: Any, widget: Any) -> bool:
    """``widget`` is drawn whole inside the screen (not scrolled away, not cut by its container)."""
    region = widget.region
    return (widget.display and region.area > 0 and region.width == widget.outer_size.width
            and screen.region.contains_region(region)
            and all(ancestor.region.contains_region(region) for ancestor in widget.ancestors
                    if hasattr(ancestor, "region") and ancestor is not screen.app))


async def start_held_run(pilot: Pilot[Any], judge: HeldJudge) -> RunScreen:
    """The Run screen with the fake judge started on 60 items, held after ``ANSWERED`` judgments."""
    app = pilot.app
    await settle(pilot)
    await pilot.press("j")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, RunScreen)
    judges = screen.query_one("#run-judges", SelectionList)
    judges.deselect_all()
    judges.select("fake")
    screen.query_one("#run-target", Select).value = "coherence"
    await pilot.pause()
    judge.loaded.set()
    judge.release(ANSWERED)
    await pilot.press("ctrl+r")
    await wait_until(pilot, lambda: app.runs.state is not None and app.runs.state.done == ANSWERED,
                     f"{ANSWERED} judgments are in")
    await wait_until(pilot, lambda: f"{ANSWERED}/60 judged" in static_text(screen.query_one("#run-progress-text")),
                     "the progress line shows them")
    await wait_until(pilot, lambda: screen.query_one(ProgressBar).progress == ANSWERED, "the bar shows them")
    app.clear_notifications()
    await pilot.pause()
    return screen


async def test_the_progress_of_a_run_started_with_ctrl_r_is_in_view_at_80x24(services_factory):
    judge = HeldJudge()
    app = make_app(services=services_factory(make_backend=judge.make))
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_held_run(pilot, judge)
        await wait_until(pilot, lambda: fully_visible(screen, screen.query_one("#run-progress-text", Static)),
                         "the progress line is in view")
        assert fully_visible(screen, screen.query_one(ProgressBar))
        # The form is still there and reachable: Tab moves through it, and the side pane takes focus too.
        assert screen.query_one("#run-form").region.height > 0
        judge.all_answers.set()
        await settle(pilot)
        # The end of the run stays in view until a form field is focused again.
        assert "60/60 judged" in static_text(screen.query_one("#run-progress-text"))
        assert fully_visible(screen, screen.query_one("#run-progress-text", Static))
        screen.query_one("#run-limit", Input).focus()
        await pilot.pause()
        assert not screen.has_class("-following")


async def test_the_prompt_labs_try_and_save_are_in_view_at_80x24(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await preview_rendered(pilot)
        screen = app.screen
        for button in ("#lab-try", "#lab-save"):
            assert fully_visible(screen, screen.query_one(button, Button)), f"{button} is cut off or out of view"
        # Tabbing through the pickers beside them scrolls the pickers, never the buttons away.
        screen.query_one("#lab-mode", Select).focus()
        await pilot.pause()
        assert fully_visible(screen, screen.query_one("#lab-try", Button))


def test_run_screen_mid_run_at_80x24(snap_compare, tmp_path: Path):
    judge = HeldJudge()
    app = make_app(services=make_services(tmp_path, make_backend=judge.make))

    async def run_before(pilot: Pilot[Any]) -> None:
        await start_held_run(pilot, judge)
        await steady_cursors(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_prompt_lab_with_try_and_save_at_80x24(snap_compare, tmp_path: Path):
    app = make_app(services=make_services(tmp_path))

    async def run_before(pilot: Pilot[Any]) -> None:
        await settle(pilot)
        await pilot.press("l")
        pilot.app.screen.query_one("#lab-judge", Select).value = "fake"
        await preview_rendered(pilot)
        await quiet(pilot)
        await steady_cursors(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
