"""The leaderboard in the app (Runs screen, key b) shows the numbers ``dialjudge leaderboard`` prints,
digit for digit, on the same store."""

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
from dialjudge.tui.screens.leaderboard_view import LeaderboardScreen
from dialjudge.tui.screens.runs import RunsScreen

FAKE = JudgeConfig(name="fake", backend="fake", model="fake-judge")


def table_cells(text: str) -> list[list[str]]:
    """The body rows of a Rich table as printed: cells between the vertical bars."""
    return [[cell.strip() for cell in line.strip().strip("│").split("│")]
            for line in text.splitlines() if line.strip().startswith("│")]


async def test_the_app_shows_the_cli_leaderboard_digit_for_digit(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    # The app's store where the command line looks for it, so both read the same runs.
    store = Path(os.environ["DIALJUDGE_DATA_DIR"]) / "runs.sqlite3"
    services = make_services(tmp_path).with_store_at(store)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for aspect in ("overall", "coherence"):
            app.runs.start(RunConfig.build(app.workspace.dataset, get_template("likert-1to5"), [FAKE], aspect=aspect,
                                           quality="overall", mode=ScoringMode.GENERATE))
            await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("b")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, LeaderboardScreen) and screen.board is not None
        shown = static_text(screen.query_one("#leaderboard-body", Static), width=260)
        request = screen.request

    monkeypatch.setenv("COLUMNS", "260")
    code = main(["leaderboard", "--dataset", request.dataset, "--quality", request.quality,
                 "--bootstrap", str(request.n_boot), "--seed", str(request.seed)])
    printed, err = capsys.readouterr()
    assert code == 0, err
    app_rows, cli_rows = table_cells(shown), table_cells(printed)
    assert len(app_rows) == len(screen.board.rows) + 1 >= 2 + 9 + 2 + 1  # two judges, metrics, baselines, ceiling
    assert app_rows == cli_rows
    assert sum(1 for row in app_rows if row[2].startswith("run ")) == 2
    # The method text under the table is the same too.
    for line in screen.board.method_lines():
        assert " ".join(line.split()) in " ".join(shown.split())
        assert " ".join(line.split()) in " ".join(printed.split())
