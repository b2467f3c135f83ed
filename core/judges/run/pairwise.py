"""Pairwise judging: which pairs of candidates a run asks about, and as which items.

For every context (an example's ``group_id``), the candidates of the run's
selection are paired: all ``n(n-1)/2`` unordered pairs, or ``N`` of them per
context drawn with a seed. Each pair is asked in both orders by default (the
position swap that exposes position bias), so a context with ``n`` candidates
costs ``n(n-1)`` judgments with ``--pairs all``.

One asked order is one *pair-order item*: an :class:`~dialjudge.core.model.Example`
whose ``pair`` holds the two replies (``{response_a}`` shown first,
``{response_b}`` second) and whose id is ``"<first id>><second id>"`` (e.g.
``tc-000-1>tc-000-4``). The run store keys judgments by that id, so resume and
the response cache work for pairwise runs exactly as for pointwise ones.

A verdict is read from a judgment as the template's choice it names: first
wins, second wins, or a tie (see ``OutputKind.PAIRWISE``). In logprob mode the
verdict is the most probable choice; the score stays p(first) + p(tie)/2.
"""

from __future__ import annotations

import enum
import itertools
import random
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Sequence

from ...errors import ConfigError
from ...model import Example, Level, PairedResponses
from ..types import PAIRWISE_VERDICT_VALUES, Judgment, OutputKind, OutputSpec
from .prepaired import as_candidates

#: Joins the two candidate ids of a pair-order item: "<first>><second>".
PAIR_SEPARATOR = ">"


class Verdict(str, enum.Enum):
    """A judgment on one asked order, in positions."""

    FIRST = "first"
    SECOND = "second"
    TIE = "tie"


@dataclass(frozen=True)
class PairSetting:
    """Which pairs a pairwise run asks: all per context, or ``per_context`` drawn with ``seed``."""

    #: None: every pair of candidates in each context; N: at most N pairs per context, drawn with the seed.
    per_context: int | None = None
    seed: int = 0
    #: Ask every pair in both orders (the position swap); off: one order per pair, drawn with the seed.
    both_orders: bool = True

    def __post_init__(self) -> None:
        if self.per_context is not None and self.per_context < 1:
            raise ConfigError(f"pairs per context must be at least 1, not {self.per_context}")

    @classmethod
    def parse(cls, text: str | int | None, *, seed: int = 0, both_orders: bool = True) -> "PairSetting":
        """``"all"`` (or None) or a positive number of pairs per context."""
        if text is None or (isinstance(text, str) and text.strip().lower() == "all"):
            return cls(None, seed, both_orders)
        try:
            count = int(text)
        except ValueError:
            raise ConfigError(f"pairs must be 'all' or a number of pairs per context, not {text!r}") from None
        if count < 1:
            raise ConfigError(f"pairs must be 'all' or a number of pairs per context of at least 1, not {count}")
        return cls(count, seed, both_orders)

    @property
    def spec(self) -> str:
        return "all" if self.per_context is None else str(self.per_context)

    def to_dict(self) -> dict[str, Any]:
        return {"per_context": self.per_context, "seed": self.seed, "both_orders": self.both_orders}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PairSetting":
        per_context = data.get("per_context")
        return cls(None if per_context is None else int(per_context), int(data.get("seed", 0)),
                   bool(data.get("both_orders", True)))


@dataclass(frozen=True)
class AskedPair:
    """One asked order: ``first`` is shown as A, ``second`` as B."""

    context: str
    first: str
    second: str

    @property
    def item_id(self) -> str:
        return pair_item_id(self.first, self.second)

    @property
    def candidates(self) -> frozenset[str]:
        return frozenset((self.first, self.second))


@dataclass(frozen=True)
class PairPlan:
    """The asked orders of a run, in context order, and what they cost."""

    asked: tuple[AskedPair, ...]
    contexts: int
    candidates: int
    #: Unordered pairs (each asked once or twice).
    pairs: int
    #: Contexts with fewer than two candidates: nothing to compare there.
    single_candidate_contexts: int = 0
    by_id: Mapping[str, AskedPair] = field(default_factory=dict, compare=False)

    @property
    def judgments_per_judge(self) -> int:
        return len(self.asked)

    def describe(self, setting: PairSetting) -> str:
        orders = "both orders" if setting.both_orders else "one order each"
        drawn = "all pairs" if setting.per_context is None else \
            f"up to {setting.per_context} pairs per context drawn with seed {setting.seed}"
        text = (f"{self.pairs} pairs of {self.candidates} candidates in {self.contexts} contexts ({drawn}), "
                f"{orders}: {len(self.asked)} judgments per judge")
        if self.single_candidate_contexts:
            text += f"; {self.single_candidate_contexts} contexts with one candidate left out"
        return text


def pair_item_id(first: str, second: str) -> str:
    return f"{first}{PAIR_SEPARATOR}{second}"


def _check_ids(items: Sequence[Example]) -> None:
    bad = [ex.id for ex in items if PAIR_SEPARATOR in ex.id]
    if bad:
        raise ConfigError(f"item {bad[0]!r} has {PAIR_SEPARATOR!r} in its id, which pair items use to join two ids")


def _comparable(items: Iterable[Example]) -> list[Example]:
    """Candidates that can be put side by side: turn-level, with a reply, not already a pair."""
    out = []
    for ex in items:
        if ex.is_pairwise:
            raise ConfigError(f"item {ex.id!r} is already a pair of responses with a human preference; pairwise "
                              "runs pair the rated candidates of each context")
        if ex.candidate is None or ex.level is Level.DIALOG:
            raise ConfigError(f"item {ex.id!r} is a whole dialogue; pairwise runs compare replies to one context")
        out.append(ex)
    return out


def plan_pairs(items: Sequence[Example], setting: PairSetting) -> PairPlan:
    """The asked orders for ``items``: their candidates paired within each context (a pre-paired
    item's two replies are the candidates of a context of their own: see :mod:`.prepaired`)."""
    items = _comparable(as_candidates(items))
    _check_ids(items)
    groups: dict[str, list[Example]] = {}
    for ex in items:
        groups.setdefault(ex.group_id, []).append(ex)
    asked: list[AskedPair] = []
    pairs = 0
    single = 0
    for context, members in groups.items():
        if len(members) < 2:
            single += 1
            continue
        rng = random.Random(f"{setting.seed}\x1f{context}")
        chosen = list(itertools.combinations(range(len(members)), 2))
        if setting.per_context is not None and setting.per_context < len(chosen):
            chosen = sorted(rng.sample(chosen, setting.per_context))
        pairs += len(chosen)
        for i, j in chosen:
            a, b = members[i].id, members[j].id
            if not setting.both_orders and rng.random() < 0.5:
                a, b = b, a  # one order: which reply comes first is drawn, not the file's order
            asked.append(AskedPair(context, a, b))
            if setting.both_orders:
                asked.append(AskedPair(context, b, a))
    by_id = {p.item_id: p for p in asked}
    return PairPlan(tuple(asked), contexts=len(groups) - single, candidates=sum(len(m) for m in groups.values()
                                                                               if len(m) > 1),
                    pairs=pairs, single_candidate_contexts=single, by_id=by_id)


def pair_examples(items: Sequence[Example], setting: PairSetting) -> list[Example]:
    """One pair-order item per asked order (see the module docstring)."""
    items = as_candidates(items)
    plan = plan_pairs(items, setting)
    by_id = {ex.id: ex for ex in items}
    return [pair_example(by_id[p.first], by_id[p.second]) for p in plan.asked]


def pair_example(first: Example, second: Example) -> Example:
    """The item asking "which of ``first`` (A) and ``second`` (B) is better?" in their shared context."""
    assert first.candidate is not None and second.candidate is not None
    return Example(
        id=pair_item_id(first.id, second.id), group_id=first.group_id, context=first.context, candidate=None,
        references=first.references, fact=first.fact, tags=first.tags & second.tags, level=Level.TURN,
        language=first.language, pair=PairedResponses(first.candidate, second.candidate),
        extra={"pair_of": (first.id, second.id)},
    )


def preview_pair(examples: Sequence[Example], example: Example) -> tuple[Example, Example]:
    """The two orders a preview of a pairwise template shows for ``example``: it against the next
    candidate of its context (first A, then B). ConfigError when the context has no other candidate."""
    peers = [ex for ex in examples if ex.group_id == example.group_id and ex.candidate is not None
             and not ex.is_pairwise]
    others = [ex for ex in peers if ex.id != example.id]
    if example.candidate is None or not others:
        raise ConfigError(f"item {example.id!r} has no other candidate in its context to compare with")
    ids = [ex.id for ex in peers]
    at = ids.index(example.id) if example.id in ids else -1
    partner = peers[(at + 1) % len(peers)]
    return pair_example(example, partner), pair_example(partner, example)


def is_pairwise_output(spec: OutputSpec) -> bool:
    return spec.kind is OutputKind.PAIRWISE


def check_pairwise_plan(template: Any, pairs: PairSetting | None, fewshot: str = "none") -> PairSetting | None:
    """The pair setting a run with ``template`` uses: a pairwise template always runs pairwise (all pairs
    unless told otherwise); pairs with a one-reply template are refused."""
    pairwise_template = template.output.kind is OutputKind.PAIRWISE
    if pairs is not None and not pairwise_template:
        raise ConfigError(f"template {template.name!r} rates one reply at a time; pairwise mode needs a pairwise "
                          "template (output.kind = 'pairwise', e.g. pairwise-plain)")
    if pairwise_template and fewshot not in ("", "none"):
        raise ConfigError(f"template {template.name!r} is pairwise; pairwise runs are zero-shot")
    if pairwise_template and pairs is None:
        return PairSetting()
    return pairs


# --------------------------------------------------------------------------- verdicts


def verdict_of(judgment: Judgment, choices: Sequence[str]) -> Verdict | None:
    """The verdict a judgment names: the most probable of the template's ``choices`` (first wins,
    second wins[, tie]) in a probability mode, else its score (1 first, 0 second, 0.5 tie)."""
    if judgment.failed:
        return None
    if judgment.distribution:
        values = dict(zip(choices, PAIRWISE_VERDICT_VALUES))
        probs = {c: p for c, p in judgment.distribution.items() if c in values}
        if probs:
            best = max(probs.values())
            winners = [c for c, p in probs.items() if p == best]
            if len(winners) > 1:
                return Verdict.TIE  # equally likely answers name no winner
            return _verdict_for_value(values[winners[0]])
    assert judgment.normalized is not None
    return _verdict_for_value(judgment.normalized)


def _verdict_for_value(value: float) -> Verdict:
    if value > 0.5:
        return Verdict.FIRST
    if value < 0.5:
        return Verdict.SECOND
    return Verdict.TIE


# --------------------------------------------------------------------------- parsing

_LEAD = r"(?:final\s+verdict|verdict|final\s+answer|answer|winner|better(?:\s+(?:response|reply))?|choice|score)"


def parse_verdict(text: str, spec: OutputSpec) -> tuple[float | None, str | None, str | None]:
    """(score, reasoning, error) for a generated pairwise answer.

    The verdict is the choice named after "Verdict:" / "Answer:" / "Winner:" (the last one), or in
    MT-Bench's "[[A]]" brackets, or the only choice the last line names. An explicit verdict ends its
    line; elsewhere one-letter choices are matched case-sensitively, so the article "a" is no verdict.
    """
    choices = list(spec.choices)
    values = PAIRWISE_VERDICT_VALUES[: len(choices)]
    if not choices:
        return None, None, "the template's pairwise output has no choices"

    def flags(choice: str) -> int:
        return 0 if len(choice.strip()) == 1 else re.I

    def named(region: str, pattern: Callable[[str], str]) -> list[tuple[int, int]]:
        found = []
        for index, choice in enumerate(choices):
            for m in re.finditer(pattern(re.escape(choice.strip())), region, flags(choice)):
                found.append((m.start(), index))
        return sorted(found)

    def lead(body: str) -> str:
        # After "Verdict:" any case goes, but the verdict must end its line ("is a good one" is no verdict).
        return (rf"(?i:{_LEAD})\W{{0,6}}(?:(?i:is)\s+)?[\s*_`\"'“”(\[]*(?<![\w])(?i:{body})"
                rf"(?=[\s*_`\"'“”)\].!]*(?:$|\n))")

    def bracket(body: str) -> str:
        return rf"\[\[\s*(?i:{body})\s*\]\]"

    for pattern in (bracket, lead):
        hits = named(text, pattern)
        if hits:
            index = hits[-1][1]
            return values[index], _before(text, hits[-1][0]), None
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    last = lines[-1] if lines else ""
    hits = named(last, lambda body: rf"(?<![\w]){body}(?![\w])")
    indices = {i for _, i in hits}
    if len(indices) == 1:
        return values[indices.pop()], _before(text, len(text) - len(last)), None
    if indices:
        return None, text.strip() or None, f"several verdicts ({', '.join(choices[i] for i in sorted(indices))}) " \
                                            "in the answer and no explicit one"
    return None, text.strip() or None, f"no verdict ({', '.join(choices)}) in the output"


def _before(text: str, at: int) -> str | None:
    said = text[:at].strip()
    return said or None


__all__ = ["PAIR_SEPARATOR", "Verdict", "PairSetting", "AskedPair", "PairPlan", "pair_item_id", "plan_pairs",
           "pair_examples", "pair_example", "check_pairwise_plan", "preview_pair", "verdict_of", "parse_verdict", "is_pairwise_output"]
