"""The command line's run progress: the waits a run goes through (a judge loading, its first answer) and an
ETA that moves between judgments."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest
from cli_helpers import run
from rich.console import Console

from dialjudge.cli.progress import ProgressDisplay
from dialjudge.core.judges.run.events import JudgmentScored, RunPhase, RunStarted
from dialjudge.core.judges.types import Judgment, ScoringMode


@pytest.fixture(autouse=True)
def slow_loading_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "dialjudge.toml"
    config.write_text('[judges.loader]\nbackend = "fake"\nmodel = "fake-a"\noptions = { load_delay_s = 0.05 }\n',
                      encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))


def test_off_a_terminal_each_wait_is_a_line_with_the_time_it_took(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "judge", "--judge", "loader", "--mode", "generate", "--aspect", "coherence",
                       "--limit", "6", "--bootstrap", "50", "--no-metrics")
    assert code == 0, err
    lines = err.splitlines()
    waits = [line for line in lines if re.fullmatch(r"(preparing|loading|waiting).*: \d+:\d\d", line)]
    assert [re.sub(r": \d+:\d\d$", "", line) for line in waits] == [
        "preparing 6 prompts", "loading judge loader", "waiting for the first answer of judge loader"]
    # The waits come before the bar's last state.
    assert lines.index(waits[-1]) < next(i for i, line in enumerate(lines) if "6/6 judged" in line)


class ManualClock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def judgment(item_id: str) -> Judgment:
    return Judgment(item_id=item_id, judge="loader", mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="4",
                    score=4.0, normalized=0.75)


def test_in_a_terminal_the_status_line_moves_between_events() -> None:
    clock, out = ManualClock(), io.StringIO()
    console = Console(file=out, force_terminal=True, width=160, color_system=None)
    display = ProgressDisplay(console, "judging", clock=clock)
    def shown() -> str:
        return display.progress.status().plain

    display.on_event(RunPhase("loading judge smollm2", judge="smollm2"))
    assert shown() == "Run starting · loading judge smollm2… 0:00"
    clock.now += 17  # no event: the line is made afresh at each redraw of the bar
    assert shown() == "Run starting · loading judge smollm2… 0:17"
    display.on_event(RunStarted(run_id=3, total=4))
    clock.now += 3
    display.on_event(JudgmentScored(judgment("a"), 1, 4))
    assert shown() == "Run 3 running · 1/4 judged · 0 failed · ETA 0:09"
    clock.now += 2
    assert shown() == "Run 3 running · 1/4 judged · 0 failed · ETA 0:07"
    clock.now += 4  # slower than the first: 2 left at (3 + 6) / 2 s each
    assert shown() == "Run 3 running · 1/4 judged · 0 failed · ETA 0:09"
    # Drawn on a terminal, nothing is printed line by line: the bar's status line says it.
    with display:
        display.progress.refresh()
    assert "loading judge smollm2:" not in out.getvalue()
    assert "ETA 0:09" in out.getvalue()
