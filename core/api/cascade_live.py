"""A live cascade: the cheap judge's stored run, and the strong judge asked only where it is needed
(``dialjudge cascade CHEAP_RUN --strong-judge NAME``).

The cheap judge's threshold needs only the cheap judge (:func:`core.stats.cascade.cheap_threshold`, on
the labelled calibration items), and the strong judge is consulted only below it, both to choose the
strong threshold (the escalated calibration items) and to decide (the escalated checked items). So the
escalated items are known before the strong judge is asked anything, and it is asked about those alone,
as one normal run of the ``judge`` use case (``item_ids`` = the escalated items): stored, resumable, and
reused when the same cascade is asked again. The report is then the stored-run cascade
(:func:`core.api.cascade.cascade_report`) on the two runs, plus the strong-judge calls saved against
asking it about every item the cheap judge judged.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..config import Config
from ..errors import ConfigError, DialjudgeError
from ..judges.store.run_store import RunStore
from ..model import Dataset
from ..stats.cascade import DEFAULT_DELTA, DEFAULT_TARGET, cheap_threshold, escalated
from .cascade import DEFAULT_CALIBRATION, CascadeReport, CascadeRequest, cascade_report, checked_split, judge_agrees
from .display import RunDisplay
from .judging import judge
from .jury import label_points, load_panel
from .labels_estimates import read_labels_file
from .requests import RunRequest
from .runs import RunPlan, plan_run
from .session import Session


@dataclass(frozen=True)
class LiveCascadeRequest:
    """The cheap judge's run (``RUN`` or ``RUN:JUDGE``) and the strong judge to ask (a judge of the config)."""

    cheap: str
    strong_judge: str
    #: The strong judge's template and scoring mode; None: the cheap run's.
    template: str | None = None
    mode: str | None = None
    quality: str | None = None
    labels_file: Path | None = None
    target: float = DEFAULT_TARGET
    delta: float = DEFAULT_DELTA
    calibration: float = DEFAULT_CALIBRATION
    seed: int = 0

    def __post_init__(self) -> None:
        if not self.strong_judge:
            raise ConfigError("name the strong judge to ask (--strong-judge NAME)")
        self.stored("0")  # the settings shared with the stored-run cascade are checked there

    def stored(self, strong_run: str) -> CascadeRequest:
        """The stored-run cascade on the cheap run and the strong judge's run."""
        return CascadeRequest(self.cheap, strong_run, self.quality, self.labels_file, self.target, self.delta,
                              self.calibration, self.seed)


@dataclass(frozen=True)
class LiveCascadePlan:
    """What the strong judge is asked: its run's plan, on the escalated calibration and checked items."""

    plan: RunPlan
    dataset: Dataset
    #: Items the cheap judge judged (what asking the strong judge everywhere would cost, in calls).
    n_items: int
    asked_calibration: tuple[str, ...]
    asked_checked: tuple[str, ...]

    @property
    def asked(self) -> tuple[str, ...]:
        return self.plan.config.item_ids


@dataclass(frozen=True)
class LiveCascadeReport:
    cascade: CascadeReport
    strong_run: int
    n_items: int
    asked_calibration: int
    asked_checked: int

    @property
    def asked(self) -> int:
        return self.asked_calibration + self.asked_checked

    @property
    def saved(self) -> int:
        """Strong-judge calls not made, against asking it about every item the cheap judge judged."""
        return self.n_items - self.asked


def plan_live_cascade(store: RunStore, request: LiveCascadeRequest, app_config: Config | None = None,
                      dataset: Dataset | None = None) -> LiveCascadePlan:
    """The strong judge's run: the items below the cheap judge's threshold, chosen on the labelled items."""
    config = app_config or Config()
    panel = load_panel(store, [request.cheap], quality=request.quality, app_config=config, dataset=dataset,
                       minimum=1)
    if len(panel.members) != 1:
        raise ConfigError(f"run {request.cheap} has several judges: name the cheap one (RUN:JUDGE)")
    cheap = panel.members[0]
    if not any(math.isfinite(c) for c in cheap.confidence.values()):
        raise DialjudgeError(f"{cheap.name} gave no answer probabilities: a cascade needs the cheap judge's "
                             "confidence (run it in logprob or yesno mode)")
    labels = read_labels_file(request.labels_file) if request.labels_file is not None else None
    truth, _ = label_points(panel, labels)
    settings = request.stored("0")
    calibrate, checked = checked_split(panel, truth, settings, labels is not None)
    if calibrate.sum() < 2:
        raise DialjudgeError(f"only {int(calibrate.sum())} labelled items to choose the thresholds on")
    ids = [ex.id for ex in panel.items]
    c1 = np.array([cheap.confidence.get(i, math.nan) for i in ids])
    a1 = judge_agrees(cheap, ids, panel, truth)
    threshold = cheap_threshold(c1[calibrate], a1[calibrate], target=request.target, delta=request.delta)
    up = escalated(threshold, c1)
    asked_calibration = tuple(i for i, c, u in zip(ids, calibrate, up) if c and u)
    asked_checked = tuple(i for i, c, u in zip(ids, checked, up) if c and u)
    if not asked_calibration and not asked_checked:
        raise DialjudgeError(f"{cheap.name} decides every item at its threshold ({threshold.threshold:.2f}): "
                             "the strong judge need not be asked")
    run_config = store.runs.get_run(cheap.run_id).run_config
    wanted = set(asked_calibration) | set(asked_checked)
    run_request = RunRequest(
        template=request.template or run_config.template, judges=(request.strong_judge,),
        mode=request.mode or run_config.mode.value, top_k=run_config.top_k, aspect=run_config.aspect,
        kpi=run_config.kpi, quality=run_config.quality, yes_label=run_config.yes_label,
        item_ids=tuple(i for i in ids if i in wanted))
    plan = plan_run(run_request, panel.dataset, config)
    return LiveCascadePlan(plan, panel.dataset, len(ids), asked_calibration, asked_checked)


def live_cascade(session: Session, request: LiveCascadeRequest, *,
                 display: Callable[[RunPlan], AbstractContextManager[RunDisplay | None]] | None = None
                 ) -> LiveCascadeReport:
    """Ask the strong judge where the cheap one is below its threshold, then report the cascade of the two runs.

    The strong judge's run is a normal run: an unfinished one of the same settings is resumed, a finished
    one reused."""
    with session.store() as store:
        live = plan_live_cascade(store, request, session.config)
    outcome = (judge(session, [live.plan], live.dataset) if display is None
               else judge(session, [live.plan], live.dataset, display=display))
    run_id = outcome.run_ids[-1]
    if not outcome.finished:
        raise DialjudgeError(f"the strong judge's run {run_id} did not finish: ask the same cascade again to "
                             "resume it")
    with session.store() as store:
        report = cascade_report(store, request.stored(str(run_id)), session.config, live.dataset)
    return LiveCascadeReport(report, run_id, live.n_items, len(live.asked_calibration), len(live.asked_checked))


def live_lines(report: LiveCascadeReport) -> list[str]:
    """What the live cascade adds to the stored-run cascade's lines: the strong judge's run and the calls saved."""
    share = report.saved / report.n_items if report.n_items else math.nan
    return [f"the strong judge was asked only where needed (run {report.strong_run}): {report.asked_calibration} "
            f"calibration items and {report.asked_checked} checked items escalated, {report.asked} of "
            f"{report.n_items} items; {report.saved} strong-judge calls saved ({share:.0%}) against judging "
            "every item"]


def live_record(report: LiveCascadeReport) -> dict[str, int]:
    return {"strong_run": report.strong_run, "items": report.n_items, "asked_calibration": report.asked_calibration,
            "asked_checked": report.asked_checked, "strong_calls_saved": report.saved}


__all__ = ["LiveCascadePlan", "LiveCascadeReport", "LiveCascadeRequest", "live_cascade", "live_lines",
           "live_record", "plan_live_cascade"]
