"""The open-file dialog's column step: a CSV with other column names asks for each column's field, opens
with the fields picked (the right ratings), remembers them, and Esc closes it without opening."""

from __future__ import annotations

from pathlib import Path

from textual.content import Content
from textual.widgets import Input, Label, OptionList, Select, Static
from tui_helpers import SIZE, settle, static_text, toast_texts, wait_until

from dialjudge.core.api import parse_column_map
from dialjudge.core.api.column_maps import RATING
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.column_map_dialog import ColumnMapDialog
from dialjudge.tui.screens.datasets import DatasetsScreen

CSV = """item,history,reply,gold,rater1,rater2,notes
x1,A: hi,how are you,fine thanks,4,5,n1
x2,A: yo,sup,hey,2,,n2
x3,A: hm,ok,okay,1,3,
"""


def dialog_shown(app) -> bool:  # type: ignore[no-untyped-def]
    """The column dialog is on top and its rows are mounted: a pushed screen is on the stack before its
    children are composed, and a query in between finds none."""
    return isinstance(app.screen, ColumnMapDialog) and bool(app.screen.query(".column-name"))


async def wait_for_dialog(pilot) -> None:  # type: ignore[no-untyped-def]
    await wait_until(pilot, lambda: dialog_shown(pilot.app), "the column dialog with its rows")


async def open_file(pilot, path: Path) -> DatasetsScreen:
    await pilot.press("d")
    await pilot.pause()
    screen = pilot.app.screen
    assert isinstance(screen, DatasetsScreen)
    await pilot.press("f")
    screen.query_one("#open-file", Input).value = str(path)
    await pilot.press("enter")
    await settle(pilot)
    return screen


async def test_pick_the_fields_and_the_dataset_opens_with_the_right_ratings(services, tmp_path: Path):
    path = tmp_path / "other.csv"
    path.write_text(CSV, encoding="utf-8")
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        datasets = await open_file(pilot, path)
        await wait_for_dialog(pilot)
        dialog = app.screen
        assert app.workspace.dataset.name == "sample"  # nothing opened yet
        names = [str(label.content) for label in dialog.query(".column-name").results(Label)]
        assert names == ["item", "history", "reply", "gold", "rater1", "rater2", "notes"]
        # Prefilled from the names and the values.
        assert [dialog.query_one(f"#field-{i}", Select).value for i in range(7)] == [
            "-", "context", "candidate", "reference", RATING, RATING, "-"]
        assert dialog.query_one("#quality-0", Input).disabled and not dialog.query_one("#quality-4", Input).disabled

        dialog.query_one("#field-0", Select).value = "id"
        # Letters typed in the quality fields are text, not keys of a screen.
        for index in (4, 5):
            field = dialog.query_one(f"#quality-{index}", Input)
            field.focus()
            field.value = ""
            await pilot.press(*"Overall")
            assert field.value == "Overall"
        await pilot.press("ctrl+s")
        await settle(pilot)
        await wait_until(pilot, lambda: app.workspace.dataset.name == "other", "the mapped file to open")

        assert app.screen is datasets
        summary = static_text(datasets.query_one("#dataset-summary", Static))
        assert "columns mapped: item=id, history=context, reply=candidate, gold=reference" in summary
        assert "rater1=Overall:rater1, rater2=Overall:rater2, notes=-" in summary
        dataset = app.workspace.dataset
        assert [ex.id for ex in dataset] == ["x1", "x2", "x3"]
        assert [ex.ratings["Overall"].scores for ex in dataset] == [(4, 5), (2, None), (1, 3)]
        assert dataset.examples[0].ratings["Overall"].annotators == ("rater1", "rater2")
        assert [ex.candidate for ex in dataset] == ["how are you", "sup", "ok"]
        assert dataset.examples[0].references == ("fine thanks",)

        # Opened again from the list of recent files: the remembered mapping, no dialog.
        await pilot.press("d")
        options = datasets.query_one("#dataset-list", OptionList)
        options.focus()
        options.highlighted = options.get_option_index("sample")
        await pilot.press("enter")
        await settle(pilot)
        assert app.workspace.dataset.name == "sample"
        options.highlighted = options.get_option_index(str(path.resolve()))
        await pilot.press("enter")
        await settle(pilot)
        assert not isinstance(app.screen, ColumnMapDialog)
        assert [ex.ratings["Overall"].scores for ex in app.workspace.dataset] == [(4, 5), (2, None), (1, 3)]


async def test_a_rating_needs_its_quality_and_a_candidate_is_needed(services, tmp_path: Path):
    path = tmp_path / "other.csv"
    path.write_text(CSV, encoding="utf-8")
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await open_file(pilot, path)
        await wait_for_dialog(pilot)
        dialog = app.screen
        dialog.query_one("#quality-4", Input).value = ""
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is dialog
        assert any("name the quality the column 'rater1' rates" in text for text in toast_texts(app))
        dialog.query_one("#quality-4", Input).value = "Overall"
        dialog.query_one("#field-2", Select).value = "-"  # no candidate left
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.screen is dialog and app.workspace.dataset.name == "sample"
        assert any("holds the candidate" in text for text in toast_texts(app))


async def test_esc_closes_the_dialog_without_opening(services, tmp_path: Path):
    path = tmp_path / "other.csv"
    path.write_text(CSV, encoding="utf-8")
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        datasets = await open_file(pilot, path)
        await wait_for_dialog(pilot)
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is datasets and app.workspace.dataset.name == "sample"
        assert any("other.csv was not opened" in text for text in toast_texts(app))


def test_every_binding_of_the_dialog_has_a_description():
    assert all(binding.description for binding in ColumnMapDialog.BINDINGS)


async def test_launched_with_a_mapping_the_file_opens_without_the_dialog(services, tmp_path: Path):
    """``dialjudge --dataset FILE --map COLUMN=FIELD ...``: the app opens the table with the mapping."""
    path = tmp_path / "other.csv"
    path.write_text(CSV, encoding="utf-8")
    column_map = parse_column_map(["item=id", "history=context", "reply=candidate", "rater1=Overall:a",
                                   "rater2=Overall:b"])
    app = make_app(str(path), services=services, column_map=column_map)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not isinstance(app.screen, ColumnMapDialog)
        dataset = app.workspace.dataset
        assert dataset.name == "other"
        assert [ex.ratings["Overall"].scores for ex in dataset] == [(4, 5), (2, None), (1, 3)]


def drawn(label: Label) -> str:
    """The characters a label draws (markup it was given would be drawn without its brackets)."""
    visual = label.visual
    assert isinstance(visual, Content)
    return visual.plain


async def test_column_names_are_shown_as_text_not_markup(services, tmp_path: Path):
    path = tmp_path / "[b]odd.csv"
    path.write_text("[red]reply[/red],score\nhi,1\nyo,2\n", encoding="utf-8")
    app = make_app(str(path), services=services)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_dialog(pilot)
        dialog = app.screen
        # What is drawn, not what was given: markup would be drawn without its brackets.
        names = [drawn(label) for label in dialog.query(".column-name").results(Label)]
        assert names == ["[red]reply[/red]", "score"]
        assert "[b]odd.csv" in drawn(dialog.query_one(".dialog-title", Label))
