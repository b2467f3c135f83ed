"""The app's judge runs in a worker process: killing that process leaves the app up, saying what happened,
with the run interrupted and resumable; quitting the app cancels the run and ends the process."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading

from tui_helpers import FAKE_JUDGE, SIZE, WAIT_LIMIT_S, settle, toast_texts, wait_until

from dialjudge.core.api import list_runs
from dialjudge.core.api.types import RunStatus
from dialjudge.core.config import Config
from dialjudge.core.judges.store.run_store import process_is_alive
from dialjudge.core.planning import plan_run
from dialjudge.tui.app import make_app

#: The fake judge, one request at a time, each taking a twentieth of a second: a run to kill midway.
SLOW_FAKE = dataclasses.replace(FAKE_JUDGE, concurrency=1, extra={"delay_s": 0.05})


def slow_services(services_factory):
    return services_factory().with_config(Config(judges={"fake": SLOW_FAKE}))


def stored(app) -> int:
    """Judgments in the store (the engine's progress counts them before they are committed)."""
    return sum(record.judgments for record in list_runs(app.services.session))


async def start_run(pilot, judged: int) -> int:
    app = pilot.app
    await settle(pilot)
    dataset = app.workspace.dataset
    config = plan_run(dataset, app.services.config, template="adv-0to1", judges=["fake"],
                      aspect="coherence").config
    app.runs.start(config)
    await wait_until(pilot, lambda: app.runs.process_id is not None and stored(app) >= judged,
                     f"the worker stored {judged} judgments")
    pid = app.runs.process_id
    assert pid is not None and pid != os.getpid()
    return pid


async def test_a_killed_judge_process_leaves_the_app_up_and_the_run_interrupted(services_factory):
    services = slow_services(services_factory)
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        pid = await start_run(pilot, judged=5)
        os.kill(pid, signal.SIGKILL)
        await wait_until(pilot, lambda: app.runs.state is not None and app.runs.state.summary is not None,
                         "the app saw the process end")
        state = app.runs.state
        assert state is not None and state.status is RunStatus.INTERRUPTED
        assert state.error is not None and "the judge process ended with signal 9 (SIGKILL) after" in state.error
        await pilot.pause()
        assert any("signal 9" in text for text in toast_texts(app))
        assert app.is_running and app.runs.process_id is None
        (record,) = list_runs(services.session)
        assert record.status is RunStatus.INTERRUPTED and record.failures == 0
        assert 5 <= record.judgments < record.total
        assert state.done == record.judgments  # every stored judgment reached the workspace

        app.runs.resume_stored(record)
        await wait_until(pilot, lambda: app.runs.state is not None and app.runs.state.status is RunStatus.FINISHED,
                         "the resumed run finished")
        (record,) = list_runs(services.session)
        assert record.status is RunStatus.FINISHED and record.judgments == record.total and record.failures == 0
        assert app.runs.state.done == record.total


async def test_quitting_cancels_the_worker_run_and_ends_its_process(services_factory):
    services = slow_services(services_factory)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        pid = await start_run(pilot, judged=3)
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: not app.is_running, "the app has exited")
    # The run's thread collects the process once it has closed its judge (the app need not wait for that).
    ended = threading.Event()
    for _ in range(int(WAIT_LIMIT_S / 0.05)):
        if not process_is_alive(pid):
            ended.set()
            break
        ended.wait(0.05)
    assert ended.is_set(), "the judge process outlived the app"
    (record,) = list_runs(services.session)
    assert record.status is RunStatus.CANCELLED and record.failures == 0 and 3 <= record.judgments < record.total
