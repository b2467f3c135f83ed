"""A stop flag llama.cpp's abort callback reads without taking Python's interpreter lock.

llama.cpp calls its abort callback between the nodes of every compute graph (hundreds of
times per decode). A Python callback takes the interpreter lock each time, and while any
other Python thread is busy (the app's statistics, the UI) each call waits for it: measured
on a 600-token decode of the bundled model beside one busy Python thread, 10.6 s with a
Python callback against 4.6 s with none (`bench/abort_callback.py`). So where the platform
allows, the callback is a C function reading a byte: libc's ``strlen`` over a two-byte
buffer ``[flag, NUL]`` returns 0 while the flag is clear and 1 once it is set, and a C
``bool`` result is read from the low byte of the return register on x86-64 and AArch64, so
0 and 1 are false and true. Elsewhere it falls back to the Python callback.
"""

from __future__ import annotations

import ctypes
import platform
import sys
import threading
from functools import cache
from typing import Any

#: Where strlen's size_t result read as a C bool is exactly "the flag byte is set".
_ABIS_WITH_BOOL_IN_LOW_BYTE = {"x86_64", "amd64", "aarch64", "arm64"}


@cache
def _libc_strlen_address() -> int | None:
    if sys.platform == "win32" or platform.machine().lower() not in _ABIS_WITH_BOOL_IN_LOW_BYTE:
        return None
    try:
        return ctypes.cast(ctypes.CDLL(None).strlen, ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None


class AbortFlag:
    """Set from any thread to stop llama.cpp's evaluation in flight; read by its abort callback."""

    def __init__(self) -> None:
        self._event = threading.Event()
        # [flag, NUL]: the second byte stays 0, so strlen never reads past the buffer.
        self._byte = ctypes.create_string_buffer(2)

    def set(self) -> None:
        self._byte[0] = b"\x01"
        self._event.set()

    def clear(self) -> None:
        self._byte[0] = b"\x00"
        self._event.clear()

    def is_set(self) -> bool:
        return self._event.is_set()

    def install(self, llama_cpp: Any, ctx: Any) -> Any:
        """Register the callback on a llama.cpp context; returns the ctypes callback, which the
        caller must keep referenced for as long as the context lives (llama.cpp keeps only the C
        pointer, and a collected Python callback would crash the next decode)."""
        address = _libc_strlen_address()
        if address is not None:
            callback = llama_cpp.ggml_abort_callback(address)
            data = ctypes.cast(self._byte, ctypes.c_void_p)
        else:
            is_set = self._event.is_set
            callback = llama_cpp.ggml_abort_callback(lambda _data: is_set())
            data = None
        llama_cpp.llama_set_abort_callback(ctx, callback, data)
        return callback

    @property
    def reads_without_the_interpreter_lock(self) -> bool:
        return _libc_strlen_address() is not None
