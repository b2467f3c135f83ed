"""What a running :class:`~dialjudge.core.judges.engine.RunEngine` tells its subscribers.

Plain dataclasses with no UI in them: the TUI posts them as Textual messages,
the headless CLI drives a progress bar from them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Union

from .types import Judgment


@dataclass(frozen=True)
class RunSummary:
    """Where a run stands when it stops."""

    run_id: int
    status: str  # finished | cancelled | failed
    total: int
    done: int  # judgments stored (including earlier sessions of a resumed run)
    failures: int  # stored judgments without a score
    cached: int  # judgments answered from the response cache in this session
    backend_calls: int  # requests sent to a backend in this session
    resumed: bool
    elapsed_s: float
    #: Per judge variant: stored judgments and failures.
    per_judge: dict[str, tuple[int, int]] = field(default_factory=dict)
    #: Per judge variant: judgments recorded in this session (cached ones included).
    session_done: dict[str, int] = field(default_factory=dict)

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
    status: str  # finished | cancelled
    summary: RunSummary


@dataclass(frozen=True)
class RunFailed:
    error: str
    run_id: int | None = None


RunEvent = Union[RunStarted, JudgmentScored, RunProgress, RunFinished, RunFailed]
Subscriber = Callable[[RunEvent], None]
