"""The virtual table: rows, filter, sort (missing values last), in-place updates, the cursor."""

from __future__ import annotations

from textual.app import App, ComposeResult
from tui_helpers import wait_until

from dialjudge.tui.widgets.virtual_table import Column, TableCell, VirtualTable


class TableApp(App[None]):
    CSS_PATH = "../../tui/widgets/virtual_table.tcss"

    def compose(self) -> ComposeResult:
        yield VirtualTable(id="t")


def number(value: float | None) -> TableCell:
    return TableCell("–" if value is None else f"{value:.1f}", "", value)


ROWS = [("a", [TableCell.of("alpha"), number(0.5)]), ("b", [TableCell.of("beta"), number(None)]),
        ("c", [TableCell.of("Gamma"), number(0.9)]), ("d", [TableCell.of("delta"), number(0.1)])]


async def test_sort_filter_update_and_cursor():
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(VirtualTable)
        table.set_columns([Column("name", "name"), Column("score", "score", align="right")])
        table.set_rows(ROWS)
        assert table.row_keys == ["a", "b", "c", "d"]

        table.sort_by("score")
        assert table.row_keys == ["d", "a", "c", "b"]  # missing last
        table.sort_by("score", reverse=True)
        assert table.row_keys == ["c", "a", "d", "b"]  # missing last both ways
        table.sort_by("name")
        assert table.row_keys == ["a", "b", "d", "c"]  # text sorts without case

        table.sort_by("score", reverse=True)
        table.move_cursor_to("a")
        table.update_cells([("d", "score", number(0.99))])  # re-sorts; the cursor stays on its row
        assert table.row_keys == ["d", "c", "a", "b"]
        assert table.cursor_key == "a"

        table.set_filter(lambda key: key != "c")
        assert table.row_keys == ["d", "a", "b"] and table.total_count == 4

        table.focus()
        await pilot.press("home", "down", "down")
        assert table.cursor_key == "b"
        await pilot.press("left", "o")  # the name column, ascending
        assert table.sort_column == "name" and not table.sort_reverse
        await pilot.press("o")
        assert table.sort_reverse and table.row_keys == ["d", "b", "a"]


async def test_ten_thousand_rows_render_only_what_shows():
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(VirtualTable)
        table.set_columns([Column("n", "n", align="right"), Column("text", "text")])
        table.set_rows((i, [number(float(i)), TableCell.of(f"row {i}")]) for i in range(10_000))
        await wait_until(pilot, lambda: not table.ordering and table.row_count == 10_000, "the rows' order")
        table.focus()
        await pilot.press("end")
        await pilot.pause()
        assert table.cursor_key == 9_999
        line = "".join(segment.text for segment in table.render_line(table.scrollable_content_region.height - 1))
        assert "row 9999" in line
