"""Where a judge run stands: its status, its counts as events arrive, and the one-line summary of both.

The engine's events (:mod:`..run.events`) fold into a :class:`RunState`; the app's
Run screen and the CLI's progress bar both show :func:`status_line` of it, so
a run reads the same wherever it is followed.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from ...format import duration_text
from ...stats.running_median import RunningMedian
from ..run.eta import MovingEta
from ..run.events import (
    JudgmentScored,
    RunEvent,
    RunFailed,
    RunFinished,
    RunPhase,
    RunProgress,
    RunStarted,
    RunStatus,
    RunSummary,
    StopRuleChecked,
)
from ..run.scoring import format_mass, is_low_mass_failure


@dataclass
class RunState:
    """One run followed through its events; ``status`` None: starting (the judges are loading)."""

    run_id: int | None = None
    status: RunStatus | None = None
    total: int = 0
    done: int = 0
    failures: int = 0
    progress: RunProgress | None = None
    summary: RunSummary | None = None
    error: str | None = None
    judges: list[str] = field(default_factory=list)
    #: Probability modes: the valid-answer mass of each judgment that has one, how many were not
    #: scored for too little of it, how many masses are lower bounds, and how API judges are asked.
    masses: RunningMedian = field(default_factory=RunningMedian)
    low_mass: int = 0
    mass_lower_bounds: int = 0
    scoring: dict[str, str] = field(default_factory=dict)
    #: What the run waits on now (a model loading, a first answer), and since when (by ``clock``).
    phase: str | None = None
    phase_since: float | None = None
    #: The remaining time, recomputed whenever it is shown (see run.eta).
    eta: MovingEta = field(default_factory=MovingEta)
    #: The clock of ``phase_since`` and the ETA: a test drives its own.
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    @property
    def active(self) -> bool:
        return self.status is None or self.status is RunStatus.RUNNING

    def phase_elapsed_s(self) -> float | None:
        """Seconds the current phase has lasted by ``clock`` (None: no phase)."""
        if self.phase is None or self.phase_since is None:
            return None
        return max(self.clock() - self.phase_since, 0.0)

    def eta_s(self) -> float | None:
        """Seconds left by ``clock``: counts down between judgments and grows when one is overdue
        (None: unknown, nothing asked yet)."""
        return self.eta.eta_s(self.clock())

    def apply(self, event: RunEvent) -> None:
        """Fold one engine event into the state (at the time ``clock`` says)."""
        now = self.clock()
        if not isinstance(event, (RunPhase, RunProgress, StopRuleChecked)):
            self.phase = self.phase_since = None  # whatever was awaited has arrived
        if isinstance(event, RunPhase):
            self.phase, self.phase_since = event.text, now
        elif isinstance(event, RunStarted):
            self.run_id, self.total, self.done = event.run_id, event.total, event.done
            self.status = RunStatus.RUNNING
            self.scoring = dict(event.scoring)
            self.eta.start(now, total=event.total, done=event.done)
        elif isinstance(event, JudgmentScored):
            self.done, self.total = event.done, event.total
            self.eta.judged(now, done=event.done, total=event.total, cached=event.judgment.cached)
            if event.judgment.failed:
                self.failures += 1
            mass = event.judgment.valid_mass
            if mass is not None:
                self.masses.add(mass)
                self.mass_lower_bounds += event.judgment.mass_is_lower_bound
                self.low_mass += is_low_mass_failure(event.judgment)
        elif isinstance(event, RunProgress):
            self.progress = event
            self.done, self.total, self.failures = event.done, event.total, event.failures
        elif isinstance(event, RunFinished):
            # Run id 0: stopped before anything was recorded (there is no run to name).
            self.run_id = event.run_id or None
            self.status, self.summary = RunStatus(event.status), event.summary
            self.done, self.failures = event.summary.done, event.summary.failures
        elif isinstance(event, RunFailed):
            self.status, self.error = RunStatus.FAILED, event.error
            if event.run_id is not None:
                self.run_id = event.run_id


class Part(str, enum.Enum):
    """What a piece of the status line says, so a UI can colour it."""

    STATUS = "status"
    COUNT = "count"
    FAILURES = "failures"
    NOTE = "note"
    ERROR = "error"


def status_line(state: RunState, *, show_timings: bool = True) -> list[tuple[str, Part]]:
    """Status, done/total, failures, cached, items/s and ETA, as (text, part) pieces to join.

    Timings can be left out (snapshot tests). No key hints: how to cancel or
    resume is the caller's to say (a key in the app, a command in the shell).
    """
    label = f"Run {state.run_id}" if state.run_id is not None else "Run"
    status = state.status.value if state.status is not None else "starting"
    out: list[tuple[str, Part]] = [(f"{label} {status}", Part.STATUS)]
    if state.status is None:
        out.append((_phase_text(state, show_timings) if state.phase else " · loading the judges…", Part.NOTE))
        return out
    out.append((f" · {state.done}/{state.total} judged", Part.COUNT))
    out.append((f" · {state.failures} failed", Part.FAILURES if state.failures else Part.NOTE))
    progress = state.progress
    if progress is not None and progress.cached:
        out.append((f" · {progress.cached} from cache", Part.NOTE))
    out.extend(_mass_pieces(state))
    if state.active and state.phase:
        out.append((_phase_text(state, show_timings), Part.NOTE))
    if state.active and show_timings and (progress is not None or state.eta.asked):
        rate = f"{_rate_text(progress.items_per_s)} · " if progress is not None else ""
        eta = state.eta_s()  # None until a judgment was asked (answers from the cache say nothing of the judge)
        out.append((f" · {rate}ETA {duration_text(eta)}", Part.COUNT))
    if state.error:
        out.append((f"\n{state.error}", Part.ERROR))
    return out


def _rate_text(items_per_s: float) -> str:
    """"2.5 items/s"; a slow judge as "48 s/item", where "0.0 items/s" would say nothing."""
    if 0 < items_per_s < 0.1:
        return f"{1 / items_per_s:.0f} s/item"
    return f"{items_per_s:.1f} items/s"


def _phase_text(state: RunState, show_timings: bool) -> str:
    """" · loading judge smollm2… 0:12": the phase with the time it has lasted (left out without timings)."""
    elapsed = state.phase_elapsed_s()
    if not show_timings or elapsed is None:
        return f" · {state.phase}…"
    return f" · {state.phase}… {duration_text(elapsed)}"


#: Short names of the ways an API judge is asked (openai_api.SCORING_WAYS), for the status line.
SCORING_SHORT = {
    "template": "completions + chat template", "plain": "completions, no chat template",
    "continue": "chat, continue_final_message", "prefill": "chat, assistant prefill (unverified)",
    "unprefixed": "chat without the answer prefix",
}


def _mass_pieces(state: RunState) -> list[tuple[str, Part]]:
    """How API judges are asked, and the probability the answers put on valid ones (median, least)."""
    out = [(f" · {judge}: {SCORING_SHORT.get(way, way)}", Part.NOTE) for judge, way in state.scoring.items()]
    if state.masses:
        bound = ">=" if state.mass_lower_bounds else ""
        out.append((f" · valid mass {bound}{format_mass(state.masses.median)} median, "
                    f"{bound}{format_mass(state.masses.least)} least", Part.NOTE))
    if state.low_mass:
        out.append((f" · {state.low_mass} not scored for too little valid mass", Part.FAILURES))
    return out


def status_text(state: RunState, *, show_timings: bool = True) -> str:
    """:func:`status_line` as plain text."""
    return "".join(text for text, _ in status_line(state, show_timings=show_timings))


def problem_lines(summary: RunSummary) -> list[tuple[str, Part]]:
    """What went wrong in a finished run, one line each: judges a circuit breaker paused (with
    why), dialogues cut to fit a judge's window, and failure reasons with their counts, most
    frequent first. Empty when nothing did."""
    lines: list[tuple[str, Part]] = [(reason, Part.ERROR) for reason in summary.paused.values()]
    for judge, items in summary.truncated.items():
        counts = sorted(items.values())
        spread = str(counts[0]) if counts[0] == counts[-1] else f"{counts[0]}–{counts[-1]}"
        lines.append((f"judge {judge}: the oldest turns of {len(items)} dialogue(s) were left out to fit its "
                      f"context window ({spread} turn(s) each; the response and the instructions are never cut)",
                      Part.NOTE))
    for reason, count in sorted(summary.failure_reasons, key=lambda rc: -rc[1]):
        lines.append((f"{count} × {reason}", Part.FAILURES))
    return lines
