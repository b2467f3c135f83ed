"""A family of metrics as the registry and its users see it (:class:`MetricFamily`, :class:`MetricInfo`,
the metric profiles), and the table each family module registers its family in (:func:`register_family`).

Below the family modules (``core/metrics/families/``), which import it; the registry that imports
them and answers lookups is :mod:`.registry`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..self_registry import Registrations

if TYPE_CHECKING:
    from .scoring_context import PairScorer, ScoringContext

MULTI_REF_MAX = "With several references the best-matching one counts (max)."

#: The profile every table uses unless asked otherwise: sacrebleu, rouge-score and NLTK.
DEFAULT_PROFILE = "default"
#: Metric profiles: which code computes the metrics, so a table can be compared with a paper's.
#: Name -> what it is and which papers' numbers it reproduces (README, "Metric profiles").
METRIC_PROFILES: dict[str, str] = {
    DEFAULT_PROFILE: "BLEU-1..4 (sacrebleu), ROUGE-1/2/L (rouge-score), METEOR (NLTK), chrF++ (sacrebleu)",
    "nlg-eval": ("BLEU-1..4, ROUGE-L and METEOR 1.5 as Maluuba's nlg-eval computes them (the MS-COCO caption "
                 "scorers; METEOR through the Java jar), as in Yeh et al. 2021, \"A Comprehensive Assessment of "
                 "Dialog Evaluation Metrics\""),
}
CHINESE_CHARACTERS = "Chinese text is tokenized per character."


@dataclass(frozen=True)
class MetricInfo:
    """What a report or a picker needs to show about one metric."""

    id: str
    label: str
    description: str
    family: str  # bleu, rouge, chrf, meteor
    #: A caveat the report should print next to the scores (e.g. METEOR without WordNet).
    note: str | None = None


@dataclass(frozen=True)
class MetricFamily:
    """Metrics computed together by one library (BLEU-1..4, ROUGE-1/2/L, ...)."""

    name: str
    #: Display order of the families (then the order of ``ids``).
    order: int
    ids: tuple[str, ...]
    #: The entry of one id; ``variant``: the matcher a family has variants of (METEOR), None: the current one.
    info: Callable[[str, str | None], MetricInfo]
    #: The signature (parameters and library version) of one id, for the same variant.
    signature: Callable[[str, str | None], str]
    #: A scorer of the wanted ids of this family, sharing the engine's context (stemmer, WordNet).
    scorer: Callable[[tuple[str, ...], ScoringContext], PairScorer]
    #: The variants ``info`` and ``signature`` know (METEOR: with WordNet or exact+stem); None: no variants.
    variants: tuple[str | None, ...] = (None,)
    #: What the family's scores depend on beyond its ids (METEOR: which variant runs here).
    setting: Callable[[], str] | None = None
    #: Work to do once before worker processes start (METEOR: build the synonym index).
    prepare: Callable[[], Any] | None = None
    #: The metric profile the family belongs to (:data:`METRIC_PROFILES`).
    profile: str = DEFAULT_PROFILE
    #: Why the family cannot score on this machine (one line), or None when it can; asked before scoring.
    unavailable: Callable[[], str | None] | None = None


METRIC_FAMILIES: Registrations[MetricFamily] = Registrations("metric families")


def register_family(family: MetricFamily) -> None:
    """Called once by each module of core/metrics/families/, at its import."""
    METRIC_FAMILIES.register(family.name, family)
