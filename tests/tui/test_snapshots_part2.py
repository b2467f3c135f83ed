"""Screenshots of the Run, Prompt lab, Review and Runs screens, compared with the accepted SVGs.

Deterministic by construction: the bundled sample, fake judges (scores from a
hash, or a fixed function), a fixed terminal size, no rates or clocks on screen,
and the run store's timestamps pinned. Regenerate with
``python -m pytest tests/tui/test_snapshots_part2.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Select, SelectionList
from tui_helpers import SIZE, make_services, settle

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template, parse_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.tui.app import make_app

FIXED_TIME = "2025-01-31T09:30:00.000+00:00"


@pytest.fixture(autouse=True)
def pinned_store_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs listed with their creation time: the same time in every screenshot."""
    monkeypatch.setattr("dialjudge.core.judges.store.connection._now", lambda: FIXED_TIME)


def fake_judges(config: JudgeConfig) -> FakeBackend:
    # fake2 answers like fake, except on human rewrites (a judge-judge disagreement to review).
    if config.name == "fake2":
        return FakeBackend(name="fake2", score_fn=lambda item, prompt: 1.0 if item.endswith("-hum") else 4.0,
                           garbage_every=13)
    return FakeBackend.from_config(config)


async def quiet(pilot) -> None:
    """Let everything settle and drop the notifications (they would cover the screen)."""
    await settle(pilot)
    pilot.app.clear_notifications()
    await pilot.pause()


def sample_app(tmp_path: Path):
    return make_app(services=make_services(tmp_path, make_backend=fake_judges))


def run_config(dataset, judges=("fake",), template=None) -> RunConfig:
    return RunConfig.build(dataset, template or get_template("likert-1to5"),
                           [JudgeConfig(name=j, backend="fake") for j in judges],
                           aspect="overall", quality="overall", mode=ScoringMode.GENERATE)


def edited_template():
    """likert-1to5 with its instruction reworded. It keeps the shipped file's source, whose path
    (this machine's) would otherwise show among the configuration changes."""
    stock = get_template("likert-1to5")
    return parse_template(stock.text.replace("Rate the response for", "Judge the reply for"), stock.source)


def test_run_screen_after_a_run(snap_compare, tmp_path: Path):
    async def run_fake(pilot) -> None:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        judges = pilot.app.screen.query_one("#run-judges", SelectionList)
        judges.deselect_all()
        judges.select("fake")
        pilot.app.screen.query_one("#run-target", Select).value = "coherence"
        await pilot.press("ctrl+r")
        await quiet(pilot)

    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=run_fake)


def test_prompt_lab_with_a_trial(snap_compare, tmp_path: Path):
    async def try_fake(pilot) -> None:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        screen = pilot.app.screen
        screen.query_one("#lab-judge", Select).value = "fake"
        screen.query_one("#lab-mode", Select).value = "logprob"
        screen.query_one("#lab-persona", Select).value = "strict-fact-checker"
        await settle(pilot)
        await pilot.press("ctrl+n", "ctrl+n")  # the third item: a seq2seq answer
        await settle(pilot)
        await pilot.press("ctrl+t")
        await quiet(pilot)

    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=try_fake)


def test_prompt_lab_with_a_template_error(snap_compare, tmp_path: Path):
    async def break_it(pilot) -> None:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        editor = pilot.app.screen.editor
        row = next(i for i, line in enumerate(editor.text.split("\n")) if "{aspect_definition}" in line)
        column = editor.text.split("\n")[row].index("{aspect_definition}")
        editor.replace("{aspect_defnition}", (row, column), (row, column + len("{aspect_definition}")))
        await pilot.pause(0.4)
        await quiet(pilot)

    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=break_it)


def test_review_screen(snap_compare, tmp_path: Path):
    async def review(pilot) -> None:
        await settle(pilot)
        pilot.app.runs.start(run_config(pilot.app.workspace.dataset, judges=("fake", "fake2")))
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        await pilot.press("down", "down")
        await quiet(pilot)

    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=review)


def test_runs_screen_comparing_two_runs(snap_compare, tmp_path: Path):
    async def compare(pilot) -> None:
        await settle(pilot)
        dataset = pilot.app.workspace.dataset
        for template in (get_template("likert-1to5"), edited_template()):
            pilot.app.runs.start(run_config(dataset, template=template))
            await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("space", "down", "space", "c")
        await quiet(pilot)

    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=compare)
