"""`judge --batch-out`, `runs answers`, `runs list` and `runs retry --batch-out` on the command line, with
the answers made by replaying the batch file through the fake OpenAI-compatible server."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import run

from batch_replay import replay
from fault_server import FaultServer

JUDGE = ("judge", "--judge", "api", "--template", "likert-1to5", "--aspect", "overall", "--no-metrics",
         "--mode", "generate", "--bootstrap", "20", "--limit", "5")


def write_config(base_url: str) -> None:
    config = Path(os.environ["DIALJUDGE_CONFIG"])
    config.write_text(config.read_text(encoding="utf-8") + "\n[judges.api]\nbackend = \"openai\"\nmodel = \"m\"\n"
                      f"base_url = \"{base_url}\"\nmax_retries = 0\n", encoding="utf-8")


def test_a_batch_run_round_trip_on_the_command_line(capsys: pytest.CaptureFixture[str], isolated_user_dirs: Path,
                                                   tmp_path: Path) -> None:
    with FaultServer() as server:
        write_config(server.base_url)
        requests = tmp_path / "requests.jsonl"
        code, out, _ = run(capsys, *JUDGE, "--batch-out", str(requests))
        assert code == 0 and "run 1: wrote 5 of 5 requests" in " ".join(out.split())
        code, out, _ = run(capsys, "runs", "list")
        assert "awaiting 5 of 5 answers" in out
        # A live judge of the same settings says so, and continues it only when asked.
        code, _, err = run(capsys, *JUDGE)
        assert code == 2 and server.stats.requests == 0
        err = " ".join(err.split())
        assert "run 1 has these settings and was written to a batch file (awaiting 5 of 5 answers)" in err
        assert "--continue-live" in err

        replay(requests, server.base_url, tmp_path / "answers.jsonl")
        lines = (tmp_path / "answers.jsonl").read_text(encoding="utf-8").splitlines()
        (tmp_path / "part1.jsonl").write_text("\n".join(lines[:3]) + "\n", encoding="utf-8")
        (tmp_path / "part2.jsonl").write_text("\n".join(lines[3:]) + "\n", encoding="utf-8")
        code, out, err = run(capsys, "runs", "answers", "1", str(tmp_path / "part2.jsonl"))
        assert code == 0 and "run 1: 2 answers scored now; awaiting 3 of 5 answers" in " ".join(out.split())
        code, out, err = run(capsys, "runs", "answers", "1", str(tmp_path / "part1.jsonl"),
                             str(tmp_path / "part2.jsonl"))
        flat = " ".join(out.split())
        assert "run 1: 3 answers scored now; finished: every judgment has an answer" in flat
        assert code == 1 and "2 already answered" in " ".join(err.split())  # part 2 again: named, harmless
        code, out, _ = run(capsys, "runs", "list")
        assert "finished" in out and "5/5" in out
        code, out, _ = run(capsys, "runs", "show", "1")
        flat = " ".join(out.split())
        assert f"{requests} (5 requests, sha256" in flat
        assert "part2.jsonl (2 lines" in flat and "provider OpenAI Batch API, models m (2)" in flat
        code, out, _ = run(capsys, "runs", "retry", "1", "--batch-out", str(tmp_path / "retry.jsonl"))
        assert code == 0 and "wrote 0 of 5 requests" in " ".join(out.split())
        assert server.stats.requests == 5  # the replay's: dialjudge itself sent none


def test_continue_live_judges_a_batch_runs_unanswered_judgments(capsys: pytest.CaptureFixture[str],
                                                                 isolated_user_dirs: Path, tmp_path: Path) -> None:
    with FaultServer() as server:
        write_config(server.base_url)
        requests = tmp_path / "requests.jsonl"
        assert run(capsys, *JUDGE, "--batch-out", str(requests))[0] == 0
        replay(requests, server.base_url, tmp_path / "answers.jsonl")
        first_two = tmp_path / "answers.jsonl"
        first_two.write_text("\n".join(first_two.read_text(encoding="utf-8").splitlines()[:2]) + "\n",
                             encoding="utf-8")
        assert run(capsys, "runs", "answers", "1", str(first_two))[0] == 0
        asked = server.stats.requests
        code, out, err = run(capsys, *JUDGE, "--continue-live")
        assert code == 0
        assert server.stats.requests - asked == 3  # only the three judgments without an answer
        code, out, _ = run(capsys, "runs", "list")
        assert "finished" in out and "5/5" in out and "awaiting" not in out
