"""Work threads give way to the UI thread: they run at a lower OS priority, the UI thread does not."""

from __future__ import annotations

import os
import sys
import threading

import pytest

from dialjudge.tui.controllers.background import BACKGROUND_NICENESS, in_background, lower_thread_priority

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="per-thread priorities are Linux's")


def _own_priority() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def _in_thread(work):  # type: ignore[no-untyped-def]
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(work()))
    thread.start()
    thread.join(timeout=10)
    assert not thread.is_alive()
    return result[0]


@linux_only
def test_a_work_thread_lowers_only_its_own_priority() -> None:
    before = _own_priority()
    seen = _in_thread(in_background(_own_priority))
    assert seen == max(before, BACKGROUND_NICENESS)
    assert _own_priority() == before  # the calling (UI) thread keeps its priority


@linux_only
def test_a_thread_already_lower_stays_lower() -> None:
    def lowest_then_background() -> int:
        assert lower_thread_priority(19)
        lower_thread_priority()
        return _own_priority()

    assert _in_thread(lowest_then_background) == 19


def test_work_returns_its_result_and_raises_its_error() -> None:
    assert _in_thread(in_background(lambda: 42)) == 42

    def fails() -> None:
        raise ValueError("boom")

    def caught() -> str:  # on a thread of its own: the test's thread keeps its priority
        with pytest.raises(ValueError, match="boom") as error:
            in_background(fails)()
        return str(error.value)

    assert _in_thread(caught) == "boom"


def test_background_work_pauses_the_collector_and_freezes_what_it_built() -> None:
    """A full collection in a work thread held the interpreter from the UI thread for 150-380 ms at
    100,000 items: while work runs there is none, and what the work leaves alive is frozen after."""
    import gc

    class Cyclic:
        def __init__(self) -> None:
            self.me = self

    def work() -> tuple[bool, list[Cyclic]]:
        return gc.isenabled(), [Cyclic() for _ in range(50)]

    gc.enable()
    frozen_before = gc.get_freeze_count()
    try:
        enabled_inside, built = _in_thread(in_background(work, settle=True))
        assert not enabled_inside
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen_before + len(built)
        frozen_before = gc.get_freeze_count()
        _in_thread(in_background(work))  # light work: nothing frozen
        assert gc.get_freeze_count() == frozen_before
    finally:
        gc.unfreeze()


async def test_the_app_collects_young_garbage_while_work_runs(tmp_path) -> None:
    """The UI thread's timer collects the young generations while a work thread pauses collection."""
    import gc

    from tui_helpers import make_services, wait_until

    from dialjudge.tui.app import make_app
    from dialjudge.tui.controllers.base import start_thread_work

    release = threading.Event()
    app = make_app(services=make_services(tmp_path))
    try:
        async with app.run_test() as pilot:
            await wait_until(pilot, lambda: not any(w.is_running for w in app.workers), "the app at rest")
            worker = start_thread_work(app, lambda: release.wait(10), group="test-hold", description="Holding")
            await wait_until(pilot, lambda: not gc.isenabled(), "the work pausing the collector")
            before = gc.get_stats()[1]["collections"]
            await wait_until(pilot, lambda: gc.get_stats()[1]["collections"] > before,
                             "a young collection on the UI thread")
            release.set()
            await worker.wait()
            assert gc.isenabled()
    finally:
        release.set()
        gc.unfreeze()


@linux_only
async def test_work_that_follows_another_process_keeps_the_ui_threads_priority(tmp_path, worker_failures) -> None:
    """The event loop's shared threads stay lowered once a thread worker lowered them; work that follows a
    process (a judge run) runs on a thread of its own at the UI thread's priority, with the worker's result
    or error."""
    from textual.worker import WorkerState, get_current_worker
    from tui_helpers import make_services, wait_until

    from dialjudge.tui.app import make_app
    from dialjudge.tui.controllers.base import start_following_work, start_thread_work

    app = make_app(services=make_services(tmp_path))
    async with app.run_test() as pilot:
        await wait_until(pilot, lambda: not any(w.is_running for w in app.workers), "the app at rest")
        ui_priority = _own_priority()
        lowered = start_thread_work(app, _own_priority, group="test-lowered", description="Lowered")
        await lowered.wait()
        assert lowered.result == max(ui_priority, BACKGROUND_NICENESS)
        following = start_following_work(app, lambda: (_own_priority(), get_current_worker().name),
                                         group="test-following", description="Following")
        await following.wait()
        assert following.result == (ui_priority, "test-following")  # and it knows its worker, as thread work does

        def fails() -> None:
            raise ValueError("the judge process said no")

        failing = start_following_work(app, fails, group="test-failing", description="Failing")
        await wait_until(pilot, lambda: failing.state is WorkerState.ERROR, "the failure reaching the worker")
        await wait_until(pilot, lambda: bool(worker_failures.seen), "the failure reaching the app's handler")
        assert [f.worker for f in worker_failures.expect("the judge process said no")] == ["test-failing"]


async def test_a_refresh_that_waited_keeps_the_priority_of_what_asked_for_it(tmp_path, monkeypatch) -> None:
    """Statistics asked for while others compute wait for them and start after; a streaming run's refresh then
    still follows the compute process at the UI's priority, unless a refresh that is not a run's also waits."""
    from tui_helpers import make_services, settle, wait_until

    from dialjudge.tui.app import make_app
    from dialjudge.tui.controllers import datasets as datasets_controller

    started: list[str] = []
    following, thread_work = datasets_controller.start_following_work, datasets_controller.start_thread_work
    monkeypatch.setattr(datasets_controller, "start_following_work",
                        lambda *args, **kwargs: started.append("following") or following(*args, **kwargs))
    monkeypatch.setattr(datasets_controller, "start_thread_work",
                        lambda *args, **kwargs: started.append("lowered") or thread_work(*args, **kwargs))
    app = make_app(services=make_services(tmp_path))
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: app.datasets.stats is not None, "the first statistics")
        cases = (((True,), "following"), ((True, True), "following"), ((False, True), "lowered"),
                 ((True, False), "lowered"), ((False,), "lowered"))
        for asked, expected in cases:
            await wait_until(pilot, lambda: app.datasets._stats_worker is None or app.datasets._stats_worker.is_finished,
                             "the statistics at rest")
            started.clear()
            app.datasets.refresh_stats()  # computing now: what is asked next waits for it
            for streaming in asked:
                app.datasets.refresh_stats(streaming=streaming)
            assert started == ["lowered"]
            await wait_until(pilot, lambda: len(started) == 2, "the refresh asked meanwhile")
            assert started[1] == expected, asked
