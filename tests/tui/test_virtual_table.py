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


USR_SYSTEMS = ("Original Ground Truth", "Argmax Decoding", "Nucleus Decoding (p = 0.3)",
               "Nucleus Decoding (p = 0.5)", "Nucleus Decoding (p = 0.7)", "New Human Generated")


async def test_names_cut_to_the_column_stay_apart_and_so_do_labels():
    app = TableApp()
    async with app.run_test(size=(80, 12)):
        table = app.query_one(VirtualTable)
        judges = ("smollm2 · likert-1to5 (coherence)", "smollm2 · likert-1to5 (fluency)")
        table.set_columns([Column("system", "system", max_width=16, names=USR_SYSTEMS),
                           *(Column(j, j, align="right", max_width=14) for j in judges)])
        table.set_rows((name, [TableCell.of(name), TableCell("0.670"), TableCell("0.5")]) for name in USR_SYSTEMS)
        lines = [table.render_line(y).text for y in range(len(USR_SYSTEMS) + 1)]
        systems = [line[:16] for line in lines[1:]]
        # Before: three rows of "Nucleus Decodin…". Each is cut apart, keeping its p.
        assert systems[2:5] == ["Nucleus Dec…0.3)", "Nucleus Dec…0.5)", "Nucleus Dec…0.7)"]
        assert systems[1] == "Argmax Decoding "  # a name that fits stays whole
        # Two judges' labels cut at 14 keep the aspect that tells them apart.
        assert "(coherence)" in lines[0] and "(fluency)" in lines[0], lines[0]
        table.sort_by(judges[0])
        assert "coherence) ▲" in table.render_line(0).text
