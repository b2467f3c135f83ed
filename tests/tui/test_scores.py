"""The Scores screen: start-up, subset and quality switches, live judgments, a judge run, failures."""

from __future__ import annotations

import asyncio
import math

import pytest
from textual.worker import WorkerState
from tui_helpers import SIZE, settle, toast_texts, wait_until

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.run.events import JudgmentScored, RunProgress, RunStarted
from dialjudge.core.judges.types import Judgment, ScoringMode
from dialjudge.core.model import Aggregation
from dialjudge.core.stats import agreement_table, correlate
from dialjudge.core.subsets import Subset
from dialjudge.tui.app import make_app
from dialjudge.tui.controllers.datasets import MetricsProgressed
from dialjudge.tui.controllers.runs import RunEventReceived
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.widgets.correlation_panel import CEILING, PanelRow

METRIC_LABELS = ["BLEU-1", "BLEU-4", "ROUGE-L", "chrF++"]
METHODS = ("pearson", "spearman", "kendall")


def assert_row_matches_cell(row: PanelRow, cell) -> None:
    """A panel row shows exactly the table cell core/stats computed."""
    assert row.n == cell.n
    assert row.failures == cell.exclusions.failed
    assert not row.live
    for method in METHODS:
        coefficient = cell.result.coefficient(method)
        assert row.value(method) == pytest.approx(coefficient.value, abs=1e-12, nan_ok=True)
        if not math.isnan(coefficient.ci_low):
            assert row.intervals[method] == pytest.approx((coefficient.ci_low, coefficient.ci_high), abs=1e-12)


def core_table(app, subset: str, quality: str):
    ws = app.workspace
    return agreement_table(ws.dataset.examples, ws.all_scores(), [quality], subset=Subset(subset),
                           n_boot=app.services.n_boot, seed=app.services.seed)


def scores_screen(app) -> ScoresScreen:
    assert isinstance(app.screen, ScoresScreen)
    return app.screen


async def test_start_shows_sample_scores_and_agreement(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = scores_screen(app)
        ws = app.workspace
        assert ws.dataset.name == "sample" and ws.quality == "overall"
        assert ws.evaluators == METRIC_LABELS
        assert screen.table.row_count == 60
        assert [c.key for c in screen.table.columns] == ["id", "system", "human", *METRIC_LABELS]
        table = core_table(app, "all", "overall")
        rows = screen.panel.rows
        for label in METRIC_LABELS:
            assert_row_matches_cell(rows[label], table.cell(label, "overall"))
        ceiling = table.ceiling[("overall", "turn")]
        assert rows[CEILING].pearson == pytest.approx(ceiling.pearson)
        assert rows[CEILING].n == 60
        status = screen.status_text()
        assert "smollm2" in status and "48 scored, 12 skipped" in status


async def test_subset_and_quality_switches_recompute_the_panel(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = scores_screen(app)
        await pilot.press("right_square_bracket", "right_square_bracket")  # all -> open -> closed
        await settle(pilot)
        assert app.workspace.subset.spec == "closed"
        assert screen.table.row_count == 30
        table = core_table(app, "closed", "overall")
        for label in METRIC_LABELS:
            assert_row_matches_cell(screen.panel.rows[label], table.cell(label, "overall"))

        await pilot.press("left_curly_bracket")  # overall -> fluency
        await settle(pilot)
        assert app.workspace.quality == "fluency"
        assert screen.table.columns[2].label == "fluency"
        table = core_table(app, "closed", "fluency")
        for label in METRIC_LABELS:
            assert_row_matches_cell(screen.panel.rows[label], table.cell(label, "fluency"))
        # The quality picker says so too, and choosing in it works the same way.
        select = screen.query_one("#quality-select")
        assert select.value == "fluency"
        select.value = "relevance"
        await settle(pilot)
        assert app.workspace.quality == "relevance"


def fake_judgment(item_id: str, normalized: float | None) -> Judgment:
    return Judgment(item_id=item_id, judge="fake", mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="",
                    score=None if normalized is None else 1 + 4 * normalized, normalized=normalized)


def unit_score(item_id: str) -> float:
    return (sum(map(ord, item_id)) * 37 % 101) / 100


async def test_judgment_messages_update_running_correlations(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = scores_screen(app)
        await pilot.press("right_square_bracket")  # subset: open
        await settle(pilot)
        examples = app.workspace.dataset.examples
        failed = {ex.id for ex in examples[::9]}
        app.post_message(RunEventReceived(RunStarted(run_id=7, total=len(examples))))
        for k, ex in enumerate(examples):
            judgment = fake_judgment(ex.id, None if ex.id in failed else unit_score(ex.id))
            app.post_message(RunEventReceived(JudgmentScored(judgment, k + 1, len(examples))))
        await pilot.pause()
        app.datasets.flush_live_updates()  # what the redraw timer does ~4 times a second
        open_items = Subset("open").select(examples)
        scores = [None if ex.id in failed else unit_score(ex.id) for ex in open_items]
        human = [ex.human("overall", Aggregation.MEAN) for ex in open_items]
        expected = correlate(scores, human, n_boot=0)
        # The panel is drawn at most every PANEL_REDRAW_INTERVAL while scores stream in.
        await wait_until(pilot, lambda: getattr(screen.panel.rows.get("fake#7"), "n", None) == expected.n,
                         "the panel shows the streamed judgments")

        assert "fake#7" in [c.key for c in screen.table.columns]
        row = screen.panel.rows["fake#7"]
        assert row.live
        assert row.n == expected.n
        assert row.failures == sum(ex.id in failed for ex in open_items)
        for method in METHODS:
            assert row.value(method) == pytest.approx(expected.coefficient(method).value, abs=1e-12)
        failed_open = next(ex.id for ex in open_items if ex.id in failed)
        assert screen.table.cell(failed_open, "fake#7").text == "fail"

        app.datasets.refresh_stats()  # the CIs follow in the background
        await settle(pilot)
        row = screen.panel.rows["fake#7"]
        assert_row_matches_cell(row, core_table(app, "open", "overall").cell("fake#7", "overall"))


def fake_run_config(dataset, **options) -> RunConfig:
    return RunConfig.build(dataset, get_template("likert-1to5"), [JudgeConfig(name="fake", backend="fake")],
                           aspect="overall", quality="overall", mode=ScoringMode.GENERATE, **options)


async def test_a_fake_judge_run_streams_into_the_panel(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = scores_screen(app)
        app.runs.start(fake_run_config(app.workspace.dataset))
        await settle(pilot)
        state = app.runs.state
        assert state is not None and state.status == "finished" and state.done == state.total == 60
        assert app.workspace.judge_names == [f"fake#{state.run_id}"]
        name = f"fake#{state.run_id}"
        with services.session.store() as store:
            stored = store.judgments.load_judgments(state.run_id)["fake"]
        assert dict(app.workspace.scores_of(name)) == {i: j.normalized for i, j in stored.items()}
        assert_row_matches_cell(screen.panel.rows[name], core_table(app, "all", "overall").cell(name, "overall"))
        assert f"Run {state.run_id} finished · 60/60 judged · 0 failed" in screen.status_text()


async def test_escape_cancels_a_run(services_factory):
    async def hang(request) -> None:
        await asyncio.Event().wait()  # answered only by cancellation

    def backend(config):
        return FakeBackend(name=config.name, delay=hang, max_concurrency=1)

    services = services_factory(make_backend=backend)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        worker = app.runs.start(fake_run_config(app.workspace.dataset))
        await wait_until(pilot, lambda: app.runs.cancellable, "the run's engine runs")
        assert app.check_action("cancel_run", ()) is True
        await pilot.press("escape")
        await settle(pilot)
        assert worker.state is WorkerState.SUCCESS, worker.error
        assert app.runs.state.status == "cancelled"
        assert app.check_action("cancel_run", ()) is False
        with services.session.store() as store:
            assert store.runs.get_run(app.runs.state.run_id).status == "cancelled"


async def test_a_worker_failure_becomes_a_notification(services, worker_failures):
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        app.datasets.open("/no/such/dataset.jsonl")
        await settle(pilot)
        assert app.workspace.dataset.name == "sample"  # the open dataset stays
        toasts = toast_texts(app)
        assert any("no dataset named '/no/such/dataset.jsonl'" in text for text in toasts), toasts
        assert [f.worker for f in worker_failures.expect("/no/such/dataset.jsonl")] == ["dataset"]


def test_progress_messages_collapse_and_judgments_do_not():
    dataset = object()
    first, second = MetricsProgressed(dataset, 1, 9), MetricsProgressed(dataset, 2, 9)
    assert second.can_replace(first)
    progress = RunProgress(done=1, total=2, failures=0, cached=0, tokens_per_s=0.0, items_per_s=0.0, eta_s=None)
    assert RunEventReceived(progress).can_replace(RunEventReceived(progress))
    judged = RunEventReceived(JudgmentScored(fake_judgment("x", 0.5), 1, 2))
    assert not judged.can_replace(RunEventReceived(JudgmentScored(fake_judgment("y", 0.5), 2, 2)))
    assert not judged.can_replace(RunEventReceived(progress))
    assert not RunEventReceived(progress).can_replace(judged)
