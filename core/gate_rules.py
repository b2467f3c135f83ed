"""The rules of a CI gate (``dialjudge check``, an experiment file's ``[gate]``), parsed from what a user types.

A rule is one of three kinds:

* :class:`MinRule` (``--min spearman=0.3``): the *lower bound* of the statistic's seeded bootstrap 95%
  CI must reach the threshold, so a judge passes only when the data show it agrees at least that well
  (a point estimate of 0.31 on 20 items does not). Correlations (Spearman, Pearson, Kendall) compare a
  judge's scores with the humans' mean; κ and agreement compare its labels with the human majority on a
  label quality.
* :class:`NoWorseThanRule` (``--no-worse-than 12``): the paired test ``runs compare`` runs (same items,
  the randomization test over contexts) must not show the run significantly worse than run 12.
* :class:`MaxFailuresRule` (``--max-failures 2%``): at most that share of a judge's judgments without a
  score (an answer no parser could read, or a request that failed).

Every parse error names the rule as typed, so a CI log says which one is wrong.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Union

from .errors import ConfigError

CORRELATIONS = ("spearman", "pearson", "kendall")
#: Statistics of a label quality (binary or categorical), against the human majority label.
LABEL_STATISTICS = ("kappa", "agreement")
STATISTICS = CORRELATIONS + LABEL_STATISTICS
SYMBOLS = {"spearman": "ρ", "pearson": "r", "kendall": "τ", "kappa": "κ", "agreement": "agreement"}


@dataclass(frozen=True)
class MinRule:
    """The lower bound of ``statistic``'s bootstrap CI is at least ``threshold``."""

    statistic: str
    threshold: float

    @property
    def text(self) -> str:
        return f"{self.statistic} ≥ {self.threshold_text} (lower CI bound)"

    @property
    def threshold_text(self) -> str:
        """The threshold as typed: 0.3, 80%."""
        return _threshold_text(self.statistic, self.threshold)

    @property
    def on_labels(self) -> bool:
        return self.statistic in LABEL_STATISTICS


@dataclass(frozen=True)
class NoWorseThanRule:
    """The paired test of ``runs compare`` does not find this run's agreement significantly below run ``run_id``'s."""

    run_id: int
    coefficient: str = "spearman"

    @property
    def text(self) -> str:
        return f"no worse than run {self.run_id} (paired test, Δ{SYMBOLS[self.coefficient]})"


@dataclass(frozen=True)
class MaxFailuresRule:
    """At most ``share`` (0-1) of a judge's judgments failed (no score)."""

    share: float

    @property
    def text(self) -> str:
        return f"failed judgments ≤ {100 * self.share:g}%"


Rule = Union[MinRule, NoWorseThanRule, MaxFailuresRule]


def parse_min_rule(text: str, *, where: str = "--min") -> MinRule:
    """``spearman=0.3``, ``kappa=0.4``, ``agreement=80%`` (or ``agreement=0.8``) as a :class:`MinRule`."""
    said = f"{where} {text!r}"
    statistic, sep, value = str(text).partition("=")
    statistic, value = statistic.strip().lower(), value.strip()
    if not sep or not statistic or not value:
        raise ConfigError(f"{said}: expected STATISTIC=THRESHOLD, e.g. spearman=0.3 (statistics: "
                          f"{', '.join(STATISTICS)})")
    if statistic not in STATISTICS:
        raise ConfigError(f"{said}: {statistic!r} is not one of {', '.join(STATISTICS)}")
    percent = value.endswith("%")
    if percent and statistic != "agreement":
        raise ConfigError(f"{said}: only agreement takes a percentage; {statistic} is a coefficient from -1 to 1")
    threshold = _number(value[:-1] if percent else value, said)
    if percent:
        threshold /= 100.0
    low = 0.0 if statistic == "agreement" else -1.0
    if not low <= threshold <= 1.0:
        shown = f"{100 * threshold:g}%" if percent else f"{threshold:g}"
        raise ConfigError(f"{said}: the threshold {shown} is outside {statistic}'s range "
                          f"({'0 to 1, or 0% to 100%' if statistic == 'agreement' else '-1 to 1'})")
    return MinRule(statistic, threshold)


def parse_max_failures(value: object, *, where: str = "--max-failures") -> MaxFailuresRule:
    """``2%`` or ``0.02`` as a :class:`MaxFailuresRule` (a bare number above 1 is refused: 2 meaning 2% or
    2 judgments would be a guess)."""
    said = f"{where} {str(value)!r}"
    if isinstance(value, bool):
        raise ConfigError(f"{said}: expected a share of the judgments, e.g. 2% or 0.02")
    text = str(value).strip()
    percent = text.endswith("%")
    share = _number(text[:-1] if percent else text, said)
    if percent:
        share /= 100.0
    elif share > 1.0:
        raise ConfigError(f"{said}: a share is at most 1; write {text}% for {text} percent")
    if not 0.0 <= share <= 1.0:
        raise ConfigError(f"{said}: the share must be from 0% to 100%")
    return MaxFailuresRule(share)


def parse_no_worse_than(value: object, *, coefficient: str = "spearman", where: str = "--no-worse-than"
                        ) -> NoWorseThanRule:
    """A stored run's id (the baseline) as a :class:`NoWorseThanRule`."""
    said = f"{where} {str(value)!r}"
    if coefficient not in CORRELATIONS:
        raise ConfigError(f"{said}: the coefficient {coefficient!r} is not one of {', '.join(CORRELATIONS)}")
    if isinstance(value, bool):
        raise ConfigError(f"{said}: expected a run id (a whole number)")
    try:
        run_id = int(str(value).strip())
    except ValueError:
        raise ConfigError(f"{said}: expected a run id (a whole number)") from None
    if run_id < 1:
        raise ConfigError(f"{said}: run ids start at 1")
    return NoWorseThanRule(run_id, coefficient)


def parse_rules(minimums: Sequence[str] = (), *, no_worse_than: Sequence[object] = (),
                max_failures: object | None = None, coefficient: str = "spearman",
                where: str = "") -> tuple[Rule, ...]:
    """Every rule of a command line or a ``[gate]`` table, in the order min, no-worse-than, max-failures.
    ``where`` prefixes each rule's name in errors (a TOML file's key: ``experiment.toml: gate.min``)."""
    prefix = f"{where}." if where else "--"
    rules: list[Rule] = [parse_min_rule(m, where=f"{prefix}min") for m in minimums]
    key = "no_worse_than" if where else "no-worse-than"
    rules += [parse_no_worse_than(r, coefficient=coefficient, where=f"{prefix}{key}") for r in no_worse_than]
    if max_failures is not None:
        rules.append(parse_max_failures(max_failures, where=f"{prefix}{'max_failures' if where else 'max-failures'}"))
    return tuple(rules)


def _number(text: str, said: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"{said}: {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ConfigError(f"{said}: {text!r} is not a finite number")
    return value


def _threshold_text(statistic: str, threshold: float) -> str:
    return f"{100 * threshold:g}%" if statistic == "agreement" else f"{threshold:g}"


__all__ = ["CORRELATIONS", "LABEL_STATISTICS", "STATISTICS", "SYMBOLS", "MaxFailuresRule", "MinRule",
           "NoWorseThanRule", "Rule", "parse_max_failures", "parse_min_rule", "parse_no_worse_than", "parse_rules"]
