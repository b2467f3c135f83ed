"""The reference-based metrics dialjudge knows, each family registered by its own module.

A family module (``families/``: ``bleu``, ``rouge``, ``meteor``, ``chrf``, ...) registers
a :class:`~.family.MetricFamily` (:mod:`.family`): its metric ids, how each is described and signed, and the
scorer the :class:`~dialjudge.core.metrics.engine.MetricEngine` asks for its scores.
Everything else (the engine, batch scoring, signatures, reports) asks this registry,
so a new metric is one new family module.

Cheap to import: the family modules load no metric library until a scorer is made.
The registry finds them by importing every module of ``core/metrics/families/`` the first
time it is asked (``families/__init__.py``); they import :mod:`.family`, never this module.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..errors import ConfigError
from .families import FAMILY_MODULES as _FAMILIES
from .family import (
    CHINESE_CHARACTERS,
    DEFAULT_PROFILE,
    METRIC_PROFILES,
    MULTI_REF_MAX,
    MetricFamily,
    MetricInfo,
    register_family,
)
from .scoring_context import PairScorer

__all__ = ["CHINESE_CHARACTERS", "DEFAULT_PROFILE", "METRIC_PROFILES", "MULTI_REF_MAX", "MetricFamily", "MetricInfo",
           "PairScorer", "all_metric_ids", "check_profile", "families_of", "family_of", "metric_families",
           "metric_ids", "metric_info", "register_family", "resolve_metric_ids", "unavailable_reason"]


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
