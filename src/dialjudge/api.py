"""dialjudge's Python API: the application layer the command line and the app call, for notebooks and scripts.

Everything here is re-exported from ``dialjudge.core.api`` (the use cases, their requests and results, and the
:class:`Session` they share) and from its topic modules (the leaderboard's records, ...), so a script computes
exactly what ``dialjudge`` prints for the same request. ``docs/python.md`` walks through it with an example that
the test suite runs; it also states which names are stable.
"""

from __future__ import annotations

from .core.api import *  # noqa: F403  (the layer's surface, as core.api.__all__ lists it)
from .core.api import __all__ as _layer_names
from .core.api.leaderboards import records_of as leaderboard_records

__all__ = [*_layer_names, "leaderboard_records"]
