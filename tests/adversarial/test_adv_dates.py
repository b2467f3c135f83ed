"""Date and time swaps: same written form, a valid and different date; English and Chinese."""

from __future__ import annotations

import datetime as dt
import json
import random
import re

import pytest

from dialjudge.core.adversarial.dates import date_mentions, swap_dates
from shared_data import require_file

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September",
          "October", "November", "December"]


def _edits(text: str, seed: int, **kwargs):
    return swap_dates(text, rng=random.Random(seed), **kwargs).edits


@pytest.mark.parametrize("seed", range(20))
def test_month_day_year_stays_a_valid_different_date(seed: int) -> None:
    edits = _edits("the birthday of Cheer Chen is June 6, 1975", seed)
    assert edits
    for edit in edits:
        assert edit.original_span == "June 6, 1975"
        m = re.fullmatch(r"the birthday of Cheer Chen is ([A-Z][a-z]+) (\d{1,2}), (\d{4})", edit.text)
        assert m, edit.text
        date = dt.date(int(m.group(3)), MONTHS.index(m.group(1)) + 1, int(m.group(2)))
        assert date != dt.date(1975, 6, 6)
        assert date.year <= 2024


@pytest.mark.parametrize("seed", range(20))
def test_chinese_date_stays_a_valid_different_date(seed: int) -> None:
    for edit in _edits("是的，它是2001年12月28日上映的，很感人的电影。", seed):
        m = re.fullmatch(r"是的，它是(\d{4})年(\d{1,2})月(\d{1,2})日上映的，很感人的电影。", edit.text)
        assert m, edit.text
        date = dt.date(*(int(g) for g in m.groups()))
        assert date != dt.date(2001, 12, 28)


@pytest.mark.parametrize("seed", range(20))
def test_dates_without_year_never_become_invalid(seed: int) -> None:
    edits = _edits("it was june 30 and then july 31", seed, alternatives=3)
    assert edits  # else the loop below checks nothing
    for edit in edits:
        month_days = re.findall(r"([a-z]+) (\d+)", edit.text)
        assert month_days, edit.text
        for month, day in month_days:
            dt.date(2001, MONTHS.index(month.capitalize()) + 1, int(day))  # raises when invalid


@pytest.mark.parametrize("text, pattern", [
    ("on 2001-12-28", r"on \d{4}-\d\d-\d\d"),
    ("born on the 6th of June 1975", r"born on the \d{1,2}(st|nd|rd|th) of [A-Z][a-z]+ \d{4}"),
    ("see you on Monday", r"see you on (Tues|Wednes|Thurs|Fri|Satur|Sun)day"),
    ("at 7 p.m.", r"at ([1-9]|1[0-2]) p\.m\."),
    ("at 10:30", r"at ([01]?\d|2[0-3]):[0-5]\d"),
    ("in the 1990s", r"in the 1[5-9][0-8]0s"),
    ("九十年代 90年代的歌", r"九十年代 [2-8]0年代的歌"),
    ("星期三见", r"星期[一二四五六日]见"),
    ("through aug . 26 .", r"through [a-z]{3} \. \d{1,2} \."),
    ("since 1997 .", r"since 1[5-9]\d\d \.|since 20[0-2]\d \."),
])
def test_written_form_is_kept(text: str, pattern: str) -> None:
    edits = _edits(text, 3)
    assert edits
    for edit in edits:
        assert re.fullmatch(pattern, edit.text), edit.text
        assert edit.text != text
        assert text[edit.start:edit.end] == edit.original_span


def test_ambiguous_words_are_not_dates() -> None:
    assert date_mentions("they may go and march on") == []
    assert date_mentions("in may we march") == ["may"]
    assert date_mentions("I have 1500 coins") == []
    proposals = swap_dates("nothing here", rng=random.Random(1))
    assert not proposals.applies and proposals.skip_reason


def test_same_seed_same_swaps() -> None:
    text = "released on June 6, 1975, shown every Friday at 8 p.m."
    assert swap_dates(text, rng=random.Random(5)) == swap_dates(text, rng=random.Random(5))


def test_real_kdconv_release_and_birth_dates(shared_data) -> None:
    path = require_file(shared_data, "kdconv/film/test.json")
    checked = 0
    for dialogue in json.loads(path.read_text(encoding="utf-8")):
        for message in dialogue["messages"]:
            for attr in message.get("attrs", []):
                value = attr["attrvalue"]
                if attr["attrname"] not in ("上映时间", "出生日期") or value not in message["message"]:
                    continue
                if not re.fullmatch(r"\d{4}年\d{1,2}月\d{1,2}日", value):
                    continue
                edits = [e for e in _edits(message["message"], checked)
                         if e.original_span == value]
                assert edits, message["message"]
                for edit in edits:
                    new = re.fullmatch(r"(\d{4})年(\d{1,2})月(\d{1,2})日", edit.replacement)
                    assert new, edit.replacement
                    dt.date(*(int(g) for g in new.groups()))
                    assert edit.replacement != value
                checked += 1
    assert checked >= 100  # measured 158 in the film test split


def test_years_before_1500_stay_plausible() -> None:
    for seed in range(10):
        for edit in _edits("故宫始建于1420年。", seed):
            year = int(re.fullmatch(r"故宫始建于(\d+)年。", edit.text).group(1))
            assert 1390 <= year <= 1450 and year != 1420


def test_every_kdconv_travel_message_is_handled(shared_data) -> None:
    """Opening hours, ticket seasons and old years: all parse into valid swaps or a reason."""
    path = require_file(shared_data, "kdconv/travel/test.json")
    swapped = 0
    for d, dialogue in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        for t, message in enumerate(dialogue["messages"]):
            proposals = swap_dates(message["message"], rng=random.Random(f"{d}-{t}"))
            assert proposals.applies or proposals.skip_reason
            swapped += proposals.applies
            for edit in proposals.edits:
                assert message["message"][edit.start:edit.end] == edit.original_span
                for month, day in re.findall(r"(?<!\d)(\d{1,2})月(\d{1,2})日", edit.replacement):
                    dt.date(2001, int(month), int(day))
                for hour, minute in re.findall(r"(?<![\d:])(\d{1,2}):(\d\d)(?![\d:])", edit.replacement):
                    assert 0 <= int(hour) <= 23 and 0 <= int(minute) <= 59
    assert swapped >= 150  # measured 173 messages with a date or time
