"""Every screen and the main dialogs at 80×24 (the smallest terminal the app supports) and at 200×50.

At 80×24 the screens reflow (the app's ``-narrow`` and ``-short`` breakpoints): nothing may be cut
off or squeezed to a sliver. Deterministic by construction, as the other snapshot files: the bundled
sample, fake judges, the run store's clock pinned, no rates or clocks on screen, notifications
cleared. Regenerate with ``python -m pytest tests/tui/test_snapshots_sizes.py --snapshot-update``
and read the SVGs' text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from test_snapshots_part2 import edited_template, fake_judges, run_config
from textual.pilot import Pilot
from textual.widgets import Select, SelectionList
from tui_helpers import FAKE_JUDGE_SEARCH_SPACE, make_services, settle, wait_until

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.quit_dialog import QuitDialog
from dialjudge.tui.screens.save_template_dialog import SaveTemplateDialog

SIZES = {"80x24": (80, 24), "200x50": (200, 50)}
FIXED_TIME = "2025-01-31T09:30:00.000+00:00"

Scenario = Callable[[Pilot[Any], Path], Awaitable[None]]


@pytest.fixture(autouse=True)
def pinned_store_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dialjudge.core.judges.store.connection._now", lambda: FIXED_TIME)


async def quiet(pilot: Pilot[Any]) -> None:
    await settle(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


async def steady_cursors(pilot: Pilot[Any]) -> None:
    """Stop the text cursors blinking: on a busy machine a screenshot could land on either phase."""
    for field in pilot.app.screen.query("Input, TextArea"):
        field.cursor_blink = False  # type: ignore[attr-defined]
    await pilot.pause()


async def two_runs(pilot: Pilot[Any]) -> None:
    """Run 1: fake and fake2 on the stock template; run 2: fake on a reworded one."""
    app = pilot.app
    app.runs.start(run_config(app.workspace.dataset, judges=("fake", "fake2")))
    await settle(pilot)
    app.runs.start(run_config(app.workspace.dataset, template=edited_template()))
    await settle(pilot)


async def keys(pilot: Pilot[Any], *pressed: str) -> None:
    await settle(pilot)
    await pilot.press(*pressed)
    await quiet(pilot)


async def scores_with_judges(pilot: Pilot[Any], tmp_path: Path) -> None:
    await settle(pilot)
    await two_runs(pilot)
    await keys(pilot, "u", "down", "a", "s")  # run 1's two judges join the Scores screen


async def datasets_summary(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "d")


async def datasets_items(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "d", "i")
    await quiet(pilot)  # the highlighted item's metric scores


async def plots(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "p")


async def run_after_a_run(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "j")
    judges = pilot.app.screen.query_one("#run-judges", SelectionList)
    judges.deselect_all()
    judges.select("fake")
    pilot.app.screen.query_one("#run-target", Select).value = "coherence"
    await keys(pilot, "ctrl+r")


async def preview_rendered(pilot: Pilot[Any]) -> None:
    """Wait out the Prompt lab's delayed preview (a timer, which settle() does not see), then settle."""
    lab = pilot.app.screen
    await wait_until(pilot, lambda: getattr(lab, "_timer", None) is None, "the prompt preview is rendered")
    await quiet(pilot)


async def prompt_lab(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "l")
    pilot.app.screen.query_one("#lab-judge", Select).value = "fake"
    await preview_rendered(pilot)
    await keys(pilot, "ctrl+t")


async def review(pilot: Pilot[Any], tmp_path: Path) -> None:
    await settle(pilot)
    await two_runs(pilot)
    await keys(pilot, "v")
    pilot.app.screen.query_one("#review-run", Select).value = 1
    await keys(pilot, "down")


async def runs_compared(pilot: Pilot[Any], tmp_path: Path) -> None:
    await settle(pilot)
    await two_runs(pilot)
    await keys(pilot, "u", "space", "down", "space", "c")


async def tune_after_a_search(pilot: Pilot[Any], tmp_path: Path) -> None:
    space = tmp_path / "space.toml"
    space.write_text(FAKE_JUDGE_SEARCH_SPACE, encoding="utf-8")
    app = pilot.app
    await keys(pilot, "t")
    app.tune.load_space(space)
    await keys(pilot, "r")
    await wait_until(pilot, lambda: app.tune.state.report is not None, "the search reports")
    await quiet(pilot)


async def help_screen(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "question_mark")


async def compare_dialog(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "c")


async def export_dialog(pilot: Pilot[Any], tmp_path: Path) -> None:
    await settle(pilot)
    pilot.app.runs.start(run_config(pilot.app.workspace.dataset))
    await keys(pilot, "u", "x")
    # The folder field shows the working directory: a path of this machine, replaced by a fixed one.
    pilot.app.screen.query_one("#export-folder").value = "exports"
    await quiet(pilot)


async def adversarial_dialog(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "d", "a")
    pilot.app.screen.query_one("#adv-out").value = "sample-adv-seed1.jsonl"  # not this machine's data folder
    await quiet(pilot)


async def import_dialog(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "u", "i")


async def rescore_dialog(pilot: Pilot[Any], tmp_path: Path) -> None:
    await settle(pilot)
    pilot.app.runs.start(run_config(pilot.app.workspace.dataset))
    await keys(pilot, "u", "r")


async def quit_dialog(pilot: Pilot[Any], tmp_path: Path) -> None:
    await settle(pilot)
    pilot.app.push_screen(QuitDialog("run 3 (smollm2 on usr-topicalchat, 126 of 360 judged)"))
    await quiet(pilot)


async def save_template_dialog(pilot: Pilot[Any], tmp_path: Path) -> None:
    await keys(pilot, "l")
    await preview_rendered(pilot)
    pilot.app.push_screen(SaveTemplateDialog("likert-1to5", "likert-1to5-edited"))
    await quiet(pilot)


SCENARIOS: dict[str, Scenario] = {
    "scores": scores_with_judges, "datasets": datasets_summary, "datasets_items": datasets_items, "plots": plots,
    "run": run_after_a_run, "prompt_lab": prompt_lab, "review": review, "runs_compare": runs_compared,
    "tune": tune_after_a_search, "help": help_screen, "compare_dialog": compare_dialog,
    "export_dialog": export_dialog, "adversarial_dialog": adversarial_dialog, "import_dialog": import_dialog,
    "rescore_dialog": rescore_dialog, "quit_dialog": quit_dialog, "save_template_dialog": save_template_dialog,
}


@pytest.mark.parametrize("size", SIZES.values(), ids=SIZES.keys())
@pytest.mark.parametrize("scenario", SCENARIOS.values(), ids=SCENARIOS.keys())
def test_screen_at_size(snap_compare, tmp_path: Path, scenario: Scenario, size: tuple[int, int]):
    app = make_app(services=make_services(tmp_path, make_backend=fake_judges))

    async def run_before(pilot: Pilot[Any]) -> None:
        await scenario(pilot, tmp_path)
        await steady_cursors(pilot)

    assert snap_compare(app, terminal_size=size, run_before=run_before)
