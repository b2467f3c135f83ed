"""The virtual table's lazy rows (cells built when drawn) show what eagerly given cells show,
and the Scores table built that way shows the cells the workspace implies."""

from __future__ import annotations

import math
from typing import Any

import pytest
from rich.cells import cell_len
from textual.app import App, ComposeResult
from tui_helpers import SIZE, settle

from dialjudge.core.judges.run.events import JudgmentScored, RunStarted
from dialjudge.core.judges.types import Judgment, ScoringMode
from dialjudge.tui.app import make_app
from dialjudge.tui.controllers.runs import RunEventReceived
from dialjudge.tui.format import disagreement_style, number_text
from dialjudge.tui.screens.score_cells import ScoreCells, widest_number
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.widgets.virtual_table import Column, TableCell, VirtualTable


class TableApp(App[None]):
    CSS_PATH = "../../tui/widgets/virtual_table.tcss"

    def compose(self) -> ComposeResult:
        yield VirtualTable(id="t")


class DictSource:
    """A CellSource over a dict of cells that counts the cells it built."""

    def __init__(self, cells: dict[tuple[Any, str], TableCell]) -> None:
        self.cells = cells
        self.built = 0

    def cell(self, key: Any, column: str) -> TableCell:
        self.built += 1
        return self.cells[key, column]

    def sort_key(self, key: Any, column: str) -> Any:
        return self.cells[key, column].sort

    def widest_text(self, column: str) -> int:
        return max(cell_len(c.text) for (_, name), c in self.cells.items() if name == column)


def number(value: float | None) -> TableCell:
    return TableCell("–" if value is None else f"{value:.2f}", "green" if value and value > 0.5 else "", value)


COLUMNS = [Column("name", "name"), Column("score", "score", align="right"), Column("other", "other", max_width=6)]
N_ROWS = 500


def data() -> dict[tuple[Any, str], TableCell]:
    cells = {}
    for i in range(N_ROWS):
        cells[i, "name"] = TableCell.of(f"Row {i % 37} item {i}")
        cells[i, "score"] = number(None if i % 7 == 0 else (i * 7919 % 1000) / 1000)
        cells[i, "other"] = number((i % 13) * 1.5 - 9)  # negative, and wider than max_width at times
    return cells


def lines(table: VirtualTable) -> list[str]:
    return ["".join(s.text for s in table.render_line(y)) for y in range(table.scrollable_content_region.height)]


async def test_lazy_rows_draw_and_sort_like_eager_rows_and_build_only_what_shows():
    cells = data()
    eager_app, lazy_app = TableApp(), TableApp()
    async with eager_app.run_test(size=(70, 14)) as eager_pilot, lazy_app.run_test(size=(70, 14)) as lazy_pilot:
        eager, lazy = eager_app.query_one(VirtualTable), lazy_app.query_one(VirtualTable)
        eager.set_columns(COLUMNS)
        eager.set_rows((i, [cells[i, c.key] for c in COLUMNS]) for i in range(N_ROWS))
        source = DictSource(cells)
        lazy.set_columns(COLUMNS)
        lazy.set_lazy_rows(range(N_ROWS), source)
        assert lazy.column_widths == eager.column_widths
        await eager_pilot.pause()
        await lazy_pilot.pause()
        assert lines(lazy) == lines(eager)
        page = lazy.scrollable_content_region.height
        assert 0 < lazy.built_count <= page and source.built <= page * len(COLUMNS)

        built = source.built
        for column in ("name", "score", "other"):
            for reverse in (False, True):
                eager.sort_by(column, reverse)
                lazy.sort_by(column, reverse)
                assert lazy.row_keys == eager.row_keys
        assert source.built == built  # sorting asks for sort keys, never builds cells

        for table, pilot in ((eager, eager_pilot), (lazy, lazy_pilot)):
            table.focus()
            await pilot.press("pagedown", "pagedown", "down")
            await pilot.pause()
        assert lazy.cursor_key == eager.cursor_key
        assert lines(lazy) == lines(eager)
        assert lazy.row(lazy.cursor_key) == eager.row(eager.cursor_key)
        assert lazy.built_count < N_ROWS


async def test_adding_a_column_keeps_rows_cursor_and_sort_and_invalidate_redraws_changed_cells():
    cells = data()
    app = TableApp()
    async with app.run_test(size=(70, 14)) as pilot:
        table = app.query_one(VirtualTable)
        source = DictSource(cells)
        table.set_columns(COLUMNS[:2])
        table.set_lazy_rows(range(N_ROWS), source)
        table.set_filter(lambda key: key % 2 == 0)
        table.sort_by("score", reverse=True)
        table.move_cursor_to(42)
        order = table.row_keys
        await pilot.pause()

        table.set_columns(COLUMNS)  # a new column: the rows, their order and the cursor stay
        assert table.row_keys == order and table.cursor_key == 42 and table.sort_column == "score"
        assert table.total_count == N_ROWS and table.row_count == N_ROWS // 2
        assert table.cell(42, "other") == cells[42, "other"]

        # A change in the data shows once its cells are invalidated; the sort column re-sorts.
        shown = table.row_keys[0]
        table.cell(shown, "name")  # built and kept
        cells[shown, "name"] = TableCell.of("renamed")
        assert table.cell(shown, "name").text != "renamed"
        table.invalidate([shown], ["name"])
        assert table.cell(shown, "name").text == "renamed"
        cells[42, "score"] = number(2.0)
        table.invalidate([42], ["score"])
        assert table.row_keys[0] == 42 and table.cursor_key == 42
        cells[42, "score"] = number(None)
        table.invalidate(None, ["score"])
        missing = [k for k in table.row_keys if cells[k, "score"].sort is None]
        assert table.row_keys[-len(missing):] == missing and 42 in missing  # missing sorts last

        table.set_columns([COLUMNS[0], COLUMNS[2]])  # a column dropped and added back is rebuilt
        cells[42, "score"] = number(0.25)
        table.set_columns(COLUMNS)
        assert table.cell(42, "score").text == "0.25"


@pytest.mark.parametrize("values, digits", [
    ([0.5, 0.25, 1.0], 3),
    ([-12.5, 3.0, None, float("nan")], 3),
    ([9.9996, 0.1], 3),  # rounds up to a wider text
    ([float("inf"), 0.123456], 2),
    ([float("-inf")], 2),
    ([None], 2),
    ([], 3),
])
def test_widest_number_is_the_widest_formatted_value(values, digits):
    expected = max((cell_len(number_text(v, digits)) for v in values), default=0)
    assert widest_number(values, digits) == expected


def fake_judgment(item_id: str, normalized: float | None) -> Judgment:
    return Judgment(item_id=item_id, judge="fake", mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="",
                    score=None if normalized is None else 1 + 4 * normalized, normalized=normalized)


def expected_cell(app: Any, item_id: str, column: str) -> TableCell:
    """What the Scores table showed for a cell when it built every row up front."""
    ws = app.workspace
    example = ws.dataset.get(item_id)
    if column == "id":
        return TableCell.of(example.id)
    if column == "system":
        return TableCell.of(example.system or "")
    if column == "human":
        human = ws.human_label(example)
        return TableCell(number_text(human, 2), "bold", human)
    scores = ws.scores_of(column)
    if item_id not in scores:
        return TableCell("·", "dim", None)
    value = scores[item_id]
    if value is None:
        return TableCell("fail", "red", None)
    unit = ws.human_unit(example)
    return TableCell(number_text(value), disagreement_style(None if unit is None else abs(value - unit)), value)


def assert_table_shows_the_workspace(app: Any, table: VirtualTable) -> None:
    keys = [ex.id for ex in app.workspace.dataset.examples]
    for column in table.columns:
        expected = {key: expected_cell(app, key, column.key) for key in keys}
        for key in keys:
            got = table.cell(key, column.key)
            assert (got.text, got.style) == (expected[key].text, expected[key].style)
            assert got.sort == expected[key].sort or (math.isnan(got.sort) and math.isnan(expected[key].sort))
        if column.width is None:  # fitted as when every cell was measured
            widest = max([cell_len(column.label) + 2, *(cell_len(c.text) for c in expected.values())])
            assert table.column_widths[column.key] == min(widest, column.max_width)


async def test_scores_table_cells_and_a_run_adding_its_column_keeps_rows_and_selection(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ScoresScreen)
        table = screen.table
        assert isinstance(table.source, ScoreCells)
        examples = app.workspace.dataset.examples
        assert table.built_count < len(examples)  # only the rows on screen were built
        assert_table_shows_the_workspace(app, table)

        table.sort_by("human", reverse=True)
        chosen = table.row_keys[17]
        table.move_cursor_to(chosen)
        order = table.row_keys
        await pilot.pause()

        app.post_message(RunEventReceived(RunStarted(run_id=3, total=len(examples))))
        failed = {ex.id for ex in examples[::5]}
        for k, ex in enumerate(examples[:40]):
            judgment = fake_judgment(ex.id, None if ex.id in failed else (k % 11) / 10)
            app.post_message(RunEventReceived(JudgmentScored(judgment, k + 1, len(examples))))
        await pilot.pause()
        app.datasets.flush_live_updates()
        await pilot.pause()

        assert "fake#3" in [c.key for c in table.columns]
        assert table.row_keys == order and table.cursor_key == chosen and table.sort_column == "human"
        assert_table_shows_the_workspace(app, table)

        table.sort_by("fake#3")  # sorts by the judge's scores; failed and unscored items last
        scored = [ex.id for ex in examples[:40] if ex.id not in failed]
        assert set(table.row_keys[:len(scored)]) == set(scored)
        values = [app.workspace.scores_of("fake#3")[key] for key in table.row_keys[:len(scored)]]
        assert values == sorted(values)
