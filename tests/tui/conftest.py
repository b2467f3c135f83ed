"""Fixtures of the app's pilot and snapshot tests: services with a fake judge, and a watch on failed workers.

Every worker failure the app reports fails the test that caused it, unless the
test says it expects that failure (``worker_failures.expect("text")``): the
app turns failures into notifications, which a test would otherwise never see.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.worker import Worker, WorkerState
from tui_helpers import make_services

from dialjudge.tui.app import DialjudgeApp
from dialjudge.tui.services import Services


@pytest.fixture
def services(tmp_path: Path) -> Services:
    return make_services(tmp_path)


@pytest.fixture
def services_factory(tmp_path: Path) -> Callable[..., Services]:
    return lambda **kw: make_services(tmp_path, **kw)


@dataclass
class WorkerFailure:
    worker: str
    error: BaseException
    expected: bool = False


class WorkerFailures:
    """Every worker failure the app's handler saw during one test."""

    def __init__(self) -> None:
        self.seen: list[WorkerFailure] = []

    def expect(self, text: str) -> list[WorkerFailure]:
        """Mark the failures whose error mentions ``text`` as expected, and return them (at least one)."""
        matching = [f for f in self.seen if text in str(f.error)]
        assert matching, f"no worker failed with {text!r}; failures seen: {[str(f.error) for f in self.seen]}"
        for failure in matching:
            failure.expected = True
        return matching

    def unexpected(self) -> list[WorkerFailure]:
        return [f for f in self.seen if not f.expected]


@pytest.fixture(autouse=True)
def worker_failures(monkeypatch: pytest.MonkeyPatch) -> Iterator[WorkerFailures]:
    """Record what reaches the app's one failure handler; an unexpected failure fails the test."""
    failures = WorkerFailures()
    handler = DialjudgeApp.on_worker_state_changed

    def watched(app: DialjudgeApp, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR and event.worker.error is not None:
            failures.seen.append(WorkerFailure(event.worker.name, event.worker.error))
        handler(app, event)

    monkeypatch.setattr(DialjudgeApp, "on_worker_state_changed", watched)
    yield failures
    unexpected = failures.unexpected()
    if unexpected:
        pytest.fail("a worker failed: " + "; ".join(f"{f.worker}: {f.error!r}" for f in unexpected), pytrace=False)
