"""Number and quantity swaps on hand-written English, Chinese and real USR replies."""

from __future__ import annotations

import json
import random
import re

import pytest

from dialjudge.core.adversarial.numbers import pluralize, swap_numbers
from shared_data import require_file

WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
         "ten": 10, "eleven": 11, "twelve": 12}


def _texts(text: str, seed: int = 1, **kwargs) -> list[str]:
    return [e.text for e in swap_numbers(text, rng=random.Random(seed), **kwargs).edits]


@pytest.mark.parametrize("seed", range(5))
def test_one_person_becomes_several_people_with_agreement(seed: int) -> None:
    for text in _texts("there is only one person in this video", seed):
        m = re.fullmatch(r"there are only (\w+) people in this video", text)
        assert m and m.group(1) in WORDS, text
    for text in _texts("There was one man.", seed):
        assert re.fullmatch(r"There were (\w+) men\.", text), text


def test_one_of_needs_no_agreement_and_pronoun_one_is_skipped() -> None:
    assert all(re.fullmatch(r"(\w+) of the directors", t) for t in _texts("one of the directors"))
    proposals = swap_numbers("he is the only one here", rng=random.Random(1))
    assert not proposals.applies and "pronoun" in (proposals.skip_reason or "")
    proposals = swap_numbers("that 's one u.s . city", rng=random.Random(1))
    assert not proposals.applies and "agree" in (proposals.skip_reason or "")


def test_digit_forms_are_kept() -> None:
    for text in _texts("the 10,000 year clock", alternatives=3):
        assert re.fullmatch(r"the \d{1,3}(,\d{3})+ year clock", text), text
    for text in _texts("It is 5.2 miles."):
        assert re.fullmatch(r"It is \d+\.\d miles\.", text) and text != "It is 5.2 miles."
    for text in _texts("the 21st time"):
        m = re.fullmatch(r"the (\d+)(st|nd|rd|th) time", text)
        n = int(m.group(1))
        assert m.group(2) == {1: "st", 2: "nd", 3: "rd"}.get(n % 10 if n not in (11, 12, 13) else 0, "th")
    for text in _texts("about 40 % of it"):
        value = int(re.fullmatch(r"about (\d+) % of it", text).group(1))
        assert 1 <= value <= 99 and value != 40


def test_years_are_left_to_the_date_swap_when_asked() -> None:
    proposals = swap_numbers("it has been the mayor since 1997 .", rng=random.Random(1), years=False)
    assert not proposals.applies and "years" in (proposals.skip_reason or "")
    texts = _texts("it has been the mayor since 1997 .")
    assert texts and all(re.fullmatch(r"it has been the mayor since 1[5-9]\d\d .", t) for t in texts)


def test_times_dates_decades_and_codes_are_not_numbers() -> None:
    for text in ("at 7 p.m. on 12/28", "in the 1990s", "agent 007", "covid-19"):
        assert not swap_numbers(text, rng=random.Random(1)).applies, text


def test_chinese_digits() -> None:
    texts = _texts("是的132分钟，你就准备好哭吧。")
    assert texts
    for text in texts:
        value = int(re.fullmatch(r"是的(\d+)分钟，你就准备好哭吧。", text).group(1))
        assert value != 132


def test_pluralize() -> None:
    assert [pluralize(w) for w in ("person", "city", "box", "dog", "Man")] == \
        ["people", "cities", "boxes", "dogs", "Men"]


def test_same_seed_same_swaps() -> None:
    text = "he scored 309 points in 24 games and one of the goals was a 3 pointer"
    first = swap_numbers(text, rng=random.Random(7))
    assert first == swap_numbers(text, rng=random.Random(7))
    assert first != swap_numbers(text, rng=random.Random(8))


def test_real_usr_replies(shared_data) -> None:
    path = require_file(shared_data, "usr/usr_topical_chat.json")
    replies = [r["response"] for item in json.loads(path.read_text(encoding="utf-8"))
               for r in item["responses"] if r["model"] == "Original Ground Truth"]
    swapped = 0
    for i, text in enumerate(replies):
        proposals = swap_numbers(text, rng=random.Random(i))
        if not proposals.applies:
            assert proposals.skip_reason
            continue
        swapped += 1
        for edit in proposals.edits:
            assert text[edit.start:edit.end] == edit.original_span
            assert edit.replacement in edit.text and edit.text != text
            assert edit.original_span != edit.replacement
    # Measured: 12 of the 60 references hold a swappable number.
    assert swapped >= 10
