"""Notes that repeat per rater collapse into one line with a count."""

from __future__ import annotations

from dialjudge.core.format import collapse_rater_notes


def test_a_reason_many_raters_share_is_one_line_with_the_count_and_the_first_names() -> None:
    notes = [f"Overall (turn): w{i}: only one item rated: no correlation" for i in range(88)]
    notes += ["Overall (turn): alpha: undefined with one value", "Fluent (turn): w3: constant values",
              "a note without a rater"]
    assert collapse_rater_notes(notes) == [
        "Overall (turn): 88 raters (w0, w1, w2, … and 85 more): only one item rated: no correlation",
        "Overall (turn): alpha: undefined with one value",
        "Fluent (turn): w3: constant values",
        "a note without a rater",
    ]


def test_two_raters_are_both_named_and_the_order_is_kept() -> None:
    notes = ["Q (turn): a: same", "Q (turn): b: other", "Q (turn): c: same"]
    assert collapse_rater_notes(notes) == ["Q (turn): 2 raters (a, c): same", "Q (turn): b: other"]
