"""A table that draws only the rows on screen.

Textual's DataTable measures every cell of every row it is given, on the UI
thread: 10,000 rows of 15 columns froze the app for 1.8-5 s in our
measurements. This table keeps rows as plain data and renders the visible
lines on demand (Textual's line API), so setting, filtering, sorting and
updating 10,000 rows costs milliseconds. Columns have fixed widths (given, or
fitted to the content once when rows are set); the header line stays on top.

Rows come either as cells (``set_rows``) or as keys and a ``CellSource``
(``set_lazy_rows``): then a row's cells are built when the row is first drawn
and kept, sorting asks the source for sort keys instead of building cells,
adding a column keeps the rows, and ``invalidate`` drops the kept cells that a
change made stale. Building every cell of 10,000 rows of scores on the UI
thread stalled the app for seconds when a run added its judge's column.

Filtering and sorting more than ``async_order_rows`` rows happens on a thread
worker (sorting 100,000 rows took a quarter of a second per 20,000 on the UI
thread): the rows on show stay until the new order is swapped in, then
:class:`VirtualTable.Ordered` is posted. Numeric sort keys are sorted with
numpy (which lets go of the GIL while it sorts); the table keeps no per-row
index of positions, so swapping an order in costs nothing proportional to it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from operator import itemgetter
from typing import Any, Literal, Protocol

import numpy as np
from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.events import Click
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.worker import get_current_worker

from dialjudge.core.table_fit import distinct_abbreviations, shorten

from ..controllers.base import start_thread_work

RowKey = Hashable
GAP = 2
#: Tables with more rows than this filter and sort them on a thread worker.
ASYNC_ORDER_ROWS = 5_000


@dataclass(frozen=True)
class Column:
    key: str
    label: str
    #: Fixed width; None fits the widest of the label and the cells (up to max_width).
    width: int | None = None
    max_width: int = 40
    align: Literal["left", "right"] = "left"
    #: The column's values when they are names (systems): cut to the column, they stay apart
    #: (core.table_fit), not three rows of "Nucleus Decodin…".
    names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class TableCell:
    """One cell: its text, a Rich style string, and what it sorts by.

    ``sort`` None means missing: such cells sort after all others, whichever
    the direction.
    """

    text: str
    style: str = ""
    sort: Any = None

    @classmethod
    def of(cls, text: str, style: str = "") -> TableCell:
        return cls(text, style, text.lower())


class CellSource(Protocol):
    """Builds a lazy table's cells from the data, one at a time, when the table needs them."""

    def cell(self, key: RowKey, column: str) -> TableCell:
        """The cell of row ``key`` in ``column``."""
        ...

    def sort_key(self, key: RowKey, column: str) -> Any:
        """What ``cell(key, column)`` sorts by (its ``sort``), without building the cell."""
        ...

    def widest_text(self, column: str) -> int:
        """The width in cells of the column's widest text (fits a column without a width)."""
        ...


def sort_values(source: CellSource, keys: Sequence[RowKey], column: str) -> list[Any]:
    """Every key's sort key in ``column``: the source's ``sort_keys`` (all at once, faster) when it has one."""
    many = getattr(source, "sort_keys", None)
    if many is not None:
        return list(many(keys, column))
    return [source.sort_key(key, column) for key in keys]


def ordered_keys(keys: Sequence[RowKey], values: Sequence[Any] | None, reverse: bool) -> list[RowKey]:
    """``keys`` sorted by ``values`` (None: left as they are), stably in both directions; a None
    value (missing) sorts last whichever the direction. Real numbers are sorted by numpy."""
    if values is None:
        return list(keys)
    present = [i for i, value in enumerate(values) if value is not None]
    missing = [keys[i] for i, value in enumerate(values) if value is None]
    numbers = _as_numbers([values[i] for i in present])
    if numbers is not None:
        # A stable argsort of the negated values keeps ties in their given order, as list.sort(reverse=True).
        order = np.argsort(-numbers if reverse else numbers, kind="stable")
        picked = itemgetter(*order.tolist())(present) if len(order) > 1 else [present[i] for i in order.tolist()]
        ranked = [keys[i] for i in (picked if isinstance(picked, tuple) else list(picked))]
    else:
        pairs = [(keys[i], values[i]) for i in present]
        pairs.sort(key=itemgetter(1), reverse=reverse)
        ranked = [key for key, _ in pairs]
    return ranked + missing


def _as_numbers(values: list[Any]) -> np.ndarray | None:
    """The values as a float array when every one is a real number (NaN excepted: it does not sort)."""
    if not all(type(v) in (float, int) for v in values):
        return None
    numbers = np.asarray(values, dtype=float)
    return numbers if not np.isnan(numbers).any() else None


def compute_order(keys: Sequence[RowKey], keep: Callable[[RowKey], bool] | None, source: CellSource | None,
                  sort_value: Callable[[RowKey, str], Any], column: str | None, reverse: bool) -> list[RowKey]:
    """The rows to show in display order: ``keys`` that ``keep`` accepts, sorted by ``column``."""
    # On a worker beside the UI thread (the app's only other busy thread now that its statistics compute
    # in a process of their own): CPython hands the interpreter to a waiting UI thread every switch interval.
    shown = list(keys) if keep is None else [k for k in keys if keep(k)]
    if column is None:
        return shown
    if source is not None and getattr(source, "sort_keys", None) is not None:
        values = sort_values(source, shown, column)
    else:
        values = [sort_value(k, column) for k in shown]
    return ordered_keys(shown, values, reverse)


@lru_cache(maxsize=512)
def _style(spec: str) -> Style:
    return Style.parse(spec) if spec else Style()


class VirtualTable(ScrollView, can_focus=True):
    """Rows of cells under a fixed header; a row cursor and a column cursor for sorting."""

    BINDINGS = [
        Binding("up", "cursor_up", "Previous row", show=False),
        Binding("down", "cursor_down", "Next row", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first_row", "First row", show=False),
        Binding("end", "last_row", "Last row", show=False),
        Binding("left", "column_left", "Previous column", show=False),
        Binding("right", "column_right", "Next column", show=False),
        Binding("enter", "select_row", "Open row", show=False),
        Binding("o", "sort_column", "Sort by column"),
    ]

    COMPONENT_CLASSES = {
        "virtual-table--header",
        "virtual-table--cursor",
        "virtual-table--column-cursor",
        "virtual-table--empty",
    }

    cursor_row: reactive[int] = reactive(0, always_update=False, init=False)
    cursor_column: reactive[int] = reactive(0, always_update=False, init=False)

    @dataclass
    class RowHighlighted(Message):
        """The cursor moved onto a row."""

        table: VirtualTable
        key: RowKey | None

        @property
        def control(self) -> VirtualTable:
            return self.table

    @dataclass
    class RowSelected(Message):
        """Enter (or a double click) on a row."""

        table: VirtualTable
        key: RowKey

        @property
        def control(self) -> VirtualTable:
            return self.table

    @dataclass
    class Ordered(Message):
        """A new order of the rows (filtered and sorted) is on show; ``row_count`` rows."""

        table: VirtualTable
        row_count: int

        @property
        def control(self) -> VirtualTable:
            return self.table

    @dataclass
    class _OrderComputed(Message):
        """A worker's order for the table's ``generation``-th request (stale ones are dropped)."""

        generation: int
        order: list[RowKey]
        cursor: int

    @dataclass
    class Sorted(Message):
        """The rows were sorted by ``column``."""

        table: VirtualTable
        column: str
        reverse: bool

        @property
        def control(self) -> VirtualTable:
            return self.table

    def __init__(self, *, empty_text: str = "Nothing to show", name: str | None = None,
                 id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.empty_text = empty_text
        self._columns: list[Column] = []
        self._widths: list[int] = []
        #: Widths measured from the rows, by (column key, label, max width), while the rows stay.
        self._fitted: dict[tuple[str, str, int], int] = {}
        #: Labels, and the named columns' cells, shortened apart to their columns' widths.
        self._short_labels: dict[str, str] = {}
        self._sorted_labels: dict[str, str] = {}
        self._short_names: dict[str, dict[str, str]] = {}
        self._offsets: list[int] = []
        #: Every row's key, in the order given (a dict as an ordered set).
        self._keys: dict[RowKey, None] = {}
        #: The cells built so far, by row and column key (every cell when rows came as cells).
        self._cells: dict[RowKey, dict[str, TableCell]] = {}
        self._source: CellSource | None = None
        self._order: list[RowKey] = []
        self._filter: Callable[[RowKey], bool] | None = None
        self.sort_column: str | None = None
        self.sort_reverse = False
        #: More rows than this are ordered on a thread worker.
        self.async_order_rows = ASYNC_ORDER_ROWS
        #: Counts order requests; a worker's result for an older one is dropped.
        self._order_generation = 0
        #: A worker is computing the order for the newest request.
        self.ordering = False
        #: Announce Sorted when the pending order arrives.
        self._sorted_pending: tuple[str, bool] | None = None

    # -- data --------------------------------------------------------------------------

    @property
    def columns(self) -> list[Column]:
        return list(self._columns)

    @property
    def source(self) -> CellSource | None:
        """Where a lazy table's cells come from (None when rows were given as cells)."""
        return self._source

    def set_columns(self, columns: Sequence[Column]) -> None:
        """Replace the columns. Rows given as cells are dropped (their cells follow the columns);
        rows from a source stay, with the cursor on its row, and a new column's cells are built
        when their rows are drawn."""
        removed = {c.key for c in self._columns} - {c.key for c in columns}
        self._columns = list(columns)
        if self.sort_column not in {c.key for c in self._columns}:
            self.sort_column = None
        lazy = self._source is not None
        if not lazy:
            self._keys, self._cells = {}, {}
        elif removed:  # a column added back later must not show cells kept from before
            for built in self._cells.values():
                for column in removed:
                    built.pop(column, None)
        self._fit_widths(keep_fitted=lazy)
        self._rebuild_order(keep_cursor=lazy)

    def set_rows(self, rows: Iterable[tuple[RowKey, Sequence[TableCell]]]) -> None:
        """Replace every row; the filter and sort order stay, the cursor stays on its row."""
        keys = [c.key for c in self._columns]
        self._source = None
        self._keys, self._cells = {}, {}
        for key, cells in rows:
            if len(cells) != len(keys):
                raise ValueError(f"row {key!r} has {len(cells)} cells for {len(keys)} columns")
            self._keys[key] = None
            self._cells[key] = dict(zip(keys, cells, strict=True))
        self._fit_widths()
        self._rebuild_order()

    def set_lazy_rows(self, keys: Iterable[RowKey], source: CellSource) -> None:
        """Replace every row by ``keys`` whose cells ``source`` builds when a row is drawn; the
        filter and sort order stay, the cursor stays on its row."""
        self._source = source
        self._keys = dict.fromkeys(keys)
        self._cells = {}
        self._fit_widths()
        self._rebuild_order()

    def update_cells(self, updates: Iterable[tuple[RowKey, str, TableCell]]) -> None:
        """Change cells in place; re-sorts once when the sort column changed."""
        columns = {c.key for c in self._columns}
        resort = False
        on_screen = self._on_screen()
        for key, column, cell in updates:
            if key not in self._keys:
                continue
            if column not in columns:
                raise KeyError(f"no column {column!r}")
            self._cells.setdefault(key, {})[column] = cell
            if column == self.sort_column:
                resort = True
            else:
                line = on_screen.get(key)
                if line is not None:
                    self.refresh_line(line)
        if resort:
            self._rebuild_order()

    def invalidate(self, keys: Iterable[RowKey] | None, columns: Iterable[str]) -> None:
        """The source's data changed for ``keys`` (None: every row) in ``columns``: forget those
        built cells, redraw the rows on screen among them, re-sort once if the sort column is one."""
        if self._source is None:
            raise RuntimeError("invalidate needs rows from a CellSource (set_lazy_rows)")
        stale = list(columns)
        if keys is None:
            for built in self._cells.values():
                for column in stale:
                    built.pop(column, None)
        else:
            on_screen = self._on_screen()
            for key in keys:
                kept = self._cells.get(key)
                if kept is None:
                    continue  # never drawn: nothing kept, nothing on screen
                for column in stale:
                    kept.pop(column, None)
                line = on_screen.get(key)
                if line is not None:
                    self.refresh_line(line)
        if self.sort_column in stale:
            self._rebuild_order()
        elif keys is None:
            self.refresh()

    def cell(self, key: RowKey, column: str) -> TableCell:
        if key not in self._keys:
            raise KeyError(key)
        built = self._cells.setdefault(key, {})
        found = built.get(column)
        if found is None:
            if self._source is None or column not in {c.key for c in self._columns}:
                raise KeyError(column)
            found = built[column] = self._source.cell(key, column)
        return found

    def row(self, key: RowKey) -> dict[str, TableCell]:
        return {c.key: self.cell(key, c.key) for c in self._columns}

    def _row_cells(self, key: RowKey) -> list[TableCell]:
        """The row's cells in column order, built (and kept) where not built yet."""
        built = self._cells.get(key)
        if built is None:
            built = self._cells[key] = {}
        cells = []
        for column in self._columns:
            found = built.get(column.key)
            if found is None:
                assert self._source is not None, "rows given as cells hold every cell"
                found = built[column.key] = self._source.cell(key, column.key)
            cells.append(found)
        return cells

    @property
    def row_keys(self) -> list[RowKey]:
        """The shown rows, in display order."""
        return list(self._order)

    @property
    def row_count(self) -> int:
        return len(self._order)

    @property
    def total_count(self) -> int:
        return len(self._keys)

    @property
    def column_widths(self) -> dict[str, int]:
        """Each column's width in cells."""
        return {c.key: w for c, w in zip(self._columns, self._widths, strict=False)}

    @property
    def built_count(self) -> int:
        """How many rows have had cells built (all of them when rows came as cells)."""
        return len(self._cells)

    @property
    def cursor_key(self) -> RowKey | None:
        return self._order[self.cursor_row] if self._order else None

    def set_filter(self, keep: Callable[[RowKey], bool] | None) -> None:
        """Show only the rows ``keep`` accepts (None shows every row)."""
        self._filter = keep
        self._rebuild_order()

    def sort_by(self, column: str | None, reverse: bool = False) -> None:
        """Order rows by a column (None: the order they were given in)."""
        if column is not None and column not in {c.key for c in self._columns}:
            raise KeyError(f"no column {column!r}")
        self.sort_column = column
        self.sort_reverse = reverse
        self._sorted_pending = None if column is None else (column, reverse)
        self._rebuild_order()

    def move_cursor_to(self, key: RowKey) -> None:
        position = _index(self._order, key)
        if position is not None:
            self.cursor_row = position

    # -- order -------------------------------------------------------------------------

    def _rebuild_order(self, keep_cursor: bool = True) -> None:
        """Filter and sort the rows again: here for a small table, on a thread worker for a big one
        (the rows on show stay until the new order is swapped in by :meth:`_apply_order`)."""
        current = self.cursor_key if keep_cursor and self._order else None
        self._order_generation += 1
        generation = self._order_generation
        keys, keep, source = list(self._keys), self._filter, self._source
        column, reverse = self.sort_column, self.sort_reverse

        def order() -> tuple[list[RowKey], int]:
            found = compute_order(keys, keep, source, self._sort_value, column, reverse)
            return found, _index(found, current) or 0 if current is not None else 0

        # Every row in the given order (no filter, no sort: a new dataset's first view) is a copy of
        # the keys at C speed, and the rows show at once instead of after a worker's turn.
        if len(keys) <= self.async_order_rows or not self.is_attached or (keep is None and column is None):
            self.ordering = False
            self._apply_order(*order())
            return
        self.ordering = True

        def work() -> None:
            found, cursor = order()
            if not get_current_worker().is_cancelled:
                self.post_message(self._OrderComputed(generation, found, cursor))

        start_thread_work(self.app, work, group=f"table-order-{id(self)}", description="Sorting and filtering rows")

    def _on_virtual_table__order_computed(self, message: _OrderComputed) -> None:
        message.stop()
        if message.generation == self._order_generation:
            self.ordering = False
            self._apply_order(message.order, message.cursor)

    def _apply_order(self, order: list[RowKey], cursor: int) -> None:
        self._order = order
        self.virtual_size = Size(self._total_width(), len(order) + 1)
        target = min(cursor, max(len(order) - 1, 0))
        if target != self.cursor_row:
            self.cursor_row = target
        else:
            self._announce_cursor()
        self.refresh()
        self.post_message(self.Ordered(self, len(order)))
        if self._sorted_pending is not None:
            column, reverse = self._sorted_pending
            self._sorted_pending = None
            self.post_message(self.Sorted(self, column, reverse))

    def _sort_value(self, key: RowKey, column: str) -> Any:
        """A built cell's sort value, else the source's sort key (never builds a cell)."""
        built = self._cells.get(key)
        found = built.get(column) if built is not None else None
        if found is not None:
            return found.sort
        assert self._source is not None, "rows given as cells hold every cell"
        return self._source.sort_key(key, column)

    # -- geometry ----------------------------------------------------------------------

    def _fit_widths(self, *, keep_fitted: bool = False) -> None:
        """Each column's width. ``keep_fitted``: the rows and their source are unchanged, so a column
        fitted before keeps its width and only new ones are measured (measuring reads every row:
        a second for the columns of 100,000 items, each time a run added its judge's column)."""
        fitted = self._fitted if keep_fitted else {}
        widths = []
        for column in self._columns:
            if column.width is not None:
                widths.append(column.width)
                continue
            known = fitted.get((column.key, column.label, column.max_width))
            if known is not None:
                widths.append(known)
                continue
            widest = cell_len(column.label) + 2  # room for the sort arrow
            if self._source is not None:
                widest = max(widest, self._source.widest_text(column.key))
            else:
                for cells in self._cells.values():
                    text = cells[column.key].text
                    if len(text) > widest:
                        widest = max(widest, cell_len(text))
            widths.append(min(widest, column.max_width))
        self._fitted = {(c.key, c.label, c.max_width): w for c, w in zip(self._columns, widths, strict=True)}
        self._widths = widths
        self._shorten_apart()
        offsets, x = [], 0
        for w in widths:
            offsets.append(x)
            x += w + GAP
        self._offsets = offsets

    def _shorten_apart(self) -> None:
        """Header labels cut to their widths stay apart from their neighbours' (evaluator names that
        share a start), as do a named column's cells."""
        by_width: dict[int, list[str]] = {}
        for column, width in zip(self._columns, self._widths, strict=True):
            by_width.setdefault(width, []).append(column.label)
        shortened = {width: distinct_abbreviations(labels, width) for width, labels in by_width.items()}
        # The sorted column's label leaves room for its arrow.
        arrowed = {width: distinct_abbreviations(labels, max(1, width - 2)) for width, labels in by_width.items()}
        self._short_labels = {c.key: shortened[w][c.label] for c, w in zip(self._columns, self._widths, strict=True)}
        self._sorted_labels = {c.key: arrowed[w][c.label] for c, w in zip(self._columns, self._widths, strict=True)}
        self._short_names = {c.key: distinct_abbreviations(c.names, w)
                             for c, w in zip(self._columns, self._widths, strict=True) if c.names}

    def _total_width(self) -> int:
        return sum(self._widths) + GAP * len(self._widths)

    def _page_height(self) -> int:
        return max(1, self.scrollable_content_region.height - 1)

    def _visible_rows(self) -> tuple[int, int]:
        top = int(self.scroll_offset.y)
        return top, top + self._page_height()

    def _on_screen(self) -> dict[RowKey, int]:
        """The rows on screen: key -> line (the header is line 0)."""
        top, bottom = self._visible_rows()
        return {key: top + i + 1 for i, key in enumerate(self._order[top:bottom])}

    # -- rendering ---------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        base = self.rich_style
        if y == 0:
            strip = self._header_strip(base)
        else:
            index = scroll_y + y - 1
            if index < len(self._order):
                strip = self._row_strip(index, base)
            elif index == 0 and not self._order:
                empty = self.get_component_rich_style("virtual-table--empty")
                strip = Strip([Segment(" " + self.empty_text, base + empty)])
            else:
                return Strip.blank(width, base)
        return strip.crop_extend(scroll_x, scroll_x + width, base)

    def _header_strip(self, base: Style) -> Strip:
        header = base + self.get_component_rich_style("virtual-table--header")
        column_cursor = header + self.get_component_rich_style("virtual-table--column-cursor")
        segments = []
        for i, (column, width) in enumerate(zip(self._columns, self._widths, strict=False)):
            label = self._short_labels.get(column.key, column.label)
            if column.key == self.sort_column:
                label = self._sorted_labels.get(column.key, column.label) + (" ▼" if self.sort_reverse else " ▲")
            style = column_cursor if i == self.cursor_column and self.has_focus else header
            segments.append(Segment(_fit(label, width, column.align), style))
            segments.append(Segment(" " * GAP, header))
        return Strip(segments)

    def _row_strip(self, index: int, base: Style) -> Strip:
        key = self._order[index]
        if key not in self._keys:  # gone with new rows whose order is still being computed
            return Strip([Segment(" …", base)])
        cells = self._row_cells(key)
        row_style = base
        if index == self.cursor_row:
            row_style = base + self.get_component_rich_style("virtual-table--cursor")
        segments = []
        for column, width, cell in zip(self._columns, self._widths, cells, strict=False):
            text = self._short_names[column.key].get(cell.text, cell.text) if column.names else cell.text
            segments.append(Segment(_fit(text, width, column.align), row_style + _style(cell.style)))
            segments.append(Segment(" " * GAP, row_style))
        return Strip(segments)

    # -- cursor ------------------------------------------------------------------------

    def validate_cursor_row(self, value: int) -> int:
        return max(0, min(value, len(self._order) - 1)) if self._order else 0

    def validate_cursor_column(self, value: int) -> int:
        return max(0, min(value, len(self._columns) - 1)) if self._columns else 0

    def watch_cursor_row(self, old: int, new: int) -> None:
        self.refresh_line(old + 1)
        self.refresh_line(new + 1)
        self._scroll_to_cursor()
        self._announce_cursor()

    def watch_cursor_column(self, old: int, new: int) -> None:
        self.refresh_line(self.scroll_offset.y)  # the header
        self.refresh()
        if self._columns:
            left = self._offsets[new]
            right = left + self._widths[new]
            width = self.scrollable_content_region.width
            if left < self.scroll_offset.x:
                self.scroll_to(x=left, animate=False)
            elif right > self.scroll_offset.x + width:
                self.scroll_to(x=right - width, animate=False)

    def _scroll_to_cursor(self) -> None:
        top, bottom = self._visible_rows()
        row = self.cursor_row
        if row < top:
            self.scroll_to(y=row, animate=False, immediate=True)
        elif row >= bottom:
            self.scroll_to(y=row - self._page_height() + 1, animate=False, immediate=True)

    def _announce_cursor(self) -> None:
        self.post_message(self.RowHighlighted(self, self.cursor_key))

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def action_cursor_up(self) -> None:
        self.cursor_row -= 1

    def action_cursor_down(self) -> None:
        self.cursor_row += 1

    def action_page_up(self) -> None:
        self.cursor_row -= self._page_height()

    def action_page_down(self) -> None:
        self.cursor_row += self._page_height()

    def action_first_row(self) -> None:
        self.cursor_row = 0

    def action_last_row(self) -> None:
        self.cursor_row = len(self._order) - 1

    def action_column_left(self) -> None:
        self.cursor_column -= 1

    def action_column_right(self) -> None:
        self.cursor_column += 1

    def action_select_row(self) -> None:
        key = self.cursor_key
        if key is not None:
            self.post_message(self.RowSelected(self, key))

    def action_sort_column(self) -> None:
        """Sort by the column under the column cursor; again to reverse."""
        if not self._columns:
            return
        key = self._columns[self.cursor_column].key
        self.sort_by(key, reverse=not self.sort_reverse if key == self.sort_column else False)

    async def _on_click(self, event: Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self._columns:
            return
        x = offset.x + int(self.scroll_offset.x)
        column = max((i for i, start in enumerate(self._offsets) if start <= x), default=0)
        if offset.y == 0:
            self.cursor_column = column
            self.action_sort_column()
            return
        row = int(self.scroll_offset.y) + offset.y - 1
        if row < len(self._order):
            self.cursor_column = column
            self.cursor_row = row
            if event.chain >= 2:
                self.action_select_row()


def _fit(text: str, width: int, align: str) -> str:
    """Pad or cut ``text`` to exactly ``width`` cells (an ellipsis marks a cut)."""
    if cell_len(text) > width:
        text = shorten(text, width)  # the rule the command line's tables follow (core.table_fit)
        if cell_len(text) > width:  # a character Rich measures otherwise
            return set_cell_size(text, width)
    pad = " " * (width - cell_len(text))
    return pad + text if align == "right" else text + pad


def _index(keys: list[RowKey], key: RowKey) -> int | None:
    """Where ``key`` is in ``keys`` (None: not there)."""
    try:
        return keys.index(key)
    except ValueError:
        return None
