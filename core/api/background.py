"""How the app's background threads share the interpreter with its UI thread (issue 23).

A UI concern that still lives in core until judge runs and heavy computation move
to worker processes; only the app uses it.
"""

from __future__ import annotations

from ..foreground import (
    end_turn,
    foreground_busy,
    foreground_gone,
    foreground_idle,
    give_way,
    giving_way,
)
from ..gc_pause import (
    collect_young,
    freeze_survivors,
    gc_paused,
)

__all__ = [
    "collect_young",
    "end_turn",
    "foreground_busy",
    "foreground_gone",
    "foreground_idle",
    "freeze_survivors",
    "gc_paused",
    "give_way",
    "giving_way",
]
