"""The item view's rating table: rater columns headed r1, r2, … with a legend naming each rater."""

from __future__ import annotations

import io

from rich.console import Console

from dialjudge.core.model import Example, Rating, Scale, ScaleKind, Turn
from dialjudge.tui.widgets.item_view import _ratings_table


def rendered(example: Example, width: int = 60) -> str:
    console = Console(width=width, file=io.StringIO(), record=True, color_system=None)
    console.print(_ratings_table(example))
    return console.export_text()


def rated(annotators: tuple[str, ...]) -> Example:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    return Example(id="x", group_id="g", context=(Turn("A", "hi"),), candidate="hello",
                   ratings={"Overall": Rating((5, 5, 4), scale, annotators)})


def test_rater_columns_are_headed_by_position_and_the_legend_names_each_rater():
    text = rendered(rated(("sm", "me", "er")))
    header = next(line for line in text.splitlines() if "quality" in line)
    assert header.split() == ["quality", "scale", "r1", "r2", "r3", "mean"]
    assert "raters: r1 = sm · r2 = me · r3 = er" in text


def test_long_rater_names_do_not_squeeze_the_scores():
    names = ("annotator-with-a-long-id-0001", "annotator-with-a-long-id-0002", "annotator-with-a-long-id-0003")
    text = rendered(rated(names), width=40)
    row = next(line for line in text.splitlines() if line.strip().startswith("Overall"))
    assert row.split() == ["Overall", "1-5", "5", "5", "4", "4.67"]
    assert "…" not in row
    for name in names:
        assert name in text.replace("\n", "")


def test_unnamed_raters_need_no_legend():
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    example = Example(id="x", group_id="g", context=(Turn("A", "hi"),), candidate="hello",
                      ratings={"Overall": Rating((5, 4), scale)})
    text = rendered(example)
    assert "r1" in text and "r2" in text and "raters:" not in text
