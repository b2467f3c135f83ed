"""The Datasets screen's summary says what a ceiling rests on where raters were left out (issue 33)."""

from __future__ import annotations

from dialjudge.core.model import Example, Rating, Scale, ScaleKind
from dialjudge.core.stats.ceiling import CeilingRow, human_ceiling
from dialjudge.tui.widgets.dataset_summary import _rests_on_lines

LIKERT = Scale(ScaleKind.ORDINAL, 1, 5)


def examples(stray_items: int) -> list[Example]:
    """ann and bob on 30 items (scores that vary), cat on the first ``stray_items``."""
    out = []
    for i in range(30):
        names, scores = ("ann", "bob"), (1 + i % 5, 1 + (i * 2) % 5)
        if i < stray_items:
            names, scores = (*names, "cat"), (*scores, 1 + (i * 3) % 5)
        out.append(Example(f"i{i}", f"c{i}", (), "", ratings={"q": Rating(tuple(map(float, scores)), LIKERT, names)}))
    return out


def test_a_left_out_rater_is_named_in_the_summary_and_none_when_all_count() -> None:
    sparse = human_ceiling(examples(3), "q", n_boot=0)
    assert _rests_on_lines([CeilingRow("q", "turn", "ordinal 1-5", sparse)]) == [
        "q (turn): the ceiling rests on 2 of 3 raters and 30 of 30 items (pairs of raters sharing fewer than 10 "
        "items are left out)"]
    full = human_ceiling(examples(30), "q", n_boot=0)
    assert _rests_on_lines([CeilingRow("q", "turn", "ordinal 1-5", full)]) == []
