"""Issue 35's leaderboard on USR Topical-Chat Overall (the bundled judge, the simulated 0.9 and 0.3 judges, four
fake judges, the nine metrics and the baselines: tests/usr_leaderboard.py) in the app: its view, moved to the
within-context level with l, shows the numbers ``dialjudge leaderboard --level context`` prints, digit for digit."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_leaderboard_view import table_cells
from textual.widgets import Static
from tui_helpers import SIZE, make_services, settle, static_text

from dialjudge.cli.main import main
from dialjudge.core.api.leaderboards import LeaderboardRequest
from dialjudge.core.config import BUNDLED_JUDGE
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.leaderboard_view import LeaderboardScreen
from shared_data import shared_data_dir
from usr_leaderboard import FAKE_ASPECTS, UsrLeaderboardStore

pytestmark = pytest.mark.model

WIDTH = 320


async def test_the_app_shows_the_usr_leaderboard_as_the_cli_prints_it(
        usr_leaderboard: UsrLeaderboardStore, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    built = usr_leaderboard
    services = make_services(tmp_path, data_dirs=(shared_data_dir(),)).with_store_at(built.store_path)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = LeaderboardScreen(LeaderboardRequest("usr-topicalchat", "Overall", n_boot=services.n_boot,
                                                      seed=services.seed))
        app.push_screen(screen)
        await settle(pilot)
        assert screen.board is not None and screen.board.level == "global"
        await pilot.press("l")
        await settle(pilot)
        assert screen.board is not None and screen.board.level == "context"
        shown = static_text(screen.query_one("#leaderboard-body", Static), width=WIDTH)
        board, request = screen.board, screen.request

    # The command line on the same store (its default place is the data folder's).
    monkeypatch.setenv("DIALJUDGE_DATA_DIR", str(built.folder))
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    code = main(["leaderboard", "--dataset", "usr-topicalchat", "--quality", "Overall", "--level", "context",
                 "--bootstrap", str(request.n_boot), "--seed", str(request.seed)])
    printed, err = capsys.readouterr()
    assert code == 0, err
    app_rows, cli_rows = table_cells(shown), table_cells(printed)
    assert len(app_rows) == len(board.rows) + 1 == 7 + 9 + 2 + 1  # judges, metrics, baselines, ceiling
    assert app_rows == cli_rows
    # The rows the issue names are there, with their clusters: 0.9 above 0.3, the fakes with the random scorer.
    cluster = {row[2]: row[1] for row in app_rows}
    assert int(cluster[built.row_name("sim9")]) < int(cluster[built.row_name("sim3")])
    assert {cluster[built.row_name(name)] for name in FAKE_ASPECTS} == {cluster["random scorer (seed 0)"]}
    assert built.row_name(BUNDLED_JUDGE) in cluster
    for line in board.method_lines():
        assert " ".join(line.split()) in " ".join(shown.split())
        assert " ".join(line.split()) in " ".join(printed.split())
