"""The CLI when API judges misbehave, and where secrets and sockets may go.

Against the fake OpenAI-compatible server of tests/fault_server.py
(127.0.0.1 only): a rejected key or a dead server ends `judge` early with a
failure summary and a non-zero exit; `runs export` writes every format of
`judge --format`; a key quoted back by the server reaches no file, export or
output (crash output included); a local evaluation opens no socket at all.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run

from dialjudge.core.report import FORMATS
from fault_server import FaultPlan, FaultServer, closed_port_url

KEY = "sk-cli-suite-5f3a9c-TOPSECRET-77"
KEY_PARTS = (KEY, KEY[-14:], KEY[:14])
# generate mode: a probability mode would refuse a broken server at its capability check, before any run.
JUDGE = ("judge", "--judge", "api", "--template", "likert-1to5", "--aspect", "overall", "--no-metrics",
         "--mode", "generate", "--bootstrap", "20")


def write_config(isolated_user_dirs: Path, base_url: str, **judge: Any) -> None:
    options = {"backend": "openai", "model": "m", "base_url": base_url, "api_key_env": "DIALJUDGE_CLI_KEY",
               "concurrency": 4, "max_retries": 4, **judge}
    lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in options.items())
    config = Path(os.environ["DIALJUDGE_CONFIG"])
    base = _BASE_CONFIG.setdefault(config, config.read_text(encoding="utf-8"))
    config.write_text(base + f'\n[judges.api]\n{lines}\n[judges.fa]\nbackend = "fake"\nmodel = "fake-a"\n',
                      encoding="utf-8")


_BASE_CONFIG: dict[Path, str] = {}


@pytest.fixture(autouse=True)
def api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIALJUDGE_CLI_KEY", KEY)


@pytest.fixture
def server() -> Any:
    with FaultServer(FaultPlan({"429-retry-after": 0.4}, seed=1, echo_key=True)) as s:
        yield s



def test_a_rejected_key_stops_the_run_with_a_summary_and_a_non_zero_exit(
        capsys: pytest.CaptureFixture[str], isolated_user_dirs: Path) -> None:
    with FaultServer(FaultPlan(always_status=401, echo_key=True)) as s:
        write_config(isolated_user_dirs, s.base_url)
        code, out, err = run(capsys, *JUDGE, "--limit", "30")
        assert s.stats.requests == 1  # never retried, nor tried item by item
    assert code == 1
    flat = " ".join(err.split())
    assert "judge 'api' paused: the server rejected the key" in flat
    assert f"{s.base_url}/chat/completions answered HTTP 401 (unauthorized); check the key in $DIALJUDGE_CLI_KEY" in flat
    assert "Failures of run 1" in flat and "run 1 failed; run the same command again to resume it" in flat
    assert "judging" in flat and "1/30" in flat  # the bar's count is the store's
    assert not any(part in out + err for part in KEY_PARTS)


def test_a_dead_server_stops_after_its_first_requests(capsys: pytest.CaptureFixture[str],
                                                      isolated_user_dirs: Path) -> None:
    url = closed_port_url()
    write_config(isolated_user_dirs, url, max_retries=0)
    code, _, err = run(capsys, *JUDGE, "--limit", "60")
    assert code == 1
    flat = " ".join(err.split())
    assert "judge 'api' paused: its first 3 requests all failed (judge 'api': cannot connect to " + url in flat
    assert "3/60" in flat
    # The failure summary: each reason once with its count.
    assert "reason" in flat and "count" in flat and "3 │" in err


def test_runs_export_writes_every_format_of_judge_format(capsys: pytest.CaptureFixture[str],
                                                          isolated_user_dirs: Path, server: FaultServer,
                                                          tmp_path: Path) -> None:
    write_config(isolated_user_dirs, server.base_url)
    code, _, err = run(capsys, *JUDGE, "--limit", "6")
    assert code == 0, err
    outputs = {}
    for fmt in [f for f in FORMATS if f != "table"] + ["jsonl"]:
        code, out, err = run(capsys, "runs", "export", "1", "--format", fmt)
        assert code == 0, err
        outputs[fmt] = out
    assert len(list(csv.DictReader(io.StringIO(outputs["csv"])))) == 6
    assert len(outputs["jsonl"].splitlines()) == 6
    document = json.loads(outputs["json"])
    assert document["meta"]["run"] == 1 and document["meta"]["status"] == "finished"
    assert len(document["results"]) == 6
    md_rows = [line for line in outputs["markdown"].splitlines() if line.startswith("| ")]
    assert md_rows[0] == "| item\\_id | judge | repeat | score | normalized | valid\\_mass | error |" and len(md_rows) == 7
    assert outputs["latex"].count(r"\\") == 7 and r"\begin{tabular}{lllllll}" in outputs["latex"]
    assert "item\\_id" in outputs["latex"]


def test_the_key_reaches_no_file_export_or_output(capsys: pytest.CaptureFixture[str],
                                                  isolated_user_dirs: Path, server: FaultServer,
                                                  tmp_path: Path) -> None:
    """The server quotes the Authorization header in every error; nothing may carry it on."""
    write_config(isolated_user_dirs, server.base_url)
    seen: list[str] = []
    code, out, err = run(capsys, *JUDGE, "--limit", "10")
    assert code == 0
    seen += [out, err]
    assert f"Bearer {KEY}" in server.stats.authorization  # the key was really sent...
    assert server.stats.faults["429-retry-after"] > 0, server.stats  # ...and quoted back
    with FaultServer(FaultPlan(always_status=403, echo_key=True)) as refusing:
        write_config(isolated_user_dirs, refusing.base_url)
        seen += list(run(capsys, *JUDGE, "--limit", "10", "--fresh")[1:])
    with FaultServer(FaultPlan(always_status=500, echo_key=True)) as failing:  # its reasons are stored
        write_config(isolated_user_dirs, failing.base_url, max_retries=0)
        seen += list(run(capsys, *JUDGE, "--limit", "10", "--fresh")[1:])
    write_config(isolated_user_dirs, server.base_url)
    for fmt in [f for f in FORMATS if f != "table"]:
        target = tmp_path / f"report.{fmt}"
        seen += list(run(capsys, *JUDGE, "--limit", "10", "--format", fmt, "--output", str(target))[1:])
        seen.append(target.read_text(encoding="utf-8"))
    for run_id in ("1", "2", "3"):
        for fmt in ("csv", "jsonl", "json", "markdown", "latex"):
            seen.append(run(capsys, "runs", "export", run_id, "--format", fmt)[1])
        seen.append(run(capsys, "runs", "show", run_id)[1])
    seen.append(run(capsys, "runs", "list")[1])
    seen += crash_output(isolated_user_dirs)
    data_dir = Path(os.environ["DIALJUDGE_DATA_DIR"])
    files = [p for p in data_dir.rglob("*") if p.is_file()]
    assert any(p.name == "runs.sqlite3" for p in files)
    for part in KEY_PARTS:
        assert not any(part in text for text in seen), part
        for path in files:
            assert part.encode() not in path.read_bytes(), (part, path)


def crash_output(isolated_user_dirs: Path) -> list[str]:
    """A `judge` process stopped by SIGTERM mid-run against a slow server: what it printed."""
    with FaultServer(FaultPlan({"slow": 1.0}, slow_s=0.3, echo_key=True)) as slow:
        write_config(isolated_user_dirs, slow.base_url, concurrency=1)
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        child = subprocess.Popen([sys.executable, "-m", "dialjudge.cli.main", *JUDGE, "--limit", "40", "--fresh"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        deadline = time.monotonic() + 60
        while slow.stats.requests < 2 and time.monotonic() < deadline:
            try:
                child.wait(timeout=0.05)
                break
            except subprocess.TimeoutExpired:
                pass
        child.send_signal(signal.SIGTERM)
        out, err = child.communicate(timeout=60)
    assert child.returncode == 130 and "interrupted" in err, err
    return [out, err]


def test_a_local_evaluation_opens_no_socket(capsys: pytest.CaptureFixture[str], isolated_user_dirs: Path,
                                            monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No API judge configured: load, metrics, a judged run (fake judge) and exports, with sockets blocked."""
    write_config(isolated_user_dirs, "http://127.0.0.1:9/v1")  # configured, never chosen
    attempts: list[str] = []

    def refuse(name: str) -> Any:
        def blocked(*args: Any, **kwargs: Any) -> Any:
            attempts.append(f"{name}{args[1:] if name.startswith('socket.') else args}")
            raise OSError(f"test: network use is blocked ({name})")
        return blocked

    monkeypatch.setattr(socket.socket, "connect", refuse("socket.connect"))
    monkeypatch.setattr(socket.socket, "connect_ex", refuse("socket.connect_ex"))
    monkeypatch.setattr(socket, "create_connection", refuse("create_connection"))
    monkeypatch.setattr(socket, "getaddrinfo", refuse("getaddrinfo"))
    steps = [
        ("datasets", "list"),
        ("datasets", "show", "sample"),
        ("metrics", "--dataset", "sample", "--bootstrap", "20"),
        ("judge", "--judge", "fa", "--aspect", "coherence", "--limit", "8", "--bootstrap", "20"),
        ("runs", "export", "1", "--format", "json"),
        ("runs", "export", "1", "--format", "latex", "--output", str(tmp_path / "run.tex")),
    ]
    for argv in steps:
        code, _, err = run(capsys, *argv)
        assert code == 0, (argv, err)
    assert attempts == []
    assert textwrap.dedent((tmp_path / "run.tex").read_text(encoding="utf-8")).startswith(r"\begin{table}")
