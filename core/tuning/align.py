"""Judge variants made from a user's corrections, for ``dialjudge align`` (docs/align.md).

A correction is a label the user gave one item (a labels file, or an own rating in Review);
notes are what the user wrote about the judge (a notes file, or the review notes). From them:

* few-shot variants: the corrected items become the example pool, each shown with the user's
  label (not the crowd's), chosen by BM25 or at random;
* note variants: the notes appended to the aspect's definition in the template (rubric notes);
* a persona variant: a shipped persona that pulls the judge the way the corrections do (the
  user's labels lower than the judge's scores: a calibrated annotator; higher: a lenient partner).

Every variant's template text carries a provenance comment with the corrections' digest, so
the runs it makes (whose fingerprint includes the template text) are never mistaken for runs
made from other corrections, and the saved winner says which corrections produced it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..judges.prompts.templates import Template, parse_template
from ..model import Example, Rating, Scale
from ..stats.paired import PairedComparison
from .space import SearchSettings, SearchSpace, Variant
from .winner import with_aspect_definition

#: Fewer corrections than this teach nothing a test could show (MLflow's align() asks for 10 too).
MIN_CORRECTIONS = 10
#: The starting judge's name in the search.
START = "start"
#: Rubric notes longer than this are cut (they go into every prompt).
MAX_NOTES_CHARS = 1500
#: The persona the corrections point to: judge too generous (the user rates lower) or too harsh.
PERSONA_WHEN_TOO_GENEROUS = "calibrated-annotator"
PERSONA_WHEN_TOO_HARSH = "lenient-conversational-partner"


@dataclass(frozen=True)
class Corrections:
    """The user's labels (item id -> value on the quality's scale) and notes, and where they came from."""

    labels: Mapping[str, float]
    notes: tuple[str, ...] = ()
    source: str = ""

    @property
    def digest(self) -> str:
        """16 hex digits identifying the labels and notes (not their source)."""
        payload = json.dumps({"labels": sorted((str(k), float(v)) for k, v in self.labels.items()),
                              "notes": list(self.notes)}, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]

    @property
    def notes_text(self) -> str:
        text = " ".join(n.strip() for n in self.notes if n.strip())
        return text if len(text) <= MAX_NOTES_CHARS else text[: MAX_NOTES_CHARS - 1] + "…"

    def to_dict(self) -> dict[str, Any]:
        return {"digest": self.digest, "source": self.source, "notes": list(self.notes),
                "labels": [{"item_id": k, "label": v} for k, v in sorted(self.labels.items())]}


def correction_pool(examples: Sequence[Example], quality: str, scale: Scale,
                    labels: Mapping[str, float]) -> list[Example]:
    """The corrected items as few-shot examples: each rated by the user's label alone."""
    pool = []
    for ex in examples:
        if ex.id in labels:
            own = ex.ratings.get(quality)
            rating = Rating((float(labels[ex.id]),), own.scale if own is not None else scale, ("you",))
            pool.append(dataclasses.replace(ex, ratings={**ex.ratings, quality: rating}))
    return pool


def check_labels(labels: Mapping[str, float], scale: Scale, source: str) -> None:
    """ConfigError naming the first label outside the quality's scale."""
    if scale.min is None or scale.max is None:
        return
    for item, value in labels.items():
        if not scale.min <= value <= scale.max:
            raise ConfigError(f"{source}: item {item!r}, field 'label': {value:g} is outside the quality's scale "
                              f"{scale.min:g}-{scale.max:g}")


def persona_direction(judge_units: Mapping[str, float], labels: Mapping[str, float], scale: Scale) -> str:
    """The shipped persona the corrections point to: the mean of (judge − user) on the 0-1 scale."""
    pairs = [(judge_units[i], scale.normalize(v)) for i, v in labels.items() if i in judge_units]
    if not pairs:
        return PERSONA_WHEN_TOO_GENEROUS
    bias = sum(j - u for j, u in pairs) / len(pairs)
    return PERSONA_WHEN_TOO_HARSH if bias < 0 else PERSONA_WHEN_TOO_GENEROUS


def align_variants(start: Variant, template: Template, corrections: Corrections, *, k: int = 3, seed: int = 0,
                   persona: str | None = None) -> tuple[list[Variant], list[str]]:
    """The starting judge and the variants made from the corrections; and the variants left out, why."""
    variants = [dataclasses.replace(start, name=START)]
    skipped: list[str] = []
    k = max(1, min(k, len(corrections.labels) - 1))
    if template.examples is None:
        skipped.append(f"few-shot: template {template.name!r} has no {{examples}} slot")
    else:
        variants.append(dataclasses.replace(start, name=f"bm25-{k}", fewshot=f"bm25-both:{k}"))
        variants.append(dataclasses.replace(start, name=f"random-{k}", fewshot=f"random:{k}@{seed}"))
    notes = corrections.notes_text
    aspect = start.aspect
    if not notes:
        skipped.append("notes: no notes were given")
    elif not aspect or not template.aspects:
        skipped.append("notes: the starting judge rates no aspect whose definition the notes could extend")
    else:
        key = template.resolve_aspect(aspect) or aspect
        definition = (template.aspects.get(key, "").rstrip()
                      + f" Notes from the person who checked this judge: {notes}").strip()
        variants.append(dataclasses.replace(start, name="notes", aspect_definition=definition))
        if template.examples is not None:
            variants.append(dataclasses.replace(start, name=f"notes+bm25-{k}", aspect_definition=definition,
                                                fewshot=f"bm25-both:{k}"))
    if persona and "persona" not in template.variables:
        skipped.append(f"persona: template {template.name!r} has no {{persona}} slot")
    elif persona and persona != start.persona:
        variants.append(dataclasses.replace(start, name=f"persona-{persona}", persona=persona))
    return variants, skipped


def align_space(variants: Sequence[Variant], *, quality: str, n_tuning_contexts: int, seed: int = 0,
                n_boot: int = 1000) -> SearchSpace:
    """One round: every variant on every corrected item (few enough to judge them all); the proposed
    variant best on the user's labels (the winner) and the starting judge then on the held-out contexts."""
    settings = SearchSettings(quality=quality, seed=seed, first_sample=max(1, n_tuning_contexts), finalists=1,
                              baseline=START, coefficient="spearman", n_boot=n_boot)
    return SearchSpace(tuple(variants), settings, "align")


def provenance_header(corrections: Corrections, run_id: int) -> str:
    """The comment every aligned variant's template text starts with (it changes no prompt)."""
    notes = f", {len(corrections.notes)} notes" if corrections.notes else ""
    return (f"# dialjudge align: run {run_id}, corrections {corrections.digest} "
            f"({len(corrections.labels)} labels{notes}; {corrections.source})\n")


def variant_text(template: Template, variant: Variant, header: str) -> tuple[str, str]:
    """The variant's template name and text: the run's template (its aspect redefined where the
    variant says so) under the provenance header."""
    text = template.text
    if variant.aspect_definition:
        text = with_aspect_definition(template, variant.aspect or "", variant.aspect_definition)
    full = header + text
    parse_template(full, f"{template.name} (aligned)")  # a variant that would not load fails before judging
    return template.name, full


def align_verdict(paired: PairedComparison | None, coefficient: str = "spearman") -> str:
    """One word on the held-out comparison of the winner with the starting judge: better, worse, no
    difference shown, or undecided (no comparison could be made: too few contexts, constant scores)."""
    if paired is None or not paired.defined or paired.too_few_contexts:
        return "undecided"
    if not paired.decided(coefficient):
        return "no difference shown"
    return "better" if paired.delta(coefficient).delta > 0 else "worse"
