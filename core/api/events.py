"""What a running judge run or tuning search reports while it works.

A :class:`RunDisplay` receives a run's events (:class:`RunEvent`) on the run's thread; a
tuning search calls its ``on_event`` with search events (:class:`SearchEvent`). The command line
prints them, the app applies them on its UI thread.
"""

from __future__ import annotations

from ..judges.run.events import (
    JudgmentScored,
    RunEvent,
    RunFinished,
    RunPhase,
    RunProgress,
    StopRuleChecked,
)
from ..tuning.search import (
    JudgingProgressed,
    RoundStarted,
    SearchCancelled,
    SearchEvent,
    SearchFinished,
    SearchStarted,
    VariantScored,
)
from .display import (
    RunDisplay,
)

__all__ = [
    "JudgingProgressed",
    "JudgmentScored",
    "RoundStarted",
    "RunDisplay",
    "RunEvent",
    "RunFinished",
    "RunPhase",
    "RunProgress",
    "SearchCancelled",
    "SearchEvent",
    "SearchFinished",
    "SearchStarted",
    "StopRuleChecked",
    "VariantScored",
]
