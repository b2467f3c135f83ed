"""Runs that survive being killed: SIGKILL, SIGTERM, Ctrl-C and the app's cancel, then a resume.

A run in a subprocess (run_child.py, the deterministic fake judge) is stopped
at seeded random points; the resumed run must hold each judgment exactly once,
identical to an uninterrupted run. Two processes on one run: the second is
refused, naming the first. Every wait is bounded.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import run_child

from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.run.events import JudgmentScored
from dialjudge.core.judges.store.run_store import RunLocked, RunStore

ITEMS = 15  # x 2 repeats = 30 judgments
TOTAL = ITEMS * 2
CHILD = Path(run_child.__file__)
DEADLINE_S = 60.0


def start_child(store_path: Path, delay_s: float, write_interval_s: float | None = None) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    interval = [] if write_interval_s is None else [str(write_interval_s)]
    return subprocess.Popen([sys.executable, str(CHILD), str(store_path), str(ITEMS), str(delay_s), *interval],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def stored(store_path: Path) -> int:
    if not store_path.exists():
        return 0
    try:
        with sqlite3.connect(store_path, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])
    except sqlite3.OperationalError:  # the child has not created the tables yet
        return 0


def wait_until_stored(process: subprocess.Popen[str], store_path: Path, at_least: int) -> int:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        n = stored(store_path)
        if n >= at_least:
            return n
        try:
            process.wait(timeout=0.02)  # doubles as the pause between polls
        except subprocess.TimeoutExpired:
            continue
        out, err = process.communicate()
        pytest.fail(f"the run ended (code {process.returncode}) before {at_least} judgments: {err}")
    process.kill()
    pytest.fail(f"fewer than {at_least} judgments within {DEADLINE_S:g} s")


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail("the child did not stop")
    return process.returncode, out, err


def results(store: RunStore) -> dict[tuple[str, str, int], tuple[Any, ...]]:
    (record,) = store.runs.list_runs()
    rows = store.judgments.export_rows(record.id)
    out = {(r["item_id"], r["judge"], r["repeat"]): (r["score"], r["normalized"], r["raw_output"],
                                                     r["distribution"], r["error"]) for r in rows}
    assert len(out) == len(rows)  # each judgment exactly once
    return out


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[str, str, int], tuple[Any, ...]]:
    """The uninterrupted run."""
    with RunStore(tmp_path_factory.mktemp("reference") / "runs.sqlite3") as store:
        summary = asyncio.run(run_child.engine(store, ITEMS, FakeBackend("fake", max_concurrency=2)).run())
        assert summary.status == "finished" and summary.failures == 0
        return results(store)


def resume(store_path: Path) -> tuple[Any, FakeBackend]:
    backend = FakeBackend("fake", max_concurrency=2)
    with RunStore(store_path) as store:
        summary = asyncio.run(run_child.engine(store, ITEMS, backend).run())
    return summary, backend


@pytest.mark.parametrize("kill_at", random.Random(20261123).sample(range(1, TOTAL - 2), 3))
def test_sigkill_at_a_random_point_then_resume(tmp_path: Path, reference: dict, kill_at: int) -> None:
    store_path = tmp_path / "runs.sqlite3"
    # Batches of a few judgments (about 66 are made a second): the kill lands before the last commit,
    # and whatever the last batch held is lost and asked again.
    child = start_child(store_path, 0.03, write_interval_s=0.05)
    wait_until_stored(child, store_path, kill_at)
    child.send_signal(signal.SIGKILL)
    code, _, _ = finish(child)
    assert code == -signal.SIGKILL
    before = stored(store_path)
    assert 0 < before < TOTAL
    with RunStore(store_path) as store:
        (record,) = store.runs.list_runs()
        assert record.status == "running"  # a killed process marks nothing...
        assert store.locks.run_lock(record.fingerprint)["pid"] == child.pid  # ...and leaves its lock
    summary, backend = resume(store_path)  # the stale lock is taken over
    assert summary.status == "finished" and summary.resumed
    assert len(backend.requests) == TOTAL - before  # only what was missing
    with RunStore(store_path) as store:
        assert results(store) == reference
        assert store.locks.run_lock(store.runs.list_runs()[0].fingerprint) is None


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_ctrl_c_mark_the_run_interrupted_then_resume(tmp_path: Path, reference: dict,
                                                                 how: signal.Signals) -> None:
    store_path = tmp_path / "runs.sqlite3"
    child = start_child(store_path, 0.03)
    wait_until_stored(child, store_path, random.Random(how.value).randrange(2, TOTAL // 2))
    child.send_signal(how)
    code, _, err = finish(child)
    assert code == 130 and "interrupted" in err and "Traceback" not in err, err
    with RunStore(store_path) as store:
        (record,) = store.runs.list_runs()
        assert record.status == "cancelled"  # like Ctrl-C: resumable, marked
        assert store.locks.run_lock(record.fingerprint) is None  # and the lock released
        before = store.judgments.count_judgments(record.id)
    summary, backend = resume(store_path)
    assert summary.status == "finished" and len(backend.requests) == TOTAL - before
    with RunStore(store_path) as store:
        assert results(store) == reference


def test_cancel_from_the_app_then_resume(tmp_path: Path, reference: dict) -> None:
    """The app cancels from its UI thread (tui/run_control.py calls engine.cancel())."""
    store_path = tmp_path / "runs.sqlite3"
    with RunStore(store_path) as store:
        engine = run_child.engine(store, ITEMS, FakeBackend("fake", max_concurrency=2))

        def on_event(event: Any) -> None:
            if isinstance(event, JudgmentScored) and event.done == 11:
                canceller = threading.Thread(target=engine.cancel)
                canceller.start()
                canceller.join(timeout=5)

        engine.subscribe(on_event)
        summary = asyncio.run(engine.run())
        assert summary.status == "cancelled" and 11 <= summary.done < TOTAL
        assert store.locks.run_lock(run_child.run_config().fingerprint) is None
    resumed, backend = resume(store_path)
    assert resumed.status == "finished" and len(backend.requests) == TOTAL - summary.done
    with RunStore(store_path) as store:
        assert results(store) == reference


def test_a_second_process_on_the_same_run_is_refused_naming_the_first(tmp_path: Path, reference: dict) -> None:
    store_path = tmp_path / "runs.sqlite3"
    first = start_child(store_path, 0.25)  # slow enough to outlive the second one's start
    try:
        wait_until_stored(first, store_path, 2)
        second = start_child(store_path, 0.0)
        code, _, err = finish(second)
        assert code == 2 and f"is already being executed by process {first.pid}" in err, err
        assert "Traceback" not in err
    finally:
        first.send_signal(signal.SIGTERM)
        finish(first)
    # The same refusal in one process (the app starting the run twice).
    with RunStore(store_path) as store:
        owner = store.locks.lock_run(run_child.run_config().fingerprint)
        with pytest.raises(RunLocked, match=f"process {os.getpid()}"):
            asyncio.run(run_child.engine(store, ITEMS, FakeBackend("fake")).run())
        store.locks.unlock_run(owner)
    summary, _ = resume(store_path)
    assert summary.status == "finished"
    with RunStore(store_path) as store:
        assert results(store) == reference
