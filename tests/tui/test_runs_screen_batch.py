"""The Runs screen shows a batch run's state: awaiting N of M answers."""

from __future__ import annotations

import json

from textual.widgets import Static
from tui_helpers import SIZE, settle, static_text, toast_texts

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.run.events import RunStatus
from dialjudge.core.judges.types import Judgment, ScoringMode
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.runs import RunsScreen

API = JudgeConfig(name="api", backend="openai", model="m", base_url="http://127.0.0.1:9/v1")


async def test_a_run_awaiting_batch_answers_says_how_many(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        config = RunConfig.build(app.workspace.dataset, get_template("likert-1to5"), [API], aspect="overall",
                                 quality="overall", mode=ScoringMode.GENERATE, limit=4)
        with services.session.store() as store:
            run_id = store.runs.create_run({**config.to_dict(), "batch": {"files": [], "imports": []}},
                                           config.fingerprint, total=4)
            store.runs.set_status(run_id, RunStatus.AWAITING_ANSWERS)
            item = config.select_items(app.workspace.dataset)[0].id
            store.judgments.add_judgment(run_id, Judgment(item, "api", ScoringMode.GENERATE, "h", "3", 3.0, 0.5))
        await pilot.press("u")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, RunsScreen)
        assert screen.table.cell(run_id, "status").text == "awaiting 3 of 4 answers"
        details = static_text(screen.query_one("#runs-details", Static))
        assert "awaiting 3 of 4 answers" in details


async def test_the_runs_screen_imports_a_batch_runs_answer_file(services, tmp_path):
    from textual.widgets import Input

    from dialjudge.core.api import (
        RunRequest,
        plan_runs,
    )
    from dialjudge.core.api.batch import write_batch
    from dialjudge.core.api.session import Session
    from dialjudge.core.config import Config

    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dataset = app.workspace.dataset
        batch_session = Session(Config(path=None, judges={"api": API}), store_path=services.session.store_path)
        plan = plan_runs(RunRequest(template="likert-1to5", judges=("api",), mode="generate", aspect="overall",
                                    quality="overall", limit=3), dataset, batch_session.config)[0]
        exported = write_batch(batch_session, plan, dataset, tmp_path / "requests.jsonl")
        ids = [json.loads(line)["custom_id"] for line in (tmp_path / "requests.jsonl").read_text().splitlines()]
        answers = [{"id": f"batch_req_{n}", "custom_id": cid, "error": None, "response": {"status_code": 200, "body": {
            "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": str(n + 2)}}]}}}
            for n, cid in enumerate(ids)]
        (tmp_path / "answers.jsonl").write_text("\n".join(json.dumps(a) for a in answers[:2]) + "\n")

        await pilot.press("u")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, RunsScreen)
        screen.table.move_cursor_to(exported.run_id)
        await pilot.press("i")
        await settle(pilot)
        pilot.app.screen.query_one("#answers-file", Input).value = str(tmp_path / "answers.jsonl")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert any("Run 1: 2 answers scored; every line used; awaiting 1 of 3 answers." in " ".join(t.split())
                   for t in toast_texts(pilot.app))
        assert screen.table.cell(exported.run_id, "status").text == "awaiting 1 of 3 answers"
