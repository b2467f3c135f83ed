"""The Run screen writes the run as a batch file beside running it now (the use case ``judge --batch-out`` calls),
shows the files and the run's awaiting state, and the Runs screen lists the run awaiting its answers; the same
settings started live offer to continue the awaiting run here (``--continue-live``)."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input, Select, SelectionList, Static
from tui_helpers import FAST_METRICS, SIZE, settle, static_text, toast_texts, wait_until

from dialjudge.core.api.batch import batch_state
from dialjudge.core.api.session import Session
from dialjudge.core.config import Config, JudgeConfig
from dialjudge.core.judges.run.events import RunStatus
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.dialogs import ResumeDialog
from dialjudge.tui.screens.run import RunScreen
from dialjudge.tui.screens.runs import RunsScreen
from dialjudge.tui.services import Services

#: A judge behind an OpenAI-compatible API (nothing listens there: a batch file needs no server; judged live,
#: every request fails at once).
API = JudgeConfig(name="api", backend="openai", model="m", base_url="http://127.0.0.1:9/v1", max_retries=0,
                  timeout=2.0)


def api_services(tmp_path: Path) -> Services:
    return Services.default(Config(judges={"api": API}), metric_ids=FAST_METRICS, n_boot=200, show_timings=False,
                            stats_interval_s=3600.0).with_store_at(tmp_path / "runs.sqlite3")


async def test_the_run_screen_writes_a_batch_file_and_the_run_awaits_its_answers(tmp_path: Path) -> None:
    services = api_services(tmp_path)
    out = tmp_path / "requests.jsonl"
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        screen.query_one("#run-judges", SelectionList).select("api")
        screen.query_one("#run-target", Select).value = "coherence"
        screen.query_one("#run-mode", Select).value = "generate"
        screen.query_one("#run-limit", Input).value = "5"
        await pilot.pause()
        await pilot.press("ctrl+b")  # no file named yet: said, nothing written
        await settle(pilot)
        assert any("Name the batch file" in t for t in toast_texts(app)) and not out.exists()

        screen.query_one("#run-batch-out", Input).value = str(out)
        await pilot.press("ctrl+b")
        await settle(pilot)
        lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
        assert len(lines) == 5 and {line["method"] for line in lines} == {"POST"}
        with services.session.store() as store:
            (record,) = store.runs.list_runs()
        assert record.status is RunStatus.AWAITING_ANSWERS and batch_state(record) == "awaiting 5 of 5 answers"
        shown = " ".join(static_text(screen.query_one("#run-batch-result", Static)).split())
        assert f"Run {record.id}: wrote 5 of 5 requests to {out} (5 requests)" in shown
        assert f"Run {record.id}: awaiting 5 of 5 answers." in shown
        assert app.runs.active is False  # written, not run

        await pilot.press("u")
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        assert runs.table.cell(record.id, "status").text == "awaiting 5 of 5 answers"

        # Started live with the same settings, the awaiting run is offered; resuming judges it here, live.
        await pilot.press("j")
        await settle(pilot)
        assert app.screen is screen
        await pilot.press("ctrl+r")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, ResumeDialog) and dialog.record.id == record.id
        assert "written to a batch file" in " ".join(static_text(dialog.query_one(".dialog-text", Static)).split())
        await pilot.press("r")
        # The judge process starts first (a fresh interpreter: slow on busy cores), hence the longer bound.
        await wait_until(pilot, lambda: app.runs.state is not None and app.runs.state.summary is not None,
                         "the live run ended", limit_s=240)
        await settle(pilot)
        state = app.runs.state
        # The same run continued (nothing listens at the judge's address: its requests fail, and are counted).
        assert state is not None and state.run_id == record.id and state.summary is not None
        assert state.summary.resumed and state.failures == state.done > 0
    with Session(Config(judges={"api": API}), store_path=services.session.store_path).store() as store:
        assert store.runs.get_run(record.id).status is not RunStatus.AWAITING_ANSWERS
