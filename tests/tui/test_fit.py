"""FirstThatFits: the widest layout that fits the width it is given, else the last one."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.text import Text

from dialjudge.tui.widgets.fit import FirstThatFits


def shown(renderable, width: int) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(renderable)
    return console.export_text().strip()


def layouts() -> FirstThatFits:
    return FirstThatFits(lambda: Text("W" * 30), lambda: Text("M" * 20), lambda: Text("n" * 10))


@pytest.mark.parametrize(("width", "expected"), [(80, "W" * 30), (30, "W" * 30), (29, "M" * 20),
                                                  (20, "M" * 20), (19, "n" * 10)])
def test_the_first_layout_that_fits_is_shown(width, expected):
    assert shown(layouts(), width) == expected


def test_the_last_layout_is_shown_when_none_fits():
    assert shown(layouts(), 5).replace("\n", "") == "n" * 10  # wrapped, never dropped


def test_no_layouts_is_a_mistake():
    with pytest.raises(ValueError, match="at least one layout"):
        FirstThatFits()
