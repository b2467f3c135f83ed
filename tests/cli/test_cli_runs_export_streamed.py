"""`dialjudge runs export RUN --format csv|jsonl --output FILE` streams the judgments from the store into
the file: the same bytes as the same export printed (which goes through the generic writers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.core.judges.store.run_store import JudgmentWrite, RunStore
from dialjudge.core.judges.types import Judgment, ScoringMode


def stored_run() -> int:
    with RunStore() as store:
        run_id = store.runs.create_run({"what": "cli"}, "fp-cli")
        store.judgments.add_judgments(run_id, [JudgmentWrite(Judgment(
            item_id=f"i{k}", judge="j", mode=ScoringMode.GENERATE, prompt_hash="h",
            raw_output=["=cmd|' /C calc'!A0", "fine\r\nanswer", "ünï 🙂", "-3"][k % 4], score=None if k == 2 else 3.0,
            normalized=None if k == 2 else 0.5, error="unparsed" if k == 2 else None, sampling={"seed": k}))
            for k in range(8)])
    return run_id


@pytest.mark.parametrize("fmt", ["csv", "jsonl"])
def test_a_streamed_export_file_has_the_bytes_of_the_printed_export(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str) -> None:
    run_id = stored_run()
    code, printed, _ = run(capsys, "runs", "export", str(run_id), "--format", fmt)
    assert code == 0
    target = tmp_path / f"run.{fmt}"
    code, out, err = run(capsys, "runs", "export", str(run_id), "--format", fmt, "--output", str(target))
    assert code == 0 and out == "" and f"wrote 8 judgments to {target}" in err
    assert target.read_bytes() == printed.encode("utf-8")
    if fmt == "csv":
        assert "'=cmd|" in printed


def test_a_run_without_judgments_is_an_error_not_an_empty_file(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    with RunStore() as store:
        empty = store.runs.create_run({"what": "cli"}, "fp-empty")
    target = tmp_path / "empty.csv"
    code, _, err = run(capsys, "runs", "export", str(empty), "--format", "csv", "--output", str(target))
    assert code != 0 and "has no judgments" in err and not target.exists()
    code, _, err = run(capsys, "runs", "export", "99", "--format", "jsonl", "--output", str(target))
    assert code != 0 and "no run with id 99" in err
