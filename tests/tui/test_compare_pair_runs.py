"""The Runs screen's comparison of two runs that judged pairs shows the verdicts `runs compare` prints."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import SIZE, make_services, settle, static_text

from dialjudge.cli.main import main
from dialjudge.core.api import CompareRequest, compare
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.runs import RunsScreen


@pytest.fixture
def two_pairwise_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs 1 and 2, judged by the command line (outside the app's event loop) into the default store."""
    config = tmp_path / "dialjudge.toml"
    config.write_text('[judges.fa]\nbackend = "fake"\nmodel = "fake-a"\n', encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    for template in ("pairwise-plain", "pairwise-aspect"):
        assert main(["judge", "--judge", "fa", "--template", template, "--mode", "pairwise", "--aspect", "coherence",
                     "--pairs", "2", "--no-metrics", "--bootstrap", "0"]) == 0
    capsys.readouterr()


async def test_two_pairwise_runs_compared_in_the_app(tmp_path: Path, two_pairwise_runs: None) -> None:
    services = make_services(tmp_path).with_store_at(Path(os.environ["DIALJUDGE_DATA_DIR"]) / "runs.sqlite3")
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen)
        await pilot.press("space", "down", "space", "c")
        await settle(pilot)
        shown = " ".join(static_text(screen.query_one("#runs-comparison", Static), width=200).split())
    (test,) = compare(services.session, CompareRequest(1, 2, seed=services.seed), services.config).pair_verdicts
    assert " ".join(test.verdict().split()) in shown
    assert "conservative rule" in shown and "24" in shown
