"""Fixtures for the judge backends: the bundled GGUF, a loaded model, a local llama.cpp server."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from dialjudge.core.errors import BackendError

SERVER_START_DEADLINE_S = 180.0


@pytest.fixture(scope="session")
def bundled_model() -> Path:
    from dialjudge.core.judges.backends.llama import bundled_model_path

    try:
        return bundled_model_path()
    except BackendError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def llama_backend(bundled_model: Path) -> Iterator[object]:
    """One loaded bundled model for the whole session (loading is the slow part).

    One thread: the test machine's cores are shared, and llama.cpp's threads
    spin-wait on each other, which is far slower than one thread when a core is busy.
    """
    from dialjudge.core.judges.backends.llama import LlamaBackend

    backend = LlamaBackend(bundled_model, name="smollm2", n_ctx=1024, n_threads=1)
    asyncio.run(backend.open())
    yield backend
    asyncio.run(backend.close())


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def llama_server(bundled_model: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on the bundled model; yields its base URL (…/v1)."""
    from dialjudge.core.judges.backends.llama import cpu_has_amx

    port = _free_port()
    log_path = tmp_path_factory.mktemp("llama-server") / "server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(bundled_model),
               "--model_alias", "smollm2", "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "1024",
               "--n_threads", "1"]
    if cpu_has_amx():
        # See llama.py, _without_extra_buffers: AMX kernels crash on multi-token batches on
        # machines that advertise AMX without supporting it; one-token batches avoid them.
        command += ["--n_ubatch", "1"]
    base_url = f"http://127.0.0.1:{port}/v1"
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_until_serving(process, base_url, log_path)
            yield base_url
        finally:
            process.terminate()
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def _wait_until_serving(process: subprocess.Popen[bytes], base_url: str, log_path: Path) -> None:
    deadline = time.monotonic() + SERVER_START_DEADLINE_S
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{base_url}/models", timeout=2.0).status_code == 200:
                return
        except httpx.TransportError:
            pass
        try:
            process.wait(timeout=0.25)  # doubles as the pause between polls
        except subprocess.TimeoutExpired:
            continue
        tail = log_path.read_text(errors="replace")[-2000:]
        pytest.fail(f"llama.cpp server exited with code {process.returncode} before serving:\n{tail}")
    pytest.fail(f"llama.cpp server did not answer {base_url}/models within {SERVER_START_DEADLINE_S:g} s")


@pytest.fixture
def fault_server() -> Iterator[object]:
    """Starts fake OpenAI-compatible servers (tests/fault_server.py) on 127.0.0.1; all stop after the test."""
    from fault_server import FaultPlan, FaultServer

    servers: list[FaultServer] = []

    def start(plan: FaultPlan | None = None) -> FaultServer:
        server = FaultServer(plan).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()
