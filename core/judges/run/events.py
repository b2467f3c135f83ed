"""What a running :class:`~dialjudge.core.judges.run.engine.RunEngine` tells its subscribers.

Plain dataclasses with no UI in them: the TUI posts them as Textual messages,
the headless CLI drives a progress bar from them.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..types import Judgment

if TYPE_CHECKING:
    from .stopping import StopState


class RunStatus(str, enum.Enum):
    """A run's status: what the engine reports when it stops, and what the run store's ``status`` column holds.

    * ``running``: judging (a run whose process is gone is found and marked ``interrupted``: see
      ``store.locks.mark_dead_runs_interrupted``);
    * ``finished``: every planned judgment is stored (some may have failed; see ``RunSummary.failures``);
    * ``cancelled``: stopped on request, or by the run's stop rule before every judgment was made; resumable;
    * ``failed``: the run itself broke (the error is stored with it), or every judge was paused by its
      circuit breaker (repeated timeouts, refused requests); resumable once the cause is fixed;
    * ``awaiting``: written to a batch file (core.judges.batch) and waiting for its answers to be
      imported (``runs answers``); a live ``judge`` of the same settings continues it only when asked.
    * ``interrupted``: the process judging it ended without finishing it (killed, crashed, out of memory):
      what it stored stays, and it resumes like a cancelled run.
    """

    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"
    FAILED = "failed"
    AWAITING_ANSWERS = "awaiting"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:  # "finished", not "RunStatus.FINISHED", in text and f-strings
        return self.value

    @property
    def stopped(self) -> bool:
        return self is not RunStatus.RUNNING


@dataclass(frozen=True)
class RunSummary:
    """Where a run stands when it stops."""

    run_id: int
    status: RunStatus  # never RUNNING: the run has stopped
    total: int
    done: int  # judgments stored (including earlier sessions of a resumed run)
    failures: int  # stored judgments without a score
    cached: int  # judgments answered from the response cache in this session
    backend_calls: int  # requests sent to a backend in this session
    resumed: bool
    elapsed_s: float
    #: Per judge variant: stored judgments and failures.
    per_judge: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Why stored judgments failed: (reason, count), commonest first.
    failure_reasons: list[tuple[str, int]] = field(default_factory=list)
    #: Judges a circuit breaker stopped, with the reason; the run is resumable once that is fixed.
    paused: dict[str, str] = field(default_factory=dict)
    #: Per judge variant, the items whose oldest context turns were left out to fit its window
    #: (item -> turns left out), by this session's rendering.
    truncated: dict[str, dict[str, int]] = field(default_factory=dict)
    #: Per judge variant: judgments recorded in this session (cached ones included).
    session_done: dict[str, int] = field(default_factory=dict)

    @property
    def shown_again(self) -> bool:
        """An identical finished run was asked for again: it is shown as it was, nothing was asked."""
        return self.status is RunStatus.FINISHED and self.resumed and not any(self.session_done.values())

    def items_per_s(self, judge: str | None = None) -> float | None:
        """Throughput of this session: judgments recorded / wall time (of one judge variant,
        or of all); None when nothing was recorded or no time passed."""
        done = sum(self.session_done.values()) if judge is None else self.session_done.get(judge, 0)
        return done / self.elapsed_s if done and self.elapsed_s > 0 else None


@dataclass(frozen=True)
class RunStarted:
    run_id: int
    total: int
    #: Judgments already stored when a resumed run starts.
    done: int = 0
    resumed: bool = False
    #: Per API judge in a probability mode: how its answers are asked for (openai_api.SCORING_WAYS' keys).
    scoring: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class JudgmentScored:
    judgment: Judgment
    done: int
    total: int


@dataclass(frozen=True)
class RunProgress:
    done: int
    total: int
    failures: int
    cached: int
    #: Prompt tokens evaluated plus tokens generated, per second of this session.
    tokens_per_s: float
    items_per_s: float
    eta_s: float | None


@dataclass(frozen=True)
class RunFinished:
    run_id: int
    status: RunStatus  # never RUNNING
    summary: RunSummary


@dataclass(frozen=True)
class RunFailed:
    error: str
    run_id: int | None = None


@dataclass(frozen=True)
class RunPhase:
    """The run waits on something before judgments can arrive: the prompts being prepared, a judge's
    model loading, a judge's first answer. Front ends show ``text`` with the seconds since the event
    arrived, ticking; the phase ends with the next phase, :class:`RunStarted` or :class:`JudgmentScored`."""

    text: str
    #: The judge waited on ("" when the wait is the run's own, such as preparing the prompts).
    judge: str = ""


@dataclass(frozen=True)
class StopRuleChecked:
    """The run's stop rule looked at the evidence so far (``state.decided``: the run stops)."""

    state: StopState


RunEvent = RunStarted | JudgmentScored | RunProgress | RunFinished | RunFailed | StopRuleChecked | RunPhase
Subscriber = Callable[[RunEvent], None]
