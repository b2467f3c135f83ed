"""The UI thread tells background work when it runs (core.api.foreground_busy / _idle).

The app's event loop blocks in its selector while it waits for input, timers or messages: the
selector's ``select`` is wrapped so that the UI thread is marked idle just before it waits and busy
as soon as it wakes. Background work that calls ``give_way`` between its steps then leaves the
interpreter to the UI thread while it draws (see core's ``foreground`` for why).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from dialjudge.core.api.background import (
    foreground_busy,
    foreground_gone,
    foreground_idle,
)


class _MarkingSelector:
    """A selector that marks the foreground idle while it waits and busy after."""

    def __init__(self, selector: Any) -> None:
        self.wrapped = selector

    def select(self, timeout: float | None = None) -> Any:
        foreground_idle(None if timeout is None else time.monotonic() + timeout)
        try:
            return self.wrapped.select(timeout)
        finally:
            foreground_busy()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.wrapped, name)


class ForegroundMarker:
    """Installs the marking selector on the app's running loop, and takes it out again."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None

    def install(self) -> bool:
        """On the app's loop (call from the UI thread); False where the loop has no selector to wrap
        (then background work runs as before)."""
        loop = asyncio.get_running_loop()
        selector = getattr(loop, "_selector", None)
        if selector is None or not callable(getattr(selector, "select", None)):
            return False
        if not isinstance(selector, _MarkingSelector):
            loop._selector = _MarkingSelector(selector)  # type: ignore[attr-defined]
        self._loop = loop
        foreground_busy()
        return True

    def remove(self) -> None:
        loop, self._loop = self._loop, None
        if loop is not None:
            selector = getattr(loop, "_selector", None)
            if isinstance(selector, _MarkingSelector):
                loop._selector = selector.wrapped  # type: ignore[attr-defined]
        foreground_gone()
