"""How a front end follows a run: a :class:`RunDisplay` receives every engine event.

The command line's display draws a progress bar and prints stop-rule looks; the
app's posts each event to the UI thread as a message. Both fold the events into
a :class:`RunState` (core.judges.status), whose ``status_text`` is the one
status line both show. Events arrive on the thread that runs the engine.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from ..judges.run.events import RunEvent


@runtime_checkable
class RunDisplay(Protocol):
    """Anything that follows a run's events (progress, judgments, stop-rule looks, the end)."""

    def on_event(self, event: RunEvent) -> None: ...
