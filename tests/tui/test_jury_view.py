"""The jury (Runs screen, key y) and the cascade (key e) in the app show the numbers ``dialjudge jury`` and
``dialjudge cascade`` print, digit for digit, on the same store, with the settings asked first (the jury's
method; the cascade's target and delta); Esc cancels the question; more than two runs can be marked for a
jury while a comparison still takes two."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import SIZE, make_services, settle, static_text

from dialjudge.cli.main import main
from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.jury_view import CascadeScreen, JuryScreen
from dialjudge.tui.screens.leaderboard_view import LeaderboardScreen
from dialjudge.tui.screens.panel_settings_dialog import CascadeSettingsDialog, JurySettingsDialog
from dialjudge.tui.screens.runs import RunsScreen

FAKE = JudgeConfig(name="fake", backend="fake", model="fake-judge")


def table_cells(text: str) -> list[list[str]]:
    return [[cell.strip() for cell in line.strip().strip("│").split("│")]
            for line in text.splitlines() if line.strip().startswith("│")]


def printed(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


async def test_the_app_shows_the_cli_jury_and_cascade_digit_for_digit(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    store = Path(os.environ["DIALJUDGE_DATA_DIR"]) / "runs.sqlite3"
    app = make_app(services=make_services(tmp_path).with_store_at(store))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for aspect in ("overall", "coherence"):
            app.runs.start(RunConfig.build(app.workspace.dataset, get_template("likert-1to5"), [FAKE], aspect=aspect,
                                           quality="overall", mode=ScoringMode.LOGPROB))
            await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await pilot.press("space", "down")
        await settle(pilot)
        # The question first; Esc cancels it and nothing is computed.
        await pilot.press("y")
        await settle(pilot)
        assert isinstance(app.screen, JurySettingsDialog)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is runs
        await pilot.press("y")
        await settle(pilot)
        # By keyboard: open the method list, down to "mean", choose it, and pool.
        await pilot.press("enter", "down", "enter")
        await settle(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        jury = app.screen
        assert isinstance(jury, JuryScreen) and jury.report is not None
        jury_shown = static_text(jury.query_one("#panel-body", Static), width=240)
        jury_request = jury.request
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("e")
        await settle(pilot)
        assert isinstance(app.screen, CascadeSettingsDialog)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is runs
        await pilot.press("e")
        await settle(pilot)
        await pilot.press("1", ".", "5", "enter")  # out of range: said, and the dialog stays
        await settle(pilot)
        assert isinstance(app.screen, CascadeSettingsDialog)
        await pilot.press("backspace", "backspace", "backspace", "0", ".", "6", "tab", "0", ".", "2", "enter")
        await settle(pilot)
        cascade = app.screen
        assert isinstance(cascade, CascadeScreen) and cascade.report is not None
        cascade_shown = static_text(cascade.query_one("#panel-body", Static), width=240)
        cascade_request = cascade.request

    monkeypatch.setenv("COLUMNS", "240")
    assert len(jury_request.members) == 2 and jury_request.members[0] != jury_request.members[1]
    jury_printed = printed(capsys, "jury", *jury_request.members, "--method", "mean", "--bootstrap",
                           str(jury_request.n_boot), "--seed", str(jury_request.seed))
    app_rows = table_cells(jury_shown)
    assert len(app_rows) == 3 and app_rows == table_cells(jury_printed)
    assert app_rows[-1][0].startswith("jury mean")
    assert (cascade_request.cheap, cascade_request.strong) == jury_request.members
    assert (cascade_request.target, cascade_request.delta) == (0.6, 0.2)
    cascade_printed = printed(capsys, "cascade", cascade_request.cheap, cascade_request.strong, "--target", "0.6",
                              "--delta", "0.2", "--seed", str(cascade_request.seed))
    assert table_cells(cascade_shown) == table_cells(cascade_printed) and len(table_cells(cascade_shown)) == 6
    for line in ("Trust or Escalate", "for the strong judge alone"):
        assert line in " ".join(cascade_shown.split()) and line in " ".join(cascade_printed.split())


async def test_three_marked_runs_make_a_jury_and_a_comparison_still_takes_two(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    store = Path(os.environ["DIALJUDGE_DATA_DIR"]) / "runs.sqlite3"
    app = make_app(services=make_services(tmp_path).with_store_at(store))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for aspect, mode in (("overall", ScoringMode.LOGPROB), ("coherence", ScoringMode.LOGPROB),
                             ("overall", ScoringMode.GENERATE)):
            app.runs.start(RunConfig.build(app.workspace.dataset, get_template("likert-1to5"), [FAKE], aspect=aspect,
                                           quality="overall", mode=mode))
            await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        await pilot.press("space", "down", "space", "down", "space")
        await settle(pilot)
        assert len(runs.marked) == 3 and set(runs.sides().values()) == {"*"}
        status = static_text(runs.query_one("#runs-status", Static), width=160)
        assert f"marked runs {', '.join(str(m) for m in runs.marked)}" in status
        await pilot.press("c")
        await settle(pilot)
        assert "Comparing" not in static_text(runs.query_one("#runs-comparison", Static), width=160)
        await pilot.press("y")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, JurySettingsDialog) and dialog.request.members == tuple(map(str, runs.marked))
        await pilot.press("ctrl+s")
        await settle(pilot)
        jury = app.screen
        assert isinstance(jury, JuryScreen) and jury.report is not None
        assert len(jury.report.members) == 3 and jury.report.method.value == "majority"
        # b: the leaderboard of the three runs with the jury ranked among them.
        await pilot.press("b")
        await settle(pilot)
        board_screen = app.screen
        assert isinstance(board_screen, LeaderboardScreen) and board_screen.board is not None
        board_shown = static_text(board_screen.query_one("#leaderboard-body", Static), width=240)
        board_request = board_screen.request
        await pilot.press("escape")
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        # Unmarking one leaves two: A and B again, and they compare.
        await pilot.press("space")
        await settle(pilot)
        assert sorted(runs.sides().values()) == ["A", "B"]

    monkeypatch.setenv("COLUMNS", "240")
    members = ",".join(board_request.juries[0])
    board_printed = printed(capsys, "leaderboard", *map(str, board_request.runs), "--dataset", board_request.dataset,
                            "--quality", board_request.quality, "--jury", members, "--bootstrap",
                            str(board_request.n_boot), "--seed", str(board_request.seed))
    jury_rows = [r for r in table_cells(board_shown) if any(c.startswith("jury majority") for c in r)]
    assert len(jury_rows) == 1 and jury_rows == [r for r in table_cells(board_printed)
                                                  if any(c.startswith("jury majority") for c in r)]
    assert table_cells(board_shown) == table_cells(board_printed)


async def test_the_settings_dialogs_fit_80x24(tmp_path: Path) -> None:
    store = Path(os.environ["DIALJUDGE_DATA_DIR"]) / "runs.sqlite3"
    app = make_app(services=make_services(tmp_path).with_store_at(store))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for aspect in ("overall", "coherence"):
            app.runs.start(RunConfig.build(app.workspace.dataset, get_template("likert-1to5"), [FAKE], aspect=aspect,
                                           quality="overall", mode=ScoringMode.LOGPROB))
            await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("space", "down")
        await settle(pilot)
        for key, dialog_type, button in (("y", JurySettingsDialog, "#jury-go"), ("e", CascadeSettingsDialog,
                                                                                  "#cascade-go")):
            await pilot.press(key)
            await settle(pilot)
            dialog = app.screen
            assert isinstance(dialog, dialog_type)
            region = dialog.query_one(button).region
            assert region.width > 0 and region.bottom <= 24 and region.right <= 80
            await pilot.press("escape")
            await settle(pilot)
            assert isinstance(app.screen, RunsScreen)
