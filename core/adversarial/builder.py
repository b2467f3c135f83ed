"""Build an adversarial closed-ended set from any data with references or knowledge.

For each chosen item the set holds the context, the knowledge text (as
DSTC7-ADV gives evaluators the video description) and

* the original reply, once as the reference and once as a candidate
  (``contradicts`` = 0, system "original");
* up to ``per_item`` adversarial candidates, each a different perturbation of
  the original with a distinct text (``contradicts`` = 1, tags
  {"adversarial", "closed"}, the :class:`Perturbation` recorded, its
  ``source_id`` naming the original's example id in the new set).

``contradicts`` is a binary 0-1 rating by the single annotator "generator":
the label is known by construction, not judged.

References. Paper 000's DSTC7-ADV keeps one of six human replies as the
reference and perturbs another, so every candidate, the original included, is
scored against a held-out reference. The builder does the same whenever the
source gives an item a second reference: the original is then an ordinary
candidate (``is_reference`` False) and the remaining references are what
metrics compare against. With a single reference (USR, KdConv) the original
*is* the reference: it is marked ``is_reference`` so reference-based metrics
skip it rather than score it 1.0 against itself, and
:mod:`discernment` explains how metrics are judged on such sets.
``include_other_candidates`` copies a group's genuine system replies (USR's
five model outputs, with their human ratings) into the set, which gives
reference-based metrics a non-adversarial class to be compared against.

Everything is deterministic for a seed: the item sample and every generator
draw use random generators seeded from (seed, item id, kind).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Sequence

from ..errors import ConfigError, DataError
from ..model import BINARY_01, TAG_ADVERSARIAL, TAG_CLOSED, Dataset, Example, Level, Rating
from .dates import swap_dates
from .edits import Edit, Proposals, detect_language, item_rng
from .knowledge import KnowledgePools, swap_knowledge, triples_of
from .negation import flip_negations
from .numbers import swap_numbers

KINDS = ("negation", "number", "date", "knowledge")
CONTRADICTS = "contradicts"
GENERATOR = "generator"
ORIGINAL_SYSTEM = "original"
NO_PERTURBATION = "no requested perturbation applies"


@dataclass
class BuildReport:
    """What the builder did: counts per kind, items used, items skipped and why."""

    source: str
    kinds: tuple[str, ...]
    seed: int
    n_requested: int
    per_item: int
    items_considered: int = 0
    items_available: int = 0
    items_used: int = 0
    #: adversarial candidates made, per kind
    candidates: Counter[str] = field(default_factory=Counter)
    #: used items to which each kind contributed at least one candidate
    items_per_kind: Counter[str] = field(default_factory=Counter)
    #: items that could not be used, per reason
    skipped: Counter[str] = field(default_factory=Counter)
    #: per kind, why it did not apply to an item that had a reference
    kind_skips: dict[str, Counter[str]] = field(default_factory=dict)
    #: used items that got fewer than ``per_item`` adversarial candidates
    short_items: int = 0
    #: used items whose original is scored against a held-out second reference
    held_out_reference_items: int = 0

    @property
    def total_candidates(self) -> int:
        return sum(self.candidates.values())

    def summary(self) -> str:
        lines = [
            f"Adversarial set from {self.source!r} (seed {self.seed}, kinds {', '.join(self.kinds)}): "
            f"{self.items_available} of {self.items_considered} items usable, "
            f"{self.items_used} used (asked for {self.n_requested}).",
        ]
        per_kind = ", ".join(f"{k} {self.candidates[k]}" for k in self.kinds if self.candidates[k])
        lines.append(f"Adversarial candidates: {self.total_candidates}"
                     + (f" ({per_kind})" if per_kind else "") + ".")
        if self.short_items:
            lines.append(f"{self.short_items} item(s) got fewer than {self.per_item} candidates.")
        lines.append(
            f"Originals scored against a held-out reference: {self.held_out_reference_items}; "
            f"elsewhere the original is the reference (metrics skip it)."
        )
        if self.skipped:
            lines.append("Skipped items: " + _counts(self.skipped) + ".")
        for kind in self.kinds:
            reasons = self.kind_skips.get(kind)
            if reasons:
                lines.append(f"  {kind} did not apply: {_counts(reasons)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source, "kinds": list(self.kinds), "seed": self.seed,
            "n_requested": self.n_requested, "per_item": self.per_item,
            "items_considered": self.items_considered, "items_available": self.items_available,
            "items_used": self.items_used, "candidates": dict(self.candidates),
            "items_per_kind": dict(self.items_per_kind), "skipped": dict(self.skipped),
            "kind_skips": {k: dict(v) for k, v in self.kind_skips.items()},
            "short_items": self.short_items,
            "held_out_reference_items": self.held_out_reference_items,
        }


def _counts(counter: Counter[str]) -> str:
    return ", ".join(f"{reason} ({count})" for reason, count in counter.most_common())


@dataclass(frozen=True)
class _Item:
    """One context of the source with the reply to perturb."""

    example: Example  # holds the context, the fact and the triples
    original: str
    held_out: tuple[str, ...]  # other references, when the source has them
    others: tuple[Example, ...]  # the group's genuine candidates
    language: str


def make_adversarial_set(
    source: Dataset,
    *,
    kinds: Sequence[str] = KINDS,
    per_item: int = 3,
    n: int = 100,
    seed: int = 1,
    include_fact: bool = True,
    include_other_candidates: bool = False,
    pools: KnowledgePools | None = None,
) -> tuple[Dataset, BuildReport]:
    """An adversarial set of ``n`` items (fewer when fewer qualify) and its report.

    ``pools`` gives the knowledge swap its value pools; by default they are
    collected from every example of ``source`` that carries triples."""
    kinds = _check_arguments(kinds, per_item, n)
    report = BuildReport(source.name, kinds, seed, n, per_item)
    report.kind_skips = {kind: Counter() for kind in kinds}
    if "knowledge" in kinds and pools is None:
        pools = KnowledgePools.from_examples(source.examples)

    items, skipped = _items(source)
    report.skipped.update(skipped)
    report.items_considered = len(items) + sum(skipped.values())

    available: list[tuple[_Item, dict[str, Proposals]]] = []
    for item in items:
        proposals = {kind: _propose(item, kind, kinds, seed, per_item, pools) for kind in kinds}
        for kind, proposal in proposals.items():
            if not proposal.applies:
                report.kind_skips[kind][proposal.skip_reason or "not applicable"] += 1
        if any(p.applies for p in proposals.values()):
            available.append((item, proposals))
        else:
            report.skipped[NO_PERTURBATION] += 1
    report.items_available = len(available)
    if not available:
        reasons = [f"{k}: {_counts(v)}" for k, v in report.kind_skips.items() if v]
        if report.skipped:
            reasons.insert(0, _counts(report.skipped))
        raise DataError(f"no item of {source.name!r} can be perturbed with {', '.join(kinds)}"
                        + (f" ({'; '.join(reasons)})" if reasons else ""))

    chooser = item_rng(seed, source.name, "choose-items")
    chosen = sorted(chooser.sample(range(len(available)), min(n, len(available))))
    examples: list[Example] = []
    for index in chosen:
        item, proposals = available[index]
        edits = _pick(proposals, kinds, per_item, item.original)
        examples.extend(_item_examples(item, edits, source.name, include_fact,
                                       include_other_candidates))
        report.items_used += 1
        report.short_items += len(edits) < per_item
        report.held_out_reference_items += bool(item.held_out)
        for kind in {e.kind for e in edits}:
            report.items_per_kind[kind] += 1
        report.candidates.update(e.kind for e in edits)

    dataset = Dataset(
        name=f"{source.name}-adversarial",
        examples=examples,
        source=source.source,
        description=f"Adversarial closed-ended set built from {source.name} "
                    f"({', '.join(kinds)}; seed {seed}).",
        meta={
            **{k: v for k, v in source.meta.items() if k in ("citation", "licence", "language")},
            "adversarial": {"source": source.name, "kinds": list(kinds), "seed": seed,
                            "per_item": per_item, "n": n, "include_fact": include_fact,
                            "include_other_candidates": include_other_candidates},
            "label_quality": CONTRADICTS,
        },
    )
    return dataset, report


def _check_arguments(kinds: Sequence[str], per_item: int, n: int) -> tuple[str, ...]:
    if isinstance(kinds, str):
        kinds = [kinds]
    chosen = tuple(dict.fromkeys(kinds))
    unknown = [k for k in chosen if k not in KINDS]
    if unknown or not chosen:
        raise ConfigError(f"unknown adversarial kind(s) {', '.join(map(repr, unknown)) or '(none given)'}; "
                          f"choose from {', '.join(KINDS)}")
    if per_item < 1:
        raise ConfigError(f"per_item must be at least 1, not {per_item}")
    if n < 1:
        raise ConfigError(f"n must be at least 1, not {n}")
    return chosen


def _items(dataset: Dataset) -> tuple[list[_Item], Counter[str]]:
    items: list[_Item] = []
    skipped: Counter[str] = Counter()
    for group in dataset.groups().values():
        turn_level = [ex for ex in group if ex.level is Level.TURN and not ex.is_adversarial]
        if not turn_level:
            skipped["dialog-level or already adversarial"] += 1
            continue
        holder = next((ex for ex in turn_level if ex.is_reference and (ex.candidate or "").strip()),
                      None)
        if holder is not None:
            original = holder.candidate or ""
        else:
            holder = next((ex for ex in turn_level if any(r.strip() for r in ex.references)), None)
            if holder is None:
                skipped["no reference"] += 1
                continue
            original = next(r for r in holder.references if r.strip())
        held_out = tuple(dict.fromkeys(r for r in holder.references
                                       if r.strip() and r.strip() != original.strip()))
        others = tuple(ex for ex in turn_level
                       if ex is not holder and not ex.is_reference and ex.candidate
                       and ex.candidate.strip() != original.strip())
        language = holder.language or detect_language(original)
        items.append(_Item(holder, original, held_out, others, language))
    return items, skipped


def _propose(item: _Item, kind: str, kinds: tuple[str, ...], seed: int, per_item: int,
             pools: KnowledgePools | None) -> Proposals:
    rng = item_rng(seed, item.example.id, kind)
    text = item.original
    if kind == "negation":
        return flip_negations(text, language=item.language)
    if kind == "number":
        # Years are the date swap's when both are asked for, so one year is not swapped twice.
        return swap_numbers(text, rng=rng, language=item.language, years="date" not in kinds,
                            alternatives=per_item)
    if kind == "date":
        return swap_dates(text, rng=rng, language=item.language, alternatives=per_item)
    assert pools is not None
    return swap_knowledge(text, triples_of(item.example), pools, rng=rng, alternatives=per_item)


def _pick(proposals: dict[str, Proposals], kinds: tuple[str, ...], per_item: int,
          original: str) -> list[Edit]:
    """Round-robin over the kinds; within a kind every place once before any place twice."""
    queues = {kind: sorted(proposals[kind].edits, key=lambda e: (e.alternative, e.site))
              for kind in kinds}
    picked: list[Edit] = []
    texts = {original.strip()}
    while len(picked) < per_item and any(queues.values()):
        for kind in kinds:
            queue = queues[kind]
            while queue:
                edit = queue.pop(0)
                if edit.text.strip() not in texts:
                    texts.add(edit.text.strip())
                    picked.append(edit)
                    break
            if len(picked) >= per_item:
                break
    return picked


def _label(value: int) -> dict[str, Rating]:
    return {CONTRADICTS: Rating((value,), BINARY_01, (GENERATOR,))}


def _item_examples(item: _Item, edits: Iterable[Edit], source_name: str, include_fact: bool,
                   include_other_candidates: bool) -> list[Example]:
    src = item.example
    base = src.id
    group = f"adv/{src.group_id}"
    references = item.held_out or (item.original,)
    original_id = f"{base}/original"
    shared_extra: dict[str, Any] = {"source_id": src.id, "source_dataset": source_name}
    if "attrs" in src.extra:
        shared_extra["attrs"] = src.extra["attrs"]
    common: dict[str, Any] = dict(group_id=group, context=src.context, references=references,
                  fact=src.fact if include_fact else None, language=item.language)
    out = [Example(
        id=original_id, candidate=item.original, tags=frozenset({TAG_CLOSED}),
        ratings=_label(0), is_reference=not item.held_out, system=ORIGINAL_SYSTEM,
        extra={**shared_extra, "role": "original", "source_ended": src.ended,
               "reference_held_out": bool(item.held_out)},
        **common,
    )]
    for k, edit in enumerate(edits, start=1):
        out.append(Example(
            id=f"{base}/{edit.kind}-{k}", candidate=edit.text,
            tags=frozenset({TAG_ADVERSARIAL, TAG_CLOSED}), ratings=_label(1),
            system=f"adv-{edit.kind}", adversarial=edit.perturbation(original_id),
            extra={**shared_extra, "role": "adversarial", "span": [edit.start, edit.end]},
            **common,
        ))
    if include_other_candidates:
        for k, other in enumerate(item.others, start=1):
            out.append(replace(
                other, id=f"{base}/genuine-{k}", group_id=group, references=references,
                fact=src.fact if include_fact else None, language=item.language,
                extra={**other.extra, "source_id": other.id, "source_dataset": source_name,
                       "role": "genuine"},
            ))
    return out
