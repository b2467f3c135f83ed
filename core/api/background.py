"""The app's garbage-collection pauses around its background threads' long-lived results (issue 23).

Only the app uses it; what it still earns is measured in bench/README.md (the app's figures).
"""

from __future__ import annotations

from ..gc_pause import (
    collect_young,
    freeze_survivors,
    gc_paused,
)

__all__ = [
    "collect_young",
    "freeze_survivors",
    "gc_paused",
]
