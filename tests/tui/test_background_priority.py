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
