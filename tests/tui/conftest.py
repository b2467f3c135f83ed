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

from dialjudge.core.api import Session
from dialjudge.core.api import compute_worker as compute
from dialjudge.core.config import Config
from dialjudge.tui.app import DialjudgeApp
from dialjudge.tui.services import Services


class _OneComputeWorker:
    """The compute worker registry of a test session: every app's session gets the same worker, so one compute
    process serves the Pilot tests one after the other instead of each test starting its own (an interpreter
    that imports core.api, numpy and scipy: about 1.3 s of CPU on the path to every test's first numbers).
    The process is real and computes exactly what the app's own would; only its life spans tests. Closing
    an app leaves it running; the test session ends it."""

    def __init__(self, worker: compute.ComputeWorker) -> None:
        self.worker = worker

    def of(self, session: Session) -> compute.ComputeWorker:
        return self.worker

    def get(self, session: Session) -> compute.ComputeWorker:
        return self.worker

    def pop(self, session: Session) -> None:
        return None


@pytest.fixture(scope="session")
def shared_compute_worker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[compute.ComputeWorker]:
    session = Session(Config(), store_path=tmp_path_factory.mktemp("compute") / "runs.sqlite3")
    worker = compute.ComputeWorker(session)
    worker.keep_session = session  # type: ignore[attr-defined]  # the worker holds its session weakly
    yield worker
    worker.close()


@pytest.fixture(autouse=True)
def one_compute_process(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every app of a test shares the session's compute process (:class:`_OneComputeWorker`), unless the test
    is marked ``own_compute_process`` (it follows the process's own life: started, killed, closed with the app)."""
    if request.node.get_closest_marker("own_compute_process") is None:
        shared = request.getfixturevalue("shared_compute_worker")
        monkeypatch.setattr(compute, "_WORKERS", _OneComputeWorker(shared))


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
