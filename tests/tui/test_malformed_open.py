"""Issue 33, in the app: a malformed file opened from the Datasets screen's open field gives the same one
message the command line gives (file, record from 1 with its id, field), never a traceback, and the open
dataset stays; a file with a value fault opens, its summary saying what loading left out."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static
from tui_helpers import SIZE, settle, static_text, toast_texts

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.datasets import DatasetsScreen

CORPUS = Path(__file__).resolve().parents[1] / "data" / "malformed"


async def open_path(pilot, path: Path) -> DatasetsScreen:
    await pilot.press("d")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, DatasetsScreen)
    await pilot.press("f")
    screen.query_one("#open-file", Input).value = str(path)
    await pilot.press("enter")
    await settle(pilot)
    return screen


async def test_a_structural_fault_is_one_message_naming_file_record_and_field(services, worker_failures):
    path = CORPUS / "jb_missing_output_b.json"
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await open_path(pilot, path)
        message = (f"{path}, record 2 (id 'p2'), field 'instance.output_b': missing required field (a pairwise "
                   "instance needs both replies)")
        (failure,) = worker_failures.expect(message)
        assert str(failure.error) == message
        assert sum(message in " ".join(text.split()) for text in toast_texts(app)) == 1
        assert not any("Traceback" in text or "DataError" in text for text in toast_texts(app))
        assert app.workspace.dataset.name == "sample"


async def test_a_value_fault_opens_and_the_summary_counts_it(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        screen = await open_path(pilot, CORPUS / "csv_stray_text.csv")
        assert app.workspace.dataset.name == "csv_stray_text"
        summary = " ".join(" ".join(static_text(w).split()) for w in screen.query(Static))
        assert "Left out at load values counted as missing: not a number 1" in summary
