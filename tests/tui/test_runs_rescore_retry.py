"""The Runs screen rescores a run (a dialog, a worker, no model) and retries its failed judgments; the Run and
Runs screens show cost and latency."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input, Static
from tui_helpers import SIZE, make_services, settle, static_text

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.answers import match_choice
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.rescore_dialog import RescoreDialog
from dialjudge.tui.screens.runs import RunsScreen

FAKE = JudgeConfig(name="fake", backend="fake", model="fake-judge")
LIMIT = 8


def run_config(dataset, mode: ScoringMode = ScoringMode.LOGPROB) -> RunConfig:
    return RunConfig.build(dataset, get_template("likert-1to5"), [FAKE], aspect="overall", quality="overall",
                           mode=mode, top_k=3, limit=LIMIT)


async def open_runs(pilot) -> RunsScreen:
    await pilot.press("u")
    await settle(pilot)
    assert isinstance(pilot.app.screen, RunsScreen)
    return pilot.app.screen


async def test_rescoring_from_the_runs_screen_makes_a_linked_run_without_the_model(tmp_path: Path) -> None:
    backends: list[FakeBackend] = []

    def make_backend(config: JudgeConfig) -> FakeBackend:
        backends.append(FakeBackend(name=config.name, score_fn=lambda item, prompt: 1.2 + (len(item) % 7) / 2))
        return backends[-1]

    services = make_services(tmp_path, make_backend=make_backend)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.runs.start(run_config(app.workspace.dataset))
        await settle(pilot)
        source = app.runs.state.run_id
        asked = sum(len(b.requests) for b in backends)
        assert asked == LIMIT

        screen = await open_runs(pilot)
        details = static_text(screen.query_one("#runs-details", Static))
        assert f"fake: {LIMIT} asked, 0 reused" in details  # cost and latency, read on a worker

        await pilot.press("r")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, RescoreDialog)
        dialog.query_one("#rescore-top-k", Input).value = "1"
        dialog.query_one("#rescore-name", Input).value = "top-1"
        await pilot.press("ctrl+s")
        await settle(pilot)

        assert isinstance(app.screen, RunsScreen)
        assert sum(len(b.requests) for b in backends) == asked  # no model call
        new = max(screen.runs)
        record = screen.runs[new]
        assert record.source_run == source and record.name == "top-1" and record.run_config.top_k == 1
        with services.session.store() as store:
            before = store.judgments.load_judgments(source)["fake"]
            after = store.judgments.load_judgments(new)["fake"]
        for item, judgment in before.items():
            best_token = judgment.top_logprobs[0][0]  # top-1: the most likely first token's rating
            assert after[item].score == float(match_choice(best_token, ("1", "2", "3", "4", "5")))
        await pilot.press("up")  # the new run, listed first
        await settle(pilot)
        details = static_text(screen.query_one("#runs-details", Static))
        assert f"run {source}, without calling the model" in details
        assert f"fake: 0 asked, {LIMIT} reused" in details


async def test_a_dialog_with_nothing_changed_does_not_rescore(services) -> None:
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.runs.start(run_config(app.workspace.dataset))
        await settle(pilot)
        screen = await open_runs(pilot)
        await pilot.press("r")
        await settle(pilot)
        await pilot.press("ctrl+s")  # nothing typed
        await settle(pilot)
        assert isinstance(app.screen, RescoreDialog)
        await pilot.press("escape")
        await settle(pilot)
        assert list(screen.runs) == [app.runs.state.run_id]


async def test_retry_failed_asks_only_for_the_failed_judgments(tmp_path: Path) -> None:
    backends: list[FakeBackend] = []

    def make_backend(config: JudgeConfig) -> FakeBackend:
        # The first run's judge answers every third request with text no parser reads; the retry's is healthy.
        backends.append(FakeBackend(name=config.name, garbage_every=0 if backends else 3))
        return backends[-1]

    services = make_services(tmp_path, make_backend=make_backend)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.runs.start(run_config(app.workspace.dataset, mode=ScoringMode.GENERATE))
        await settle(pilot)
        run_id = app.runs.state.run_id
        with services.session.store() as store:
            failed = sorted(j.item_id for j in store.judgments.iter_judgments(run_id) if j.failed)
            kept = {j.item_id: j.score for j in store.judgments.iter_judgments(run_id) if not j.failed}
        assert len(failed) == LIMIT // 3

        screen = await open_runs(pilot)
        await pilot.press("f")
        await settle(pilot)
        assert sorted(r.item_id for r in backends[1].requests) == failed
        assert app.runs.state.run_id == run_id and app.runs.state.status.value == "finished"
        with services.session.store() as store:
            after = {j.item_id: j.score for j in store.judgments.iter_judgments(run_id)}
        assert all(score is not None for score in after.values())
        assert {item: after[item] for item in kept} == kept
        await settle(pilot)
        assert screen.runs[run_id].failures == 0

        await pilot.press("j")  # the Run screen shows the run's cost and latency once it has ended
        await settle(pilot)
        usage = app.screen.query_one("#run-usage", Static)
        assert usage.display and f"fake: {LIMIT} asked" in static_text(usage)
