"""The Runs screen shows a batch run's state: awaiting N of M answers."""

from __future__ import annotations

from textual.widgets import Static
from tui_helpers import SIZE, settle, static_text

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
