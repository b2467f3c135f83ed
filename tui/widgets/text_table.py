"""A small table laid out once, as lines of text: for panels that redraw while a run streams in.

It draws what Rich's ``Table(box=None, padding=(0, 1), show_edge=False)`` draws for cells that do not wrap
(each column as wide as its widest cell, one space either side of every cell, the header in its own style),
but as one :class:`~rich.text.Text`. Textual measures a widget's width and height and then renders it, so a
Rich ``Table`` is laid out three times per update, each time measuring and rendering every cell: 20-30 ms of
the UI thread for the Scores screen's 26-line agreement panel, at every refresh of a 100,000-item run. These
lines measure and render in well under a millisecond.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.text import Text

Cell = Text | str


@dataclass(frozen=True)
class Column:
    header: str
    justify: Literal["left", "right"] = "left"
    min_width: int = 0
    #: Longer cells end in "…" (Rich's default overflow for a cell that does not wrap).
    max_width: int | None = None


def table_lines(columns: Sequence[Column], rows: Sequence[Sequence[Cell]], *,
                header_style: str = "bold") -> list[Text]:
    """The header line and one line per row; a row shorter than ``columns`` leaves the rest blank."""
    cells = [[_text(row[k]) if k < len(row) else Text("") for k in range(len(columns))] for row in rows]
    widths = []
    for k, column in enumerate(columns):
        width = max([cell_len(column.header), column.min_width, *(cell.cell_len for row in cells for cell in row[k:k + 1])])
        widths.append(width if column.max_width is None else min(width, column.max_width))
    header = _line([Text(c.header, style=header_style) for c in columns], columns, widths, pad_style=header_style)
    return [header, *(_line(row, columns, widths) for row in cells)]


def _text(cell: Cell) -> Text:
    return cell.copy() if isinstance(cell, Text) else Text(cell)


def _line(cells: Sequence[Text], columns: Sequence[Column], widths: Sequence[int], *, pad_style: str = "") -> Text:
    line = Text()
    for cell, column, width in zip(cells, columns, widths, strict=True):
        if cell.cell_len > width:
            cell.truncate(width, overflow="ellipsis")
        # The cell's own style covers its justification, as in Rich; the space either side takes the row's.
        room = width - cell.cell_len
        if column.justify == "right":
            cell.pad_left(room)
        else:
            cell.pad_right(room)
        line.append(" ", style=pad_style)
        line.append_text(cell)
        line.append(" ", style=pad_style)
    return line


def joined(lines: Sequence[Text]) -> Text:
    """The lines as one text, one per line."""
    return Text("\n").join(lines)
