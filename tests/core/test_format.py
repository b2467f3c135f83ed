"""Number formats shared by the app and the CLI (core/format)."""

from __future__ import annotations

import math

import pytest

from dialjudge.core.format import MISSING, duration_text, interval_text, number_text, percent_text


@pytest.mark.parametrize(("value", "digits", "signed", "text"), [
    (0.41234, 3, False, "0.412"),
    (0.4125, 2, False, "0.41"),
    (-0.05, 3, True, "-0.050"),
    (0.05, 3, True, "+0.050"),
    (3, 2, False, "3.00"),
    (None, 3, False, MISSING),
    (math.nan, 3, True, MISSING),
])
def test_number_text(value, digits, signed, text):
    assert number_text(value, digits, signed=signed) == text


def test_percent_text_keeps_one_decimal_and_no_sign():
    assert percent_text(87.25) == "87.2"  # round-half-even on the binary value, as format() does
    assert percent_text(100.0) == "100.0"
    assert percent_text(None) == MISSING


def test_interval_text_drops_the_leading_zero_and_needs_both_ends():
    assert interval_text(0.41, 0.587) == "[.41,.59]"
    assert interval_text(-0.05, 1.2) == "[-.05,1.20]"
    assert interval_text(None, 0.5) == ""
    assert interval_text(0.1, math.nan) == ""


@pytest.mark.parametrize(("seconds", "text"), [
    (0, "0:00"), (59.4, "0:59"), (61, "1:01"), (3600, "1:00:00"), (3725, "1:02:05"), (None, "?"), (math.nan, "?")])
def test_duration_text(seconds, text):
    assert duration_text(seconds) == text
