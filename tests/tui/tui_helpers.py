"""Helpers of the app's pilot and snapshot tests (plain functions; the fixtures live in conftest.py).

Shared-data helpers live in tests/shared_data.py. Every wait here is bounded
and says what it waited for when it gives up.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.pilot import Pilot
from textual.worker import WorkerCancelled, WorkerFailed

from dialjudge.core.config import BUNDLED_JUDGE, Config, JudgeConfig, bundled_judge
from dialjudge.tui.services import Services

#: Metrics cheap to compute whose labels do not depend on the machine (METEOR's
#: does: it says whether WordNet was found).
FAST_METRICS = ("bleu1", "bleu4", "rougeL", "chrf++")
FAKE_JUDGE = JudgeConfig(name="fake", backend="fake", model="fake-judge")
SIZE = (140, 40)
#: Seconds a wait may take before it fails (generous: the machine may be busy; nothing asserts a timing).
WAIT_LIMIT_S = 60.0


def make_services(tmp_path: Path, *, data_dirs: tuple[Path, ...] = (), **overrides: Any) -> Services:
    # Two threads, whatever this machine has: the Run screen shows the count, and snapshots must not vary.
    bundled = dataclasses.replace(bundled_judge(), n_threads=2)
    config = Config(data_dirs=data_dirs, judges={BUNDLED_JUDGE: bundled, "fake": FAKE_JUDGE})
    settings: dict[str, Any] = dict(metric_ids=FAST_METRICS, n_boot=200, show_timings=False,
                                    stats_interval_s=3600.0)
    settings.update(overrides)
    return Services.default(config, **settings).with_store_at(tmp_path / "runs.sqlite3")


def static_text(widget: Any, width: int = 200) -> str:
    """What a Static shows, as plain text (its content may be any Rich renderable)."""
    from rich.console import Console

    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    return console.export_text()


def toast_texts(app: Any) -> list[str]:
    """The notifications on screen, as text (run the app with ``notifications=True``)."""
    return [str(toast.render()) for toast in app.screen.query("Toast")]


async def settle(pilot: Pilot[Any], rounds: int = 8) -> None:
    """Wait until no worker runs and every message they posted was handled (one worker's
    result may start the next: dataset, then metrics, then statistics).

    A failed worker is not raised here: the app reports it, and the ``worker_failures``
    fixture fails the test unless the test expects it.
    """
    app = pilot.app
    for _ in range(rounds):
        # A failure is reported through the app's handler, which the worker_failures fixture watches.
        with contextlib.suppress(WorkerFailed, WorkerCancelled):
            await app.workers.wait_for_complete()
        await pilot.pause()
        if not any(w.is_running for w in app.workers):
            await pilot.pause()
            if not any(w.is_running for w in app.workers):
                return
    raise AssertionError(f"workers kept starting; the app did not settle after {rounds} rounds: "
                         f"{[w.name for w in app.workers if w.is_running]}")


async def wait_until(pilot: Pilot[Any], condition: Callable[[], bool], what: str,
                     limit_s: float = WAIT_LIMIT_S) -> None:
    """Let the app run until ``condition()`` holds; fail, naming ``what``, after ``limit_s`` seconds."""
    deadline = time.monotonic() + limit_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit_s:.0f} s waiting until {what}")
        await pilot.pause(0.01)


#: A search space over the fake judge for the Tune screen's tests; each test adds its own last variant.
FAKE_JUDGE_SEARCH_SPACE = """
[search]
quality = "overall"
first_sample = 2
finalists = 1
n_boot = 100
[defaults]
template = "likert-1to5"
aspect = "overall"
judge = "fake"
mode = "logprob"
[[variant]]
name = "plain"
[[variant]]
name = "calibrated"
persona = "calibrated-annotator"
[[variant]]
name = "strict"
persona = "strict-fact-checker"
"""
