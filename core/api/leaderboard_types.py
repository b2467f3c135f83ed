"""What a leaderboard is asked for and what it gives back: the request, one row per evaluator, the board
with its method text (shared by :mod:`.leaderboards` and :mod:`.preference_leaderboard`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ConfigError
from ..stats.baselines import LengthBias
from ..stats.jury import JuryMethod
from ..stats.level_estimates import Estimate
from ..stats.meta_levels import CONTEXT, GLOBAL, LEVELS, SYSTEM, SystemAgreement, TieCalibratedAccuracy
from ..stats.significance_clusters import Clustering
from .leaderboard_columns import RunInfo, Usage

JURY_METHODS = tuple(m.value for m in JuryMethod)
#: The level of a dataset of pre-paired replies: each judge's verdicts against the humans' preference.
PREFERENCE = "preference"
LEVEL_TITLES = {GLOBAL: "global (all items)", CONTEXT: "within-context (responses to one context ranked)",
                SYSTEM: "system-level (system means)", PREFERENCE: "pre-paired replies (the humans' preference)"}


@dataclass(frozen=True)
class LeaderboardRequest:
    """Which dataset and quality, which runs (empty: every run on them), the level, and the resampling."""

    dataset: str
    quality: str
    runs: tuple[int, ...] = ()
    level: str = GLOBAL
    metrics: bool = True
    n_boot: int = 1000
    seed: int = 0
    alpha: float = 0.05
    #: Juries to rank beside the runs' judges: each a tuple of members (RUN or RUN:JUDGE), pooled by ``jury_method``.
    juries: tuple[tuple[str, ...], ...] = ()
    jury_method: str = "majority"

    def __post_init__(self) -> None:
        if self.jury_method not in JURY_METHODS:
            raise ConfigError(f"--jury-method must be one of {', '.join(JURY_METHODS)}, not {self.jury_method!r}")
        if self.level not in LEVELS:
            raise ConfigError(f"--level must be one of {', '.join(LEVELS)}, not {self.level!r}")
        if self.n_boot < 0:
            raise ConfigError(f"--bootstrap must be at least 0, not {self.n_boot}")
        if not 0 < self.alpha < 1:
            raise ConfigError(f"--alpha must be between 0 and 1, not {self.alpha}")


@dataclass(frozen=True)
class LeaderboardRow:
    name: str
    kind: str
    estimate: Estimate
    rank: int | None = None
    cluster: int | None = None
    failures: int = 0
    run: RunInfo | None = None
    tie_calibrated: TieCalibratedAccuracy | None = None
    system: SystemAgreement | None = None
    length: LengthBias | None = None
    flip_rate: float | None = None
    first_position: float | None = None
    usage: Usage | None = None
    #: Pre-paired replies: of the decisive verdicts on replies of different length, the share the longer won.
    longer_wins: float | None = None
    #: Median probability mass on valid answers (probability modes).
    valid_mass: float | None = None


@dataclass(frozen=True)
class Leaderboard:
    dataset: str
    quality: str
    level: str
    statistic: str
    #: Ranked rows from the best statistic down, then the rows without one.
    rows: tuple[LeaderboardRow, ...]
    ceiling: LeaderboardRow
    clustering: Clustering
    runs: tuple[RunInfo, ...]
    n_boot: int
    notes: tuple[str, ...] = field(default=())

    def method_lines(self) -> list[str]:
        if self.level == PREFERENCE:
            return [f"statistic: {self.statistic}", f"95% CI: percentile bootstrap over prompts, or pairs where each "
                    f"prompt has one ({self.n_boot:,} resamples)" if self.n_boot else "no CIs (no bootstrap "
                    "resamples asked for)", *self.clustering.method_lines,
                    "human ceiling: the chance that two humans' votes on one pair agree (ties counted), over the "
                    "pairs with two or more votes",
                    "bias card: longer wins = of the decisive verdicts on replies of different length, the share the "
                    "longer reply won (the humans' own on the ceiling row); flip rate under swapped order; share of "
                    "decisive verdicts won by the reply shown first"]
        ci = (f"95% CI: percentile bootstrap over contexts ({self.n_boot:,} resamples"
              + ("; system means recomputed in each, systems not resampled)" if self.level == SYSTEM else ")")
              if self.n_boot else "no CIs (no bootstrap resamples asked for)")
        lines = [f"level: {LEVEL_TITLES[self.level]}; statistic: {self.statistic}", ci, *self.clustering.method_lines,
                 "human ceiling: each annotator against the mean of the others (leave-one-out), averaged; "
                 "on the items the judges were compared on"]
        if self.level == CONTEXT:
            lines.append("tie-calibrated pairwise accuracy (Deutsch, Foster & Freitag 2023, \"Ties Matter\"): pairs of "
                         "responses to one context; tie band ε chosen on one half of the contexts, accuracy on the "
                         "other, then swapped (ε of each half shown)")
        if self.level == SYSTEM:
            lines.append("system pairwise accuracy: system pairs ordered alike (a tie only matches a tie); soft "
                         "pairwise accuracy (Thompson et al. 2024): mean of 1 − |p_eval − p_humans| over system "
                         "pairs, one-sided paired permutation p-values")
        lines.append("mass: the median probability the judge's answers put on valid answers (probability modes)")
        lines.append("bias card: Pearson r of the score with reply length (tokens) beside the humans' own; the "
                     "agreement r with length partialled out; for pairwise runs the flip rate under swapped order "
                     "and the share of decisive verdicts won by the first-shown reply; pairwise runs rank by win "
                     "rate over every asked order (net votes over both orders)")
        return lines


__all__ = ["LEVEL_TITLES", "PREFERENCE", "Leaderboard", "LeaderboardRequest", "LeaderboardRow"]
