"""The reference-based metrics dialjudge knows: ids, display labels, descriptions.

Cheap to import: no metric library is loaded here. METEOR's label depends on
whether WordNet can be found (see :mod:`.wordnet`), so the METEOR entry is built
when it is asked for rather than fixed at import time.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ConfigError

BLEU_ORDERS = (1, 2, 3, 4)
BLEU_IDS = tuple(f"bleu{n}" for n in BLEU_ORDERS)
ROUGE_IDS = ("rouge1", "rouge2", "rougeL")
CHRF_ID = "chrf++"
METEOR_ID = "meteor"

#: Every metric id in display order.
METRIC_IDS: tuple[str, ...] = (*BLEU_IDS, *ROUGE_IDS, METEOR_ID, CHRF_ID)

METEOR_WORDNET = "wordnet"
METEOR_EXACT_STEM = "exact+stem"

_MULTI_REF_MAX = "With several references the best-matching one counts (max)."
_CHINESE = "Chinese text is tokenized per character."


@dataclass(frozen=True)
class MetricInfo:
    """What a report or a picker needs to show about one metric."""

    id: str
    label: str
    description: str
    family: str  # bleu, rouge, chrf, meteor
    #: A caveat the report should print next to the scores (e.g. METEOR without WordNet).
    note: str | None = None


def _bleu_info(n: int) -> MetricInfo:
    return MetricInfo(
        id=f"bleu{n}",
        label=f"BLEU-{n}",
        description=(
            f"Sentence BLEU over 1- to {n}-grams (sacrebleu BLEU, max_ngram_order={n}, "
            "smooth_method='exp' with effective order, 13a tokenizer; 'zh' tokenizer for "
            "Chinese), scaled to 0-1. Several references are pooled as sacrebleu does "
            "(clipped counts over all of them, closest reference length)."
        ),
        family="bleu",
    )


_ROUGE_NAMES = {"rouge1": ("ROUGE-1", "unigram"), "rouge2": ("ROUGE-2", "bigram"),
                "rougeL": ("ROUGE-L", "longest-common-subsequence")}


def _rouge_info(metric_id: str) -> MetricInfo:
    label, unit = _ROUGE_NAMES[metric_id]
    return MetricInfo(
        id=metric_id,
        label=label,
        description=(
            f"{label} F-measure ({unit} overlap; rouge-score with Porter stemming). "
            f"{_CHINESE} {_MULTI_REF_MAX}"
        ),
        family="rouge",
    )


_CHRF_INFO = MetricInfo(
    id=CHRF_ID,
    label="chrF++",
    description=(
        "chrF++: character 1-6-gram and word 1-2-gram F-score, beta 2 (sacrebleu CHRF with "
        "word_order=2), scaled to 0-1. With several references the best one counts, as "
        "sacrebleu chooses it."
    ),
    family="chrf",
)


def meteor_info(variant: str) -> MetricInfo:
    """METEOR's entry for a matcher variant: 'wordnet' or 'exact+stem'."""
    common = (
        "NLTK meteor_score (alpha 0.9, beta 3, gamma 0.5) on lowercased sacrebleu-13a tokens. "
        f"{_CHINESE} {_MULTI_REF_MAX}"
    )
    if variant == METEOR_WORDNET:
        return MetricInfo(
            id=METEOR_ID,
            label="METEOR",
            description=(
                "METEOR with exact, Porter-stem and WordNet-synonym matching (NLTK looks up "
                f"synonyms of the stems of words still unmatched); {common}"
            ),
            family="meteor",
        )
    if variant == METEOR_EXACT_STEM:
        return MetricInfo(
            id=METEOR_ID,
            label="METEOR (exact+stem)",
            description=f"METEOR with exact and Porter-stem matching only; {common}",
            family="meteor",
            note=(
                "WordNet was not found, so METEOR ran without synonym matching; its scores "
                "are not comparable with METEOR computed with WordNet."
            ),
        )
    raise ValueError(f"unknown METEOR variant {variant!r}")


def metric_info(metric_id: str, *, meteor_variant: str | None = None) -> MetricInfo:
    """The entry for one id. METEOR's variant is looked up when not given."""
    if metric_id in BLEU_IDS:
        return _bleu_info(int(metric_id[4:]))
    if metric_id in _ROUGE_NAMES:
        return _rouge_info(metric_id)
    if metric_id == CHRF_ID:
        return _CHRF_INFO
    if metric_id == METEOR_ID:
        if meteor_variant is None:
            from .wordnet import meteor_variant as current_variant

            meteor_variant = current_variant()
        return meteor_info(meteor_variant)
    raise ConfigError(f"unknown metric {metric_id!r}; known metrics: {', '.join(METRIC_IDS)}")


def available_metrics() -> list[MetricInfo]:
    """Every metric in display order, METEOR named after the matcher it will use."""
    return [metric_info(metric_id) for metric_id in METRIC_IDS]


def resolve_metric_ids(metric_ids: Iterable[str] | None) -> tuple[str, ...]:
    """Validate requested ids (None = all) and return them in display order, once each."""
    if metric_ids is None:
        return METRIC_IDS
    if isinstance(metric_ids, str):
        raise ConfigError(f"metric ids must be a list, not the string {metric_ids!r}")
    requested = list(metric_ids)
    if not requested:
        raise ConfigError(f"no metric selected; known metrics: {', '.join(METRIC_IDS)}")
    unknown = [m for m in requested if m not in METRIC_IDS]
    if unknown:
        raise ConfigError(
            f"unknown metric{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"known metrics: {', '.join(METRIC_IDS)}"
        )
    wanted = set(requested)
    return tuple(m for m in METRIC_IDS if m in wanted)
