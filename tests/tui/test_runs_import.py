"""The Runs screen imports judge scores made elsewhere: a dialog, a worker, a notification with the counts."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Checkbox, Input
from tui_helpers import SIZE, settle, toast_texts

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.import_dialog import ImportDialog
from dialjudge.tui.screens.runs import RunsScreen

FILES = Path(__file__).resolve().parents[1] / "data" / "imports"


async def test_importing_a_file_from_the_runs_screen_lists_an_imported_run(services) -> None:
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunsScreen) and not screen.runs
        await pilot.press("i")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ImportDialog) and dialog.dataset == "sample"
        dialog.query_one("#import-file", Input).value = str(FILES / "wide.csv")
        await pilot.press("ctrl+s")
        await settle(pilot)

        assert isinstance(app.screen, RunsScreen)
        (run_id, record), = screen.runs.items()
        assert record.kind == "imported" and record.run_config.judges[0].name == "judge-a"
        toasts = " ".join(toast_texts(app))
        assert f"Run {run_id} from wide.csv (table): matched 8 of 12 scores to 4 items" in toasts
        assert "rows matching no item: 1 (first: line 6 (no-such-item))" in toasts

        # The Scores screen takes its judges as it takes a native run's.
        await pilot.press("a")
        await settle(pilot)
        assert f"Scores now show judge-a#{run_id}, judge-b#{run_id}" in " ".join(toast_texts(app))
        assert dict(app.workspace.scores_of(f"judge-a#{run_id}"))["sample-c01-llm"] == 0.75


async def test_a_strict_import_with_problems_is_refused_and_stores_nothing(services, worker_failures) -> None:
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("i")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ImportDialog)
        dialog.query_one("#import-file", Input).value = str(FILES / "wide.csv")
        dialog.query_one("#import-strict", Checkbox).value = True
        await pilot.press("ctrl+s")
        await settle(pilot)
        worker_failures.expect("--strict: the import has problems (rows matching no item")
        with services.session.store() as store:
            assert store.runs.list_runs() == []
        assert any("--strict" in text for text in toast_texts(app))
