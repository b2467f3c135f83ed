"""Negation flips: hand-written English, the tokenised USR form, and real USR replies."""

from __future__ import annotations

import json
import re

import pytest

from dialjudge.core.adversarial.negation import flip_negations
from shared_data import require_file

NEGATOR = re.compile(r"\b(not|never)\b|n['’]?t\b|\bcannot\b", re.I)


@pytest.mark.parametrize("text, expected", [
    ("there is only one person in this video", "there is not only one person in this video"),
    ("The man can open the door.", "The man can not open the door."),
    ("He isn't here.", "He is here."),
    ("She can't swim.", "She can swim."),
    ("I won't go.", "I will go."),
    ("They don't like it.", "They do like it."),
    ("He never watches TV.", "He watches TV."),
    ("I cannot believe it.", "I can believe it."),
    ("I've seen it.", "I have not seen it."),
    ("They'll win.", "They will not win."),
    ("He has a dog.", "He does not have a dog."),
    ("We have to go.", "We do not have to go."),
    ("She likes jazz.", "She does not like jazz."),
    ("I knew him.", "I did not know him."),
    ("it was written by brad bird .", "it was not written by brad bird ."),
    ("women can also play in the nfl .", "women can also not play in the nfl ."),
    ("If it is sunny, we will go.", "If it is sunny, we will not go."),
    # the tokenised USR spelling
    ("he is n't here .", "he is here ."),
    ("i ca n't swim .", "i can swim ."),
    ("i do nt watch tv .", "i do watch tv ."),
    ("they 're worried .", "they 're not worried ."),
    ("there 's only one person man", "there 's not only one person man"),
])
def test_flip_inverts_the_main_clause(text: str, expected: str) -> None:
    proposals = flip_negations(text)
    assert proposals.applies, proposals.skip_reason
    edit = proposals.edits[0]
    assert edit.text == expected
    assert text[edit.start:edit.end] == edit.original_span
    assert edit.replacement in edit.text
    assert edit.perturbation("x").kind == "negation"


@pytest.mark.parametrize("text, reason", [
    ("Is he here?", "question"),
    ("did you know that she had to walk backward", "question or imperative"),
    ("Don't do that.", "question or imperative"),
    ('He said "it is fine".', "quoted"),
    ("There is no one here.", "double the negation"),
    ("I haven't been there either.", "negative-polarity"),
    ("i 've never seen any of them do it", "negative-polarity"),
    ("because it is late .", "subordinate"),
    ("I have already seen it.", "positive-polarity"),
    ("chicago has some great places to eat .", "positive-polarity"),
    ("i love blue too .", "positive-polarity"),
    ("nice chatting with you", "no auxiliary"),
    ("他是日本东京人。", "English only"),
    ("   ", "empty"),
])
def test_unsafe_places_are_skipped_with_a_reason(text: str, reason: str) -> None:
    proposals = flip_negations(text)
    assert not proposals.applies
    assert reason in (proposals.skip_reason or "")


def test_modal_used_as_a_noun_or_month_is_not_flipped() -> None:
    assert not flip_negations("a can of soup").applies
    assert flip_negations("a can of soup is cheap").edits[0].text == "a can of soup is not cheap"
    assert not flip_negations("in may we travel").applies


def test_one_flip_per_statement_and_questions_left_alone() -> None:
    text = "he was a player in 1990s . do you like him ? he had a famous sister ."
    texts = [e.text for e in flip_negations(text).edits]
    assert texts == [
        "he was not a player in 1990s . do you like him ? he had a famous sister .",
        "he was a player in 1990s . do you like him ? he did not have a famous sister .",
    ]


def test_flips_are_deterministic() -> None:
    text = "i love that . it has been the mayor since 1997 ."
    assert flip_negations(text) == flip_negations(text)


def _usr_ground_truths(shared_data) -> list[str]:
    path = require_file(shared_data, "usr/usr_topical_chat.json")
    data = json.loads(path.read_text(encoding="utf-8"))
    return [r["response"] for item in data for r in item["responses"]
            if r["model"] == "Original Ground Truth"]


def test_real_usr_replies_flip_cleanly(shared_data) -> None:
    replies = _usr_ground_truths(shared_data)
    assert len(replies) == 60
    flipped = 0
    for text in replies:
        proposals = flip_negations(text)
        if not proposals.applies:
            assert proposals.skip_reason
            continue
        flipped += 1
        for edit in proposals.edits:
            assert text[edit.start:edit.end] == edit.original_span
            assert edit.text == text[:edit.start] + edit.replacement + text[edit.end:]
            assert edit.text != text
            # Exactly one side of the edit carries the negation.
            assert bool(NEGATOR.search(edit.original_span)) != bool(NEGATOR.search(edit.replacement))
    # Measured 42 of 60; the rules favour precision, so a majority is the floor.
    assert flipped >= 35
