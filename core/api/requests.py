"""What a front end asks the application layer for: frozen, typed requests.

The command line turns its arguments into these; the app turns its forms into the
same ones. A request holds choices as the user made them (names, specs, numbers);
validating them is core's job (``core.api.runs.plan_run`` and friends), so both
front ends refuse the same things with the same messages.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config import JudgeConfig
from ..model import Aggregation

#: The judge a run uses when none is named: the bundled model.
DEFAULT_JUDGE = "smollm2"


@dataclass(frozen=True)
class RunRequest:
    """One judge run, as the Run screen's form or ``dialjudge judge``'s options ask for it."""

    template: str
    #: Judges of the config file (and of ``extra_judges``) by name; empty: the bundled judge.
    judges: tuple[str, ...] = ()
    #: A scoring mode (core.judges.types.ScoringMode's value); None: the template's preferred one
    #: (generate when ``constrain`` is on).
    mode: str | None = None
    #: core.judges.constraint.AnswerConstraint's value: generate mode held to the template's answer format.
    constrain: str = "off"
    #: Naming neither a mode nor a constraint, score the way the judges do for the template (their
    #: ``options.scoring``; core.planning.default_scoring); False, as a protocol that names its own
    #: scoring asks: the template's preferred mode.
    judge_defaults: bool = True
    #: Logprob mode: 0 = expected value over every valid score; K > 0 = the K most likely answers.
    top_k: int = 0
    aspect: str | None = None
    kpi: str | None = None
    #: The human-rated quality the run is compared with; None: inferred from the aspect or KPI.
    quality: str | None = None
    #: Persona names ("none": no persona); several sweep the personas.
    personas: tuple[str, ...] = ()
    fewshot: str = "none"
    #: With ``fewshot`` random:K, that many random draws (one run each, seeds seed..seed+R-1).
    fewshot_draws: int = 1
    #: A subset spec; None: all items, or a KPI run's own items.
    subset: str | None = None
    limit: int | None = None
    repeats: int = 1
    item_ids: tuple[str, ...] = ()
    name: str = ""
    #: Two-label qualities: the label a judge's yes means, when the label names do not say it.
    yes_label: str | None = None
    #: Judges typed in on the Run screen (a .gguf path), beside those of the config file.
    extra_judges: tuple[JudgeConfig, ...] = ()
    #: Pairwise templates: "all" or pairs per context (core.judges.pairwise.PairSetting); None: not
    #: asked (a pairwise template still runs pairwise, every pair).
    pairs: str | None = None
    pair_seed: int = 0
    #: Pairwise: ask each pair in both orders (position consistency), else once in a seeded order.
    pair_both_orders: bool = True

    @property
    def judge_names(self) -> tuple[str, ...]:
        return self.judges or (DEFAULT_JUDGE,)

    @property
    def pairwise(self) -> bool:
        """The request asks for pairs itself (a pairwise template runs pairwise without asking)."""
        return self.pairs is not None or not self.pair_both_orders


@dataclass(frozen=True)
class StopRequest:
    """Stop a run once the humans' agreement is known well enough (core.judges.stopping.StopRule)."""

    #: Stop once the bootstrap CI of Spearman's ρ is narrower than this.
    ci_width: float | None = None
    #: Stop once the CI of Δρ against this stored run excludes 0 (or is narrower than ``ci_width``).
    baseline_run: int | None = None
    check_every: int = 5
    seed: int = 0

    @property
    def asked(self) -> bool:
        return self.ci_width is not None or self.baseline_run is not None


@dataclass(frozen=True)
class AgreementRequest:
    """How a run's judges are set against the humans, in the tables that follow a run."""

    #: Qualities to correlate with; empty: the run's quality.
    qualities: tuple[str, ...] = ()
    #: "turn", "dialog", "system" or "both" (item and system level).
    level: str = "turn"
    aggregation: Aggregation = Aggregation.MEAN
    include_metrics: bool = True
    n_boot: int = 1000
    seed: int = 0
    #: core.stats.label_agreement.TieRule's value for a tied human majority.
    tie_rule: str = "exclude"
    #: Which code computes the reference-based metrics (core.api.profiles).
    metric_profile: str = "default"


@dataclass(frozen=True)
class RescoreRequest:
    """Score a stored run's answers again, without the model (blank: keep the run's setting)."""

    top_k: int | None = None
    mode: str | None = None
    template: str | None = None
    mapping: str | None = None
    name: str = ""

    @property
    def empty(self) -> bool:
        return self.top_k is None and not self.mode and not self.template and not self.mapping


@dataclass(frozen=True)
class CompareRequest:
    """Two stored runs side by side: correlation deltas, paired comparisons and the prompt diff."""

    run_a: int
    run_b: int
    #: Empty: the runs' qualities.
    qualities: tuple[str, ...] = ()
    #: Empty: the whole set, and its open and closed parts where it holds both.
    subsets: tuple[str, ...] = ()
    #: Paired bootstrap resamples of contexts for the Δ CIs and verdicts (0: no paired comparison).
    paired_boot: int = 2000
    seed: int = 0


@dataclass(frozen=True)
class ExportRequest:
    """A stored run's agreement tables and judgments written into a folder."""

    run_id: int
    folder: Path
    #: core.run_export.FORMAT_LABELS keys; empty: all of them.
    formats: tuple[str, ...] = ()
    n_boot: int = 1000
    seed: int = 0
    #: Reference-based metric columns to set beside the judges (already computed, or None).
    metric_scores: dict[str, dict[str, float | None]] | None = field(default=None, compare=False)
