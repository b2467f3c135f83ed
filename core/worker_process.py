"""A child process for work that must not take its parent down with it: a fresh interpreter, tied to its
parent's life, its output in a log file.

The app runs a judge in such a child (``core.api.run_worker``): native code that crashes (llama.cpp) or a
process the kernel kills for memory ends the child, never the app. A fresh interpreter (what
multiprocessing's ``spawn`` starts), never ``fork``: the app's process has threads (Textual's, SQLite's, a
model's) whose locks a forked child would inherit held. It is started with :mod:`subprocess` rather
than multiprocessing's spawn context: that one starts a resource tracker that hands it ``sys.stderr``'s
file descriptor, which under the app is Textual's print capture (-1: the start fails), and it would import
the app's ``__main__`` again in the child. Parent and child talk over one socket pair wrapped as a
multiprocessing :class:`Connection` (pickled messages); the child first receives the parent's
``sys.path`` and what to run.

The child dies with its parent, also when the parent is killed outright: on Linux the kernel sends it
SIGTERM when the parent ends (``prctl(PR_SET_PDEATHSIG)``; the kernel ties that to the *thread* that
started the child, so start it from a thread that outlives it), and everywhere a thread of the child
watches its end of the pipe and sends the child SIGTERM when the parent's end closes. A child that
does not end within :data:`GRACE_S` of that SIGTERM ends itself. Its stdout and stderr (a Python
traceback, a segfault's stack from :mod:`faulthandler`, llama.cpp's own messages) go to a log file
instead of the parent's terminal, which the app draws on.
"""

from __future__ import annotations

import contextlib
import ctypes
import faulthandler
import os
import signal
import socket
import subprocess
import sys
import threading
import weakref
from collections.abc import Callable
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Generic, TypeVar

#: Seconds a child may take to end after SIGTERM (cancel what is in flight, store what it has) before
#: it ends itself.
GRACE_S = 10.0

_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
#: The child's priority below its parent's: on shared cores the app's UI thread gets a core before the
#: judge does (the app's threads ran at nice 10 for the same reason when the judge was one of them).
NICENESS = 10


class ChildProcess:
    """A started child: its pid, the parent's end of the pipe to it, its log file."""

    def __init__(self, process: subprocess.Popen[bytes], connection: Connection, log_path: Path) -> None:
        self._process = process
        self.connection = connection
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self._process.pid

    @property
    def exitcode(self) -> int | None:
        """None while it runs; its exit status, or minus the signal that ended it."""
        return self._process.poll()

    def signal(self, signum: int) -> None:
        """Send ``signum`` to the child (nothing when it has already ended and been collected)."""
        if self._process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self._process.send_signal(signum)

    def reap(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for the child to end (killing it then), collect it; its exit code."""
        try:
            exitcode = self._process.wait(timeout_s)
        except subprocess.TimeoutExpired:
            self._process.kill()
            exitcode = self._process.wait()
        self.connection.close()
        return exitcode


def exit_text(exitcode: int) -> str:
    """How a child ended, as a sentence's end: "signal 9 (SIGKILL)", "exit status 1"."""
    if exitcode < 0:
        try:
            name = signal.Signals(-exitcode).name
        except ValueError:
            return f"signal {-exitcode}"
        return f"signal {-exitcode} ({name})"
    return f"exit status {exitcode}"


#: The folder that holds the dialjudge package this module was imported from (src/, or site-packages).
_PACKAGE_ROOT = Path(__file__).parents[2]
_BOOTSTRAP = "from dialjudge.core.worker_process import child_main; child_main()"


def start_child(target: Callable[..., None], args: tuple[Any, ...], *, log_path: Path, name: str,
                watch_pipe: bool = True) -> ChildProcess:
    """Start ``target(connection, *args)`` in a fresh interpreter; ``target`` and ``args`` must pickle
    (a module-level function and plain data). The child's output is appended to ``log_path``.

    ``watch_pipe``: a thread of the child ends it when the parent's end of the pipe closes (and discards
    whatever the parent sends). False: ``target`` reads the pipe itself, and calls :func:`end_soon`
    when it finds it closed."""
    log_path.parent.mkdir(parents=True, exist_ok=True)
    parent_socket, child_socket = socket.socketpair()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (str(_PACKAGE_ROOT),
                                                                      os.environ.get("PYTHONPATH"))))}
    try:
        with open(log_path, "ab") as log:
            log.write(f"--- {name}, started by process {os.getpid()}\n".encode())
            log.flush()
            process = subprocess.Popen(
                [sys.executable, "-c", _BOOTSTRAP, str(child_socket.fileno()), str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=log, stderr=log, pass_fds=(child_socket.fileno(),), env=env)
    finally:
        child_socket.close()  # the child holds the only other end: its death closes the pipe for the parent
    connection = Connection(parent_socket.detach())
    connection.send(list(sys.path))  # first, so that what follows unpickles with the parent's modules
    connection.send((target, args, watch_pipe))
    return ChildProcess(process, connection, log_path)


def child_main() -> None:
    """The child's start (``_BOOTSTRAP``): tie itself to the parent, then run what the parent sent."""
    connection = Connection(int(sys.argv[1]))
    parent_pid = int(sys.argv[2])
    faulthandler.enable(file=sys.stderr)  # a segfault's Python stack in the log
    _die_with_parent(parent_pid)
    with contextlib.suppress(OSError, AttributeError):  # a priority is a wish, not a requirement
        os.nice(NICENESS)
    sys.path[:] = connection.recv()  # the modules the parent imports (its tests' folders, say)
    target, args, watch_pipe = connection.recv()
    if watch_pipe:
        threading.Thread(target=_watch_parent, args=(connection,), name="watch-parent", daemon=True).start()
    target(connection, *args)


def _die_with_parent(parent_pid: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent_pid:  # the parent ended before the kernel was told
        end_soon()


def _watch_parent(connection: Connection) -> None:
    """Wait until the parent's end of the pipe closes (the parent ended, however), then end."""
    try:
        while True:
            connection.recv()  # the parent sends nothing today; anything it sends is ignored
    except (EOFError, OSError):
        end_soon()


def end_soon() -> None:
    """SIGTERM to this process (the work's own handler cancels it), and an end within GRACE_S regardless."""
    timer = threading.Timer(GRACE_S, os._exit, (128 + signal.SIGTERM,))
    timer.daemon = True
    timer.start()
    os.kill(os.getpid(), signal.SIGTERM)


__all__ = ["GRACE_S", "ChildProcess", "end_soon", "exit_text", "start_child"]


Owner = TypeVar("Owner")
Worker = TypeVar("Worker")


class WorkersByOwner(Generic[Owner, Worker]):
    """One worker per owner (a session), made when first asked for and forgotten with its owner: the judge
    process's and the compute process's registries are both one of these."""

    def __init__(self, make: Callable[[Owner], Worker]) -> None:
        self._make = make
        self._workers: weakref.WeakKeyDictionary[Any, Worker] = weakref.WeakKeyDictionary()
        self._lock = threading.Lock()

    def of(self, owner: Owner) -> Worker:
        with self._lock:
            worker = self._workers.get(owner)
            if worker is None:
                worker = self._workers[owner] = self._make(owner)
            return worker

    def get(self, owner: Owner) -> Worker | None:
        """The owner's worker, if one was made (never makes one)."""
        with self._lock:
            return self._workers.get(owner)

    def pop(self, owner: Owner) -> Worker | None:
        """The owner's worker, taken out of the registry (None: it has none)."""
        with self._lock:
            return self._workers.pop(owner, None)

