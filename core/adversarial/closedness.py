"""Open- or closed-ended: does the item have one semantically correct reply?

Paper 000 calls an example closed-ended when the reply the context and facts
call for has no semantic diversity ("when is his birthday?" -> one date), and
annotates it by hand. Here the call is made from the data, in this order:

1. tags already on the example ("open"/"closed") and user overrides win;
2. closed when the reply states a knowledge fact: it contains the value of one
   of the example's triples (``extra["attrs"]``, as KdConv lists them);
3. closed when the knowledge text (``fact``) and the reply share a number, a
   date or a named entity (a capitalised name, a 《title》);
4. closed when the reference is a short answer to a factual question
   ("how many", "when", "谁", "哪里", ...);
5. open otherwise.

"The reply" is the reference when the example has one (closedness belongs to
the context, not to a candidate), else the candidate. The reason for each call
is kept in ``extra["closedness"]`` so a user can review it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Mapping

from ..errors import DataError
from ..model import TAG_CLOSED, TAG_OPEN, Dataset, Example
from .dates import date_mentions
from .edits import detect_language
from .knowledge import realised_triples, triples_of

_NUMBER = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?![\d])|(?<![\d.,])\d{2,}(?![\d])")
_CAPITALISED_NAME = re.compile(r"\b([A-Z][a-z]+(?:\s+[A-Z][a-z]+)*)")
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s*|\n\s*)$")
_TITLE = re.compile(r"《([^》]+)》")
_EN_FACT_QUESTION = re.compile(
    r"\b(what|when|where|who|whom|whose|which|how (?:many|much|old|long|far|tall|big))\b", re.I)
_ZH_FACT_QUESTION = re.compile(r"(哪|谁|什么时候|几|多少|多大|多长|多高|多久|何时|什么)")
_COMMON_CAPITALISED = {"I", "The", "A", "An", "It", "He", "She", "They", "We", "You", "This",
                       "That", "There", "Yes", "No", "Oh", "Well", "So", "And", "But", "Do",
                       "Did", "Is", "Are", "What", "When", "Where", "Who", "Why", "How", "Have",
                       "Has", "My", "Your", "His", "Her", "Our", "Their", "Its", "In", "On"}
SHORT_ANSWER_WORDS = 8
SHORT_ANSWER_CHARS_ZH = 20


@dataclass(frozen=True)
class Closedness:
    ended: str  # "open" or "closed"
    reason: str
    explicit: bool = False


def reply_of(example: Example) -> str:
    if example.references:
        return example.references[0]
    return example.candidate or ""


def judge_closedness(example: Example) -> Closedness:
    """Open or closed, with the reason; explicit tags on the example win."""
    if example.ended is not None:
        return Closedness(example.ended, "tagged in the data", explicit=True)
    reply = reply_of(example)
    realised = realised_triples(reply, triples_of(example))
    if realised:
        fact = realised[0]
        return Closedness(TAG_CLOSED, f"the reply states {fact.attrname} = {fact.attrvalue}")
    if example.fact:
        shared = shared_facts(example.fact, reply)
        if shared:
            return Closedness(TAG_CLOSED, f"the reply and the knowledge share {shared[0]!r}")
    question = example.context[-1].text if example.context else ""
    if question and _is_short_factual_answer(question, reply):
        return Closedness(TAG_CLOSED, "the reference is a short answer to a factual question")
    return Closedness(TAG_OPEN, "the reply states no fact from the knowledge")


def shared_facts(fact: str, reply: str) -> list[str]:
    """Numbers, dates and named entities that occur in both texts, in reply order."""
    in_fact = _factual_tokens(fact)
    return [token for token in _factual_tokens(reply) if token in in_fact]


def _factual_tokens(text: str) -> list[str]:
    tokens: list[str] = []
    tokens += [m.group().replace(",", "") for m in _NUMBER.finditer(text)]
    tokens += [mention.lower() for mention in date_mentions(text)]
    tokens += [m.group(1) for m in _TITLE.finditer(text)]
    for m in _CAPITALISED_NAME.finditer(text):
        name = m.group(1)
        if _SENTENCE_START.search(text[:m.start()]) and " " not in name:
            continue  # a capital that only marks a sentence start
        if name not in _COMMON_CAPITALISED and len(name) >= 3:
            tokens.append(name.lower())
    return list(dict.fromkeys(tokens))  # unique, in first-seen order


def _is_short_factual_answer(question: str, reply: str) -> bool:
    reply = reply.strip()
    if not reply or reply.endswith(("?", "？")):
        return False
    if detect_language(question + reply) == "zh":
        return bool(_ZH_FACT_QUESTION.search(question)) and len(reply) <= SHORT_ANSWER_CHARS_ZH \
            and question.rstrip().endswith(("?", "？", "吗", "呢"))
    asks = _EN_FACT_QUESTION.search(question) and question.rstrip().endswith("?")
    return bool(asks) and len(reply.split()) <= SHORT_ANSWER_WORDS


def tag_closedness(example: Example, override: str | None = None) -> Example:
    """The example with an "open" or "closed" tag; ``override`` wins over everything,
    tags already present win over the heuristics."""
    if override is not None:
        if override not in (TAG_OPEN, TAG_CLOSED):
            raise DataError(f"closedness override must be 'open' or 'closed', not {override!r}",
                            record=example.id, field="ended")
        tags = (example.tags - {TAG_OPEN, TAG_CLOSED}) | {override}
        extra = {**example.extra, "closedness": "set by the user"}
        return replace(example, tags=frozenset(tags), extra=extra)
    if example.ended is not None:
        return example
    verdict = judge_closedness(example)
    extra = {**example.extra, "closedness": verdict.reason}
    return replace(example, tags=example.tags | {verdict.ended}, extra=extra)


def tag_dataset(dataset: Dataset, overrides: Mapping[str, str] | None = None) -> Dataset:
    """Every example tagged open or closed; ``overrides`` maps example ids to a tag."""
    overrides = dict(overrides or {})
    unknown = sorted(set(overrides) - {ex.id for ex in dataset.examples})
    if unknown:
        raise DataError(f"closedness override for unknown example ids: {', '.join(unknown[:5])}",
                        field="ended")
    tagged = [tag_closedness(ex, overrides.get(ex.id)) for ex in dataset.examples]
    return dataset.subset(tagged)
