"""The reference-based metrics dialjudge knows, each family registered by its own module.

A family module (:mod:`.bleu`, :mod:`.rouge`, :mod:`.meteor`, :mod:`.chrf`) registers
a :class:`MetricFamily`: its metric ids, how each is described and signed, and the
scorer the :class:`~dialjudge.core.metrics.engine.MetricEngine` asks for its scores.
Everything else (the engine, batch scoring, signatures, reports) asks this registry,
so a new metric is one new family module.

Cheap to import: the family modules load no metric library until a scorer is made.
The registry finds them by importing every module of this package the first time it
is asked.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import ConfigError
from ..self_registry import SelfRegistry

if TYPE_CHECKING:
    from .engine import ScoringContext

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


class PairScorer(Protocol):
    """A family's scores of one candidate against its references, each on 0-1."""

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]: ...

    def cache_size(self) -> int: ...


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


_FAMILIES: SelfRegistry[MetricFamily] = SelfRegistry("metric families", __name__.rpartition(".")[0], Path(__file__).parent)


def register_family(family: MetricFamily) -> None:
    """Called once by each module of the package, at its import."""
    _FAMILIES.register(family.name, family)


def metric_families() -> tuple[MetricFamily, ...]:
    """Every family in display order."""
    return tuple(sorted(_FAMILIES.entries().values(), key=lambda family: (family.order, family.name)))


def check_profile(profile: str) -> str:
    if profile not in METRIC_PROFILES:
        raise ConfigError(f"unknown metric profile {profile!r}; known profiles: {', '.join(METRIC_PROFILES)}")
    return profile


def metric_ids(profile: str = DEFAULT_PROFILE) -> tuple[str, ...]:
    """Every metric id of a profile in display order."""
    check_profile(profile)
    return tuple(metric_id for family in metric_families() if family.profile == profile for metric_id in family.ids)


def all_metric_ids() -> tuple[str, ...]:
    """Every metric id of every profile in display order."""
    return tuple(metric_id for family in metric_families() for metric_id in family.ids)


def unavailable_reason(metric_id: str) -> str | None:
    """Why a metric cannot be computed here (one line), or None when it can."""
    family = family_of(metric_id)
    return family.unavailable() if family.unavailable is not None else None


def family_of(metric_id: str) -> MetricFamily:
    for family in metric_families():
        if metric_id in family.ids:
            return family
    raise ConfigError(f"unknown metric {metric_id!r}; known metrics: {', '.join(all_metric_ids())}")


def families_of(ids: Sequence[str]) -> list[tuple[MetricFamily, tuple[str, ...]]]:
    """The families of these ids, each with its wanted ids, in display order."""
    wanted = set(ids)
    found = [(family, tuple(m for m in family.ids if m in wanted)) for family in metric_families()]
    return [(family, chosen) for family, chosen in found if chosen]


def metric_info(metric_id: str, *, meteor_variant: str | None = None) -> MetricInfo:
    """The entry for one id. A family with variants (METEOR) looks its variant up when not given."""
    return family_of(metric_id).info(metric_id, meteor_variant)


def available_metrics(profile: str = DEFAULT_PROFILE) -> list[MetricInfo]:
    """Every metric of a profile in display order, METEOR named after the matcher it will use."""
    return [metric_info(metric_id) for metric_id in metric_ids(profile)]


def resolve_metric_ids(requested_ids: Iterable[str] | None, profile: str = DEFAULT_PROFILE) -> tuple[str, ...]:
    """Validate requested ids (None = all of the profile's) and return them in display order, once each.

    Ids of any profile are accepted; a profile's own ids may also be named without its prefix
    (``bleu4`` with the nlg-eval profile is ``nlg-eval-bleu4``)."""
    known = all_metric_ids()
    if requested_ids is None:
        return metric_ids(profile)
    if isinstance(requested_ids, str):
        raise ConfigError(f"metric ids must be a list, not the string {requested_ids!r}")
    requested = list(requested_ids)
    if check_profile(profile) != DEFAULT_PROFILE:
        own = metric_ids(profile)
        requested = [f"{profile}-{m}" if m not in own and f"{profile}-{m}" in own else m for m in requested]
        foreign = [m for m in requested if m not in own]
        if foreign:  # a table of one profile never mixes in another profile's code silently
            raise ConfigError(f"the {profile} profile has no metric {', '.join(map(repr, foreign))}; "
                              f"its metrics: {', '.join(own)}")
    if not requested:
        raise ConfigError(f"no metric selected; known metrics: {', '.join(known)}")
    unknown = [m for m in requested if m not in known]
    if unknown:
        raise ConfigError(
            f"unknown metric{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
            f"known metrics: {', '.join(known)}"
        )
    wanted = set(requested)
    return tuple(m for m in known if m in wanted)
