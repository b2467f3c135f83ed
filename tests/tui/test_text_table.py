"""The panels' hand-laid tables draw what Rich's Table draws (the independent computation), character and style."""

from __future__ import annotations

import random

import pytest
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from dialjudge.tui.widgets.text_table import Column, joined, table_lines

STYLES = ["", "dim", "bold", "red", "bold cyan", "dim italic"]


def styled_chars(renderable: RenderableType, width: int = 250) -> list[list[tuple[str, str]]]:
    """Each line as (character, style) pairs, without the unstyled spaces Rich pads a line's end with.
    Wide enough for every table drawn here: one wider than its room is squeezed by Rich and wrapped by Textual."""
    console = Console(width=width, color_system="truecolor", force_terminal=True)
    lines = console.render_lines(renderable, console.options.update(width=width), pad=False)
    out = []
    for line in lines:
        row = [(ch, str(seg.style) if seg.style else "") for seg in line for ch in seg.text]
        while row and row[-1] == (" ", ""):
            row.pop()
        out.append(row)
    return out


def rich_table(columns: list[Column], rows: list[list[Text]]) -> Table:
    table = Table(box=None, padding=(0, 1), show_edge=False, expand=False, header_style="bold")
    for c in columns:
        table.add_column(c.header, justify=c.justify, min_width=c.min_width or None, max_width=c.max_width,
                         no_wrap=True)
    for row in rows:
        table.add_row(*[cell.copy() for cell in row])
    return table


@pytest.mark.parametrize("seed", range(8))
def test_random_tables_draw_as_rich_draws_them(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(40):
        n_columns = rng.randint(1, 6)
        columns = [Column(rng.choice(["a", "evaluator", "ρ", "n", "", "judge \\ human"]),
                          rng.choice(["left", "right"]), rng.choice([0, 5, 11]), rng.choice([None, 6, 18]))
                   for _ in range(n_columns)]
        rows = [[Text("".join(rng.choice("ab ●.-1é") for _ in range(rng.randint(1, 24))).strip() or "x",
                      style=rng.choice(STYLES)) for _ in range(n_columns)]
                for _ in range(rng.randint(1, 6))]
        assert styled_chars(joined(table_lines(columns, rows))) == styled_chars(rich_table(columns, rows))


def test_a_long_cell_ends_in_an_ellipsis_and_a_short_row_leaves_blanks() -> None:
    columns = [Column("evaluator", max_width=8), Column("r", justify="right")]
    lines = table_lines(columns, [[Text("a-very-long-name"), "0.5"], [Text("x")]])
    assert [line.plain.rstrip() for line in lines] == [" evaluat…    r", " a-very-…  0.5", " x"]
