"""A TextArea for judge templates: TOML highlighting, with the template's placeholders marked.

Textual's own highlighting needs tree-sitter, an optional extra that may be
missing; this editor lexes with Pygments' TOML lexer instead (Pygments comes
with Rich), so keys, strings, comments and table headers are coloured on
every install, and the screen looks the same everywhere. Placeholders such
as ``{context}`` or ``{persona|no persona}`` inside strings get their own
colour: they are what the template fills per item.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterable
from functools import lru_cache

from textual.widgets import TextArea

#: ``{name}`` or ``{name|default}``; ``{{`` and ``}}`` are literal braces and never match.
PLACEHOLDER = re.compile(r"(?<!\{)\{([a-z_][a-z0-9_]*)(\|[^{}\n]*)?\}(?!\})")

#: Pygments token type (as text, most specific first) -> TextArea theme highlight name.
_HIGHLIGHT_NAMES: tuple[tuple[str, str], ...] = (
    ("Token.Comment", "comment"),
    ("Token.Literal.String", "string"),
    ("Token.Literal.Number", "number"),
    ("Token.Keyword.Constant", "boolean"),
    ("Token.Keyword", "keyword"),
    ("Token.Name", "toml.type"),
    ("Token.Operator", "operator"),
    ("Token.Punctuation", "punctuation.delimiter"),
)

Highlight = tuple[int, "int | None", str]


@lru_cache(maxsize=64)
def _highlight_name(token_type: str) -> str | None:
    for prefix, name in _HIGHLIGHT_NAMES:
        if token_type == prefix or token_type.startswith(prefix + "."):
            return name
    return None


def toml_highlights(text: str) -> dict[int, list[Highlight]]:
    """Per line, (start byte, end byte or None for the line end, highlight name), in drawing order."""
    # Imported by name: pygments ships no type hints (types-Pygments is not a dependency).
    lexers = importlib.import_module("pygments.lexers")

    lines = text.split("\n")
    out: dict[int, list[Highlight]] = {}
    # Character offset of each line start, to place tokens that span lines.
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)

    def add(row: int, start_col: int, end_col: int | None, name: str) -> None:
        line = lines[row]
        start = len(line[:start_col].encode("utf-8"))
        end = None if end_col is None else len(line[:end_col].encode("utf-8"))
        if end is None or end > start:
            out.setdefault(row, []).append((start, end, name))

    row = 0
    strings: list[tuple[int, int]] = []
    for index, token_type, value in lexers.TOMLLexer().get_tokens_unprocessed(text):
        name = _highlight_name(str(token_type))
        if name is None or not value:
            continue
        while row + 1 < len(starts) and starts[row + 1] <= index:
            row += 1
        end_index = index + len(value)
        if name == "string":
            strings.append((index, end_index))
        _span(starts, lines, row, index, end_index, name, add)
    for start, end in _placeholders(text, strings):
        r = _row_of(starts, start)
        _span(starts, lines, r, start, end, "function", add)
    return out


def _row_of(starts: list[int], index: int) -> int:
    from bisect import bisect_right

    return bisect_right(starts, index) - 1


def _span(starts: list[int], lines: list[str], row: int, start: int, end: int, name: str,
          add: Callable[[int, int, int | None, str], None]) -> None:
    """Add one highlight per line the character range [start, end) covers."""
    while row < len(lines) and start < end:
        line_start = starts[row]
        line_end = line_start + len(lines[row])
        if start <= line_end:
            stop = min(end, line_end)
            add(row, start - line_start, stop - line_start if end <= line_end else None, name)
        row += 1
        start = max(start, line_end + 1)


def _placeholders(text: str, strings: Iterable[tuple[int, int]]) -> Iterable[tuple[int, int]]:
    for start, end in strings:
        for match in PLACEHOLDER.finditer(text, start, end):
            yield match.start(), match.end()


class TomlEditor(TextArea):
    """A TOML TextArea whose highlighting works with or without tree-sitter."""

    def __init__(self, text: str = "", *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(text, language=None, soft_wrap=False, show_line_numbers=True, tab_behavior="focus",
                         id=id, classes=classes)

    def _build_highlight_map(self) -> None:
        # TextArea calls this after every edit; with no tree-sitter language it only clears
        # the map (and its line cache), which the lexer then fills.
        super()._build_highlight_map()
        self._highlights.update(toml_highlights(self.text))
