"""The app's tuning search runs in the session's judge process: its events reach the Tune screen, Esc cancels
it there (the process stays for the next job), and killing the process leaves the app up, saying so, with the
search's runs interrupted and reused by a rerun."""

from __future__ import annotations

import dataclasses
import os
import signal
from pathlib import Path

from test_tune_screen import open_tune, write_space
from tui_helpers import FAKE_JUDGE, SIZE, settle, toast_texts, wait_until

from dialjudge.core.api import Session, list_runs, open_search
from dialjudge.core.api.run_worker import judge_worker
from dialjudge.core.api.types import RunStatus
from dialjudge.core.config import Config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.store.run_store import process_is_alive
from dialjudge.core.tuning.space import parse_space
from dialjudge.tui.app import make_app

#: The fake judge, one request at a time, each taking a twentieth of a second: a search to stop midway.
SLOW_FAKE = dataclasses.replace(FAKE_JUDGE, concurrency=1, extra={"delay_s": 0.05})


def slow_services(services_factory):
    return services_factory().with_config(Config(judges={"fake": SLOW_FAKE}))


def stored(app) -> int:
    """Judgments in the store, over every run the search made."""
    return sum(record.judgments for record in list_runs(app.services.session))


async def start_search(pilot, tmp_path: Path, judged: int) -> int:
    """Open the Tune screen, start the search, and wait until its process stored ``judged`` judgments."""
    app = pilot.app
    await open_tune(pilot, write_space(tmp_path))
    await pilot.press("r")
    await wait_until(pilot, lambda: app.tune.process_id is not None and stored(app) >= judged,
                     f"the judge process stored {judged} of the search's judgments")
    pid = app.tune.process_id
    assert pid is not None and pid != os.getpid() and pid == judge_worker(app.services.session).pid
    return pid


async def test_the_search_runs_in_the_judge_process_and_esc_cancels_it_there(tmp_path, services_factory):
    services = slow_services(services_factory)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        pid = await start_search(pilot, tmp_path, judged=3)
        assert app.tune.running and app.tune.state.spent > 0  # its progress crossed from the process
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.tune.running, "the search stops")
        await settle(pilot)
        assert app.tune.state.report is None and "Cancelled" in app.tune.state.status
        records = list_runs(services.session)
        assert RunStatus.CANCELLED in {r.status for r in records}
        assert all(r.status in (RunStatus.CANCELLED, RunStatus.FINISHED) and r.failures == 0 for r in records)
        # The process was told to stop this job, not to end: it waits for the next one.
        assert process_is_alive(pid) and judge_worker(services.session).pid == pid


async def test_a_killed_judge_process_leaves_the_app_up_and_a_rerun_reuses_what_it_stored(tmp_path,
                                                                                         services_factory):
    services = slow_services(services_factory)
    # What the whole search asks the judge, from nothing (the same search in this process, its own store).
    fresh = await open_search(Session(Config(judges={"fake": FAKE_JUDGE}), store_path=tmp_path / "fresh.sqlite3"),
                              parse_space(write_space(tmp_path).read_text(encoding="utf-8")),
                              open_dataset("sample", Config())).run()
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        pid = await start_search(pilot, tmp_path, judged=3)
        os.kill(pid, signal.SIGKILL)
        await wait_until(pilot, lambda: not app.tune.running, "the app saw the process end")
        await pilot.pause()
        status = app.tune.state.status
        assert "the judge process ended with signal 9 (SIGKILL) during the tuning search" in status
        assert any("signal 9" in text for text in toast_texts(app))
        assert app.is_running and app.tune.process_id is None
        records = list_runs(services.session)
        assert not any(r.status is RunStatus.RUNNING for r in records)
        assert RunStatus.INTERRUPTED in {r.status for r in records} and all(r.failures == 0 for r in records)
        kept = stored(app)
        assert kept >= 3

        await pilot.press("r")  # the search again: a new judge process, resuming the interrupted run
        await wait_until(pilot, lambda: app.tune.state.report is not None, "the rerun reports")
        await settle(pilot)
        report = app.tune.state.report
        assert report is not None and report.winner == fresh.winner
        # Every judgment stored before the kill was reused: the judge was asked only for the rest.
        assert report.model_calls == fresh.model_calls - kept
        assert {r.status for r in list_runs(services.session)} == {RunStatus.FINISHED}
