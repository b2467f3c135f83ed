"""How a table fits a width, shared by the command line and the app (no UI here).

A table too wide for its terminal must never cut a number: "-0.…" or "54/3…" reads as another
value. So a column says what it holds: numbers (counts, coefficients, intervals, dates, hashes)
stay whole on one line; text wraps at spaces; a name stays on one line and, when it must be
shortened, keeps what tells it apart from the other names of its column ("Nucleus Dec…0.3)",
not three rows of "Nucleus Decodin…"). When the narrowest layout is still too wide, the columns
the table marks as droppable go first (the caller says which went), then the rest is split into
parts stacked one under the other, each repeating the pinned columns (the row's name).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

ELLIPSIS = "…"
#: A text column is not wrapped narrower than this (or its longest word, up to WORD_CAP).
TEXT_FLOOR = 10
#: Words longer than this may be folded across lines in a text column (paths, long identifiers).
WORD_CAP = 16
#: A name column is not shortened below this.
NAME_FLOOR = 12


class ColumnKind(Enum):
    NUMBER = "number"  # whole, on one line: never cut, never wrapped
    TEXT = "text"  # wraps at spaces; a word longer than the column folds
    NAME = "name"  # one line; shortened by distinct_abbreviations when the column is narrower


@dataclass(frozen=True)
class FitColumn:
    header: str
    kind: ColumnKind = ColumnKind.TEXT
    #: Lower goes first when the table must shed columns; None: never dropped.
    drop_rank: int | None = None
    #: Repeated at the left of every part when the table is split (the row's name).
    pinned: bool = False


@dataclass(frozen=True)
class TablePart:
    columns: tuple[int, ...]  # indices into the table's columns, in their order
    widths: tuple[int, ...]  # each one's content width (without padding or borders)


@dataclass(frozen=True)
class TableLayout:
    parts: tuple[TablePart, ...]  # one part unless the table had to be split
    dropped: tuple[str, ...]  # headers of the columns left out, in table order


def text_width(text: str) -> int:
    """Terminal cells ``text`` takes: wide East Asian characters two, combining marks none."""
    width = 0
    for char in text:
        if unicodedata.combining(char):
            continue
        width += 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
    return width


def _line_widths(text: str) -> list[int]:
    return [text_width(line) for line in text.split("\n")]


def _word_widths(text: str) -> list[int]:
    return [text_width(word) for word in text.split()]


def column_widths(column: FitColumn, cells: Sequence[str]) -> tuple[int, int]:
    """(narrowest, natural) content width of a column: its header wraps at spaces; its cells as its kind allows."""
    header_word = max(_word_widths(column.header), default=0)
    widest = max((w for cell in cells for w in _line_widths(cell)), default=0)
    natural = max(widest, text_width(column.header), 1)
    if column.kind is ColumnKind.NUMBER:
        return max(widest, header_word, 1), natural
    if column.kind is ColumnKind.NAME:
        return min(natural, max(NAME_FLOOR, header_word)), natural
    longest_word = max((w for cell in cells for w in _word_widths(cell)), default=0)
    return min(natural, max(TEXT_FLOOR, header_word, min(longest_word, WORD_CAP))), natural


def fit_table(columns: Sequence[FitColumn], rows: Sequence[Sequence[str]], width: int,
              overhead: Callable[[int], int]) -> TableLayout:
    """The layout of a table of ``rows`` (cell texts, a line break allowed) in ``width`` terminal cells.

    ``overhead(n)``: what borders and padding of ``n`` columns take beside their contents. The first
    column is pinned when no column is. Text and name columns narrow first, then droppable columns go
    (lowest ``drop_rank`` first, the rightmost of a rank first), then the table is split into parts.
    """
    cells = [[str(row[i]) if i < len(row) else "" for row in rows] for i in range(len(columns))]
    bounds = [column_widths(column, cells[i]) for i, column in enumerate(columns)]
    narrow = [low for low, _ in bounds]

    def fits(shown: Sequence[int]) -> bool:
        return sum(narrow[i] for i in shown) + overhead(len(shown)) <= width

    shown = list(range(len(columns)))
    dropped: list[int] = []
    while not fits(shown):
        candidates = [i for i in shown if columns[i].drop_rank is not None]
        if not candidates:
            break
        victim = min(candidates, key=lambda i: (columns[i].drop_rank, -i))
        shown.remove(victim)
        dropped.append(victim)
    if fits(shown) or len(shown) <= 1:
        groups = [shown]
    else:
        groups = _split(shown, columns, fits)
    parts = tuple(TablePart(tuple(g), _share(g, columns, bounds, width - overhead(len(g)))) for g in groups)
    return TableLayout(parts, tuple(columns[i].header for i in sorted(dropped)))


def _split(shown: list[int], columns: Sequence[FitColumn], fits: Callable[[Sequence[int]], bool]) -> list[list[int]]:
    """Stacked parts, each the pinned columns and as many of the others, in order, as fit."""
    pinned = [i for i in shown if columns[i].pinned] or shown[:1]
    rest = [i for i in shown if i not in pinned]
    groups: list[list[int]] = []
    current: list[int] = []
    for i in rest:
        trial = sorted(pinned + current + [i])
        if current and not fits(trial):
            groups.append(sorted(pinned + current))
            current = []
        current.append(i)
    if current:
        groups.append(sorted(pinned + current))
    return groups


def _share(group: Sequence[int], columns: Sequence[FitColumn], bounds: Sequence[tuple[int, int]],
           room: int) -> tuple[int, ...]:
    """Narrowest widths, then the room left: first to text and names short of their natural width (a
    wrapped or shortened cell), then to numbers' headers (a header on fewer lines), each in proportion
    to what it lacks."""
    widths = {i: bounds[i][0] for i in group}
    spare = room - sum(widths.values())
    for numbers in (False, True):
        takers = [i for i in group if (columns[i].kind is ColumnKind.NUMBER) == numbers]
        spare = _hand_out(takers, widths, {i: bounds[i][1] for i in takers}, spare)
    return tuple(widths[i] for i in group)


def _hand_out(takers: Sequence[int], widths: dict[int, int], natural: Mapping[int, int], spare: int) -> int:
    """Widen ``takers`` towards their natural widths with at most ``spare`` cells; what is left."""
    lack = {i: natural[i] - widths[i] for i in takers}
    total = sum(lack.values())
    if spare <= 0 or total == 0:
        return max(spare, 0)
    if spare >= total:
        for i in takers:
            widths[i] = natural[i]
        return spare - total
    given = {i: spare * lack[i] // total for i in takers}
    left = spare - sum(given.values())
    for i in sorted(takers, key=lambda i: lack[i] - given[i], reverse=True)[:left]:
        given[i] += 1
    for i in takers:
        widths[i] += given[i]
    return 0


def shorten(text: str, width: int) -> str:
    """``text`` in at most ``width`` cells: its start and an ellipsis where it is longer."""
    if text_width(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS[:width]
    return _head(text, width - 1) + ELLIPSIS


def _head(text: str, width: int) -> str:
    out, used = [], 0
    for char in text:
        w = text_width(char)
        if used + w > width:
            break
        out.append(char)
        used += w
    return "".join(out)


def _tail(text: str, width: int) -> str:
    return _head(text[::-1], width)[::-1]


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def distinct_abbreviations(names: Sequence[str], width: int) -> dict[str, str]:
    """Each name in at most ``width`` cells, names that differ kept apart where the width allows.

    A name that fits stays whole. A longer one is cut at its end ("Nucleus Decodin…") unless another
    name would be cut to the same text: then it keeps its start and, after a middle ellipsis, the word
    where it parts from its closest sibling to the end ("Nucleus Dec…0.3)").
    """
    unique = list(dict.fromkeys(names))
    out = {name: shorten(name, width) for name in unique}
    by_short: dict[str, list[str]] = {}
    for name in unique:
        by_short.setdefault(out[name], []).append(name)
    for group in by_short.values():
        if len(group) < 2:
            continue
        for name in group:
            parts_at = max(_common_prefix(name, other) for other in group if other != name)
            out[name] = _keep_from(name, parts_at, width)
    _settle_collisions(out, width)
    return out


def _keep_from(name: str, parts_at: int, width: int) -> str:
    """``name``'s start, an ellipsis, and its end from the word holding position ``parts_at``."""
    if width < 3:
        return shorten(name, width)
    word_start = name.rfind(" ", 0, parts_at) + 1
    tail = name[word_start:]
    if text_width(tail) > width - 3:  # keep at least two characters of the start
        tail = name[parts_at:]
    if text_width(tail) > width - 1:  # the differing part alone is too long: its start
        return ELLIPSIS + _head(name[parts_at:], width - 1)
    head = _head(name, width - 1 - text_width(tail)).rstrip()
    return head + ELLIPSIS + tail


def _settle_collisions(out: dict[str, str], width: int) -> None:
    """Names still shortened alike (they differ only where no width shows): their ends instead."""
    seen: dict[str, list[str]] = {}
    for name, short in out.items():
        seen.setdefault(short, []).append(name)
    for group in seen.values():
        if len(group) > 1 and width > 1:
            for name in group:
                if out[name] != name:
                    out[name] = ELLIPSIS + _tail(name, width - 1)
