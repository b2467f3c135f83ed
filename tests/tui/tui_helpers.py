"""Helpers and fixtures for the app's pilot and snapshot tests: services with a fake judge and fast settings.

Test modules import what they use from here by name; shared-data helpers live in
tests/shared_data.py. Nothing imports a conftest by name: two conftest.py files would
share that module name, and whichever loaded last would win.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Callable

import pytest
from textual.worker import WorkerCancelled, WorkerFailed

from dialjudge.core.config import BUNDLED_JUDGE, Config, JudgeConfig, bundled_judge
from dialjudge.tui.services import Services

#: Metrics cheap to compute whose labels do not depend on the machine (METEOR's
#: does: it says whether WordNet was found).
FAST_METRICS = ("bleu1", "bleu4", "rougeL", "chrf++")
FAKE_JUDGE = JudgeConfig(name="fake", backend="fake", model="fake-judge")
SIZE = (140, 40)


def make_services(tmp_path: Path, *, data_dirs: tuple[Path, ...] = (), **overrides) -> Services:
    config = Config(data_dirs=data_dirs, judges={BUNDLED_JUDGE: bundled_judge(), "fake": FAKE_JUDGE})
    settings = dict(metric_ids=FAST_METRICS, n_boot=200, show_timings=False, stats_interval_s=3600.0)
    settings.update(overrides)
    return Services.default(config, **settings).with_store_at(tmp_path / "runs.sqlite3")


@pytest.fixture
def services(tmp_path: Path) -> Services:
    return make_services(tmp_path)


@pytest.fixture
def services_factory(tmp_path: Path) -> Callable[..., Services]:
    return lambda **kw: make_services(tmp_path, **kw)


def static_text(widget, width: int = 200) -> str:
    """What a Static shows, as plain text (its content may be any Rich renderable)."""
    from rich.console import Console

    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    console.print(widget.content)
    return console.export_text()


async def settle(pilot, rounds: int = 8) -> None:
    """Wait until no worker runs and every message they posted was handled (one worker's
    result may start the next: dataset, then metrics, then statistics)."""
    app = pilot.app
    for _ in range(rounds):
        try:
            await app.workers.wait_for_complete()
        except (WorkerFailed, WorkerCancelled):
            pass  # failures are the app's to report (as notifications), and tests check them
        await pilot.pause()
        if not any(w.is_running for w in app.workers):
            await pilot.pause()
            if not any(w.is_running for w in app.workers):
                return
    raise AssertionError("workers kept starting; the app did not settle")
