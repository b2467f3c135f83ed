"""Metric profiles: which code computes the reference-based metrics, so a table can be set
beside a paper's (the default: sacrebleu, rouge-score, NLTK; ``nlg-eval``: the MS-COCO
scorers and METEOR 1.5 as Maluuba's nlg-eval runs them)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..metrics.registry import DEFAULT_PROFILE, METRIC_PROFILES, check_profile, resolve_metric_ids
from ..report import Provenance

__all__ = ["DEFAULT_PROFILE", "METRIC_PROFILES", "profile_names", "profile_columns", "profile_metric_ids", "table_signatures"]


def profile_names() -> tuple[str, ...]:
    """Every profile's name, the default first."""
    return tuple(METRIC_PROFILES)


def profile_metric_ids(profile: str = DEFAULT_PROFILE, requested: Sequence[str] | None = None) -> tuple[str, ...]:
    """The metric ids a table with this profile scores: the requested ones (a profile's own ids
    may be named without its prefix) or every metric of the profile."""
    return resolve_metric_ids(requested, check_profile(profile))


def profile_columns(profile: str, configured: Sequence[str] | None) -> tuple[str, ...]:
    """The metrics the app scores with a profile: those of the configured metrics the profile has
    (named without its prefix), or all of the profile's when it has none of them."""
    if configured is None or check_profile(profile) == DEFAULT_PROFILE:
        return resolve_metric_ids(configured, profile)
    own = resolve_metric_ids(None, profile)
    chosen = tuple(m for m in own if m in configured or m.removeprefix(f"{profile}-") in configured)
    return chosen or own


def table_signatures(records: Sequence[Mapping[str, Any]]) -> list[str]:
    """The signature of each metric row of a table, in row order: the terminal table prints them
    under itself as the exports record them, so a number can be told from one computed otherwise."""
    return list(Provenance.of(records).signatures.values())
