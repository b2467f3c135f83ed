"""core.table_fit: a table fits a width without cutting a number; names are shortened apart."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dialjudge.core.table_fit import (
    ELLIPSIS,
    NAME_FLOOR,
    ColumnKind,
    FitColumn,
    distinct_abbreviations,
    fit_table,
    shorten,
    text_width,
)

USR_SYSTEMS = ["Original Ground Truth", "Argmax Decoding", "Nucleus Decoding (p = 0.3)",
               "Nucleus Decoding (p = 0.5)", "Nucleus Decoding (p = 0.7)", "New Human Generated"]


def boxed(n: int) -> int:
    """Rich's boxed table without edge padding: 2 edges, n - 1 rules, 1 cell of padding a side inside."""
    return 2 + (n - 1) + max(0, 2 * n - 2)


def line_width(widths: tuple[int, ...]) -> int:
    return sum(widths) + boxed(len(widths))


def test_usr_system_names_cut_at_16_stay_apart_and_keep_their_p() -> None:
    short = distinct_abbreviations(USR_SYSTEMS, 16)
    assert len(set(short.values())) == len(USR_SYSTEMS)
    assert all(text_width(s) <= 16 for s in short.values())
    assert short["Nucleus Decoding (p = 0.3)"].endswith("0.3)")
    assert short["Nucleus Decoding (p = 0.7)"].startswith("Nucleus")
    # A name that fits stays whole; a long name with no look-alike is cut at its end.
    assert short["Argmax Decoding"] == "Argmax Decoding"
    assert short["Original Ground Truth"] == "Original Ground" + ELLIPSIS


def test_a_plain_cut_would_have_merged_them() -> None:
    # The bug this rule mends: the end-cut of the three nucleus systems is one text.
    assert len({shorten(name, 16) for name in USR_SYSTEMS[2:5]}) == 1


@given(st.lists(st.text(alphabet="ab (=.)0123", min_size=1, max_size=30), min_size=1, max_size=8, unique=True),
       st.integers(min_value=4, max_value=20))
def test_abbreviations_fit_and_keep_fitting_names(names: list[str], width: int) -> None:
    short = distinct_abbreviations(names, width)
    assert set(short) == set(names)
    for name, s in short.items():
        assert text_width(s) <= width
        if text_width(name) <= width:
            assert s == name


@given(st.lists(st.text(alphabet="abc", min_size=1, max_size=6), min_size=1, max_size=6, unique=True),
       st.text(alphabet="xyz ", min_size=10, max_size=20))
def test_names_that_differ_only_after_a_long_common_start_stay_apart(suffixes: list[str], stem: str) -> None:
    names = [stem + s for s in suffixes]
    short = distinct_abbreviations(names, 12)
    assert len(set(short.values())) == len(names), short


def test_wide_characters_count_double() -> None:
    assert text_width("电影") == 4
    assert text_width("ab") == 2
    assert text_width(shorten("电影电影电影", 7)) <= 7


def test_a_table_that_fits_is_laid_out_at_its_natural_widths() -> None:
    columns = [FitColumn("judge"), FitColumn("ρ", ColumnKind.NUMBER)]
    layout = fit_table(columns, [["fa", "0.412"], ["fb", "-0.031"]], 80, boxed)
    assert layout.dropped == ()
    (part,) = layout.parts
    assert part.columns == (0, 1)
    assert part.widths == (5, 6)


def test_text_wraps_before_any_column_is_dropped_and_numbers_keep_their_width() -> None:
    text = "a description of many short words " * 3
    columns = [FitColumn("name"), FitColumn("description"), FitColumn("value", ColumnKind.NUMBER, drop_rank=0)]
    layout = fit_table(columns, [["sample", text, "-0.123 [.41,.58]"]], 50, boxed)
    assert layout.dropped == ()
    (part,) = layout.parts
    assert part.widths[2] == len("-0.123 [.41,.58]")
    assert part.widths[1] < len(text)
    assert line_width(part.widths) <= 50


def test_droppable_columns_go_lowest_rank_first_and_are_named() -> None:
    columns = [FitColumn("id", ColumnKind.NUMBER), FitColumn("created", ColumnKind.NUMBER, drop_rank=0),
               FitColumn("mode", ColumnKind.NUMBER, drop_rank=1), FitColumn("done", ColumnKind.NUMBER)]
    row = ["12", "2026-11-28T08:24:10", "generate", "54/360"]
    natural = line_width((2, 19, 8, 6))
    assert fit_table(columns, [row], natural, boxed).dropped == ()
    only_created = fit_table(columns, [row], natural - 1, boxed)
    assert only_created.dropped == ("created",)
    assert only_created.parts[0].columns == (0, 2, 3)
    both = fit_table(columns, [row], line_width((2, 8, 6)) - 1, boxed)
    assert both.dropped == ("created", "mode")


def test_a_table_too_wide_without_droppable_columns_is_split_with_its_name_column_repeated() -> None:
    columns = [FitColumn("evaluator", ColumnKind.NAME, pinned=True),
               *(FitColumn(f"quality {k} ρ", ColumnKind.NUMBER) for k in range(8))]
    rows = [["BLEU-1", *(f"0.{k}12*\n[.07,.27]" for k in range(8))]]
    layout = fit_table(columns, rows, 60, boxed)
    assert len(layout.parts) > 1
    assert all(part.columns[0] == 0 for part in layout.parts)
    shown = [i for part in layout.parts for i in part.columns[1:]]
    assert shown == list(range(1, 9))  # every number shown once, in order
    for part in layout.parts:
        assert line_width(part.widths) <= 60
        assert all(w >= len("0.012*") for w in part.widths[1:])


def test_a_name_column_narrows_to_its_floor_not_below() -> None:
    columns = [FitColumn("system", ColumnKind.NAME), FitColumn("items", ColumnKind.NUMBER)]
    rows = [[name, "60"] for name in USR_SYSTEMS]
    layout = fit_table(columns, rows, 24, boxed)
    (part,) = layout.parts
    assert part.widths[0] >= NAME_FLOOR
    assert line_width(part.widths) <= 24
