"""The stop flag llama.cpp's abort callback reads: called as C calls it, it answers the flag."""

from __future__ import annotations

import ctypes
import platform
import sys
import threading
from types import SimpleNamespace
from typing import Any

import pytest

from dialjudge.core.judges.backends.abort_flag import AbortFlag

#: ggml_abort_callback's C type: bool (*)(void * data).
ABORT_CALLBACK = ctypes.CFUNCTYPE(ctypes.c_bool, ctypes.c_void_p)


def installed(flag: AbortFlag) -> tuple[Any, Any]:
    """What install() registers, captured by a stand-in for llama_cpp's two names."""
    registered: dict[str, Any] = {}
    fake_llama_cpp = SimpleNamespace(
        ggml_abort_callback=ABORT_CALLBACK,
        llama_set_abort_callback=lambda ctx, callback, data: registered.update(callback=callback, data=data),
    )
    kept = flag.install(fake_llama_cpp, ctx=None)
    assert kept is registered["callback"]
    return registered["callback"], registered["data"]


def test_the_callback_answers_the_flag_through_c() -> None:
    flag = AbortFlag()
    callback, data = installed(flag)
    assert callback(data) is False
    flag.set()
    assert flag.is_set() and callback(data) is True
    flag.clear()
    assert not flag.is_set() and callback(data) is False


def test_on_linux_the_callback_is_a_c_function_reading_the_flags_buffer() -> None:
    if sys.platform != "linux" or platform.machine() not in ("x86_64", "aarch64"):
        pytest.skip("the GIL-free callback is checked on Linux x86-64 and AArch64, where CI runs")
    flag = AbortFlag()
    assert flag.reads_without_the_interpreter_lock
    callback, data = installed(flag)
    # libc's strlen at its own address, no Python thunk: the data pointer is the flag's two-byte buffer.
    assert ctypes.cast(callback, ctypes.c_void_p).value == ctypes.cast(ctypes.CDLL(None).strlen, ctypes.c_void_p).value
    assert data is not None


def test_a_flag_set_from_another_thread_is_seen() -> None:
    flag = AbortFlag()
    callback, data = installed(flag)
    setter = threading.Thread(target=flag.set)
    setter.start()
    setter.join(timeout=5)
    assert callback(data) is True
