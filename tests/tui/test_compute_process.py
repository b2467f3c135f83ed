"""The app's heavy computations happen in its compute process (core/api/compute_worker.py), not in its own:
the statistics, metric scores and description it shows equal the command line's in-process ones, and a
compute process killed outright leaves the app up, the next computation starting another."""

from __future__ import annotations

import os
import signal

import pytest
from tui_helpers import SIZE, settle, wait_until

from dialjudge.core.adversarial import discernment
from dialjudge.core.api import compute_worker as compute
from dialjudge.core.api import decisions_in_worker, describe, view
from dialjudge.core.api import labels_estimates as le
from dialjudge.core.api.formatting import ceiling_table
from dialjudge.core.api.profiles import profile_columns
from dialjudge.core.api.types import LENGTH_EVALUATOR, score_examples
from dialjudge.core.compare import compare_evaluators
from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.metrics import batch as metrics_batch
from dialjudge.core.stats import agreement_table
from dialjudge.core.stats.baselines import length_scores
from dialjudge.tui import scores_view_model
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.label_estimates_dialog import LabelEstimatesDialog
from dialjudge.tui.widgets.discernment_panel import DiscernmentPanel

#: These tests follow the app's own compute process: started by the app, killed, replaced.
pytestmark = pytest.mark.own_compute_process

METHODS = ("pearson", "spearman", "kendall")


def command_lines_table(inputs: scores_view_model.AgreementInputs, services: object):  # type: ignore[no-untyped-def]
    """The agreement table as the command line computes it: core's function, in this process."""
    return agreement_table(inputs.examples, inputs.scores, [inputs.quality], subset=inputs.subset, levels=(scores_view_model.ITEM_LEVEL,),
                           aggregation=inputs.aggregation, n_boot=services.n_boot,  # type: ignore[attr-defined]
                           seed=services.seed, ceiling_items=inputs.ceiling_items)  # type: ignore[attr-defined]


def assert_same_cell(shown: object, here: object) -> None:
    """Two agreement cells hold the same numbers (NaN where undefined in both)."""
    assert shown.n == here.n  # type: ignore[attr-defined]
    for method in METHODS:
        a, b = shown.result.coefficient(method), here.result.coefficient(method)  # type: ignore[attr-defined]
        assert (a.value, a.ci_low, a.ci_high) == pytest.approx((b.value, b.ci_low, b.ci_high), abs=1e-12, nan_ok=True)


def _not_here(*args: object, **kwargs: object) -> None:
    raise AssertionError("computed in the app's own process")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def computed_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the compute process runs fails if the app's own process runs it, by any of the names the app
    could reach it by (the child imports its own copies)."""
    for name in ("agreement_table", "describe", "score_examples", "ceiling_table", "judges_as_labels"):
        monkeypatch.setattr(compute, name, _not_here)
    monkeypatch.setattr(view, "agreement_table", _not_here)
    monkeypatch.setattr(scores_view_model, "agreement_table", _not_here)
    monkeypatch.setattr(metrics_batch, "score_examples", _not_here)


async def test_the_apps_statistics_come_from_the_compute_process_and_equal_the_command_lines(
        services, computed_elsewhere) -> None:
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: app.datasets.stats is not None and app.datasets.dataset_summary is not None,
                         "the statistics and the summary")
        pid = compute.compute_worker(services.session).pid
        assert pid is not None and pid != os.getpid() and _alive(pid)
        ws, dataset = app.workspace, app.workspace.dataset
        assert dataset is not None and ws.metric_scores is not None

        # The command line's way: the same core functions in its own process.
        inputs = ws.agreement_inputs()
        here = command_lines_table(inputs, services)
        shown = app.datasets.stats
        for name in ws.evaluators:
            assert shown.is_current(name, ws.version(name))
        assert ws.metric_names
        for name in ws.evaluators:
            assert_same_cell(shown.cells[name], here.cell(name, inputs.quality))
        metrics = score_examples(dataset.examples, profile_columns(app.datasets.metric_profile,
                                                                   services.metric_ids))
        assert ws.metric_scores.values == metrics.values and ws.metric_scores.metrics == metrics.metrics
        assert repr(app.datasets.dataset_summary) == repr(describe(dataset))  # repr: NaN equals NaN
        assert repr(app.datasets.dataset_ceilings) == repr(ceiling_table(dataset.examples, n_boot=0))
    assert await _ended(pid)


def decided_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    """The comparison, discernment and a run's label estimates fail if the app's own process computes them:
    the core steps every way to them passes through, by the names they are looked up by when called (the
    child imports its own copies)."""
    for name in ("compare_columns", "discernment_table", "alt_test_for_run", "estimate_for_run", "label_next"):
        monkeypatch.setattr(decisions_in_worker, name, _not_here)
    monkeypatch.setattr(view, "compare_evaluators", _not_here)
    monkeypatch.setattr(discernment, "_row", _not_here)
    monkeypatch.setattr(le, "load_run", _not_here)


async def test_the_apps_comparison_discernment_and_label_estimates_come_from_the_compute_process(
        services) -> None:
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        ws, dataset = app.workspace, app.workspace.dataset
        assert dataset is not None
        judge = JudgeConfig(name="fake", backend="fake")
        app.runs.start(RunConfig.build(dataset, get_template("likert-1to5"), [judge], aspect="overall",
                                       quality="overall", mode=ScoringMode.GENERATE))
        await settle(pilot)
        assert app.runs.state is not None and app.runs.state.status == "finished"
        run_id = app.runs.state.run_id
        column = f"fake#{run_id}"

        with pytest.MonkeyPatch.context() as patch:
            decided_elsewhere(patch)
            app.decisions.compare(LENGTH_EVALUATOR, column)
            await wait_until(pilot, lambda: app.decisions.comparison is not None, "the comparison")
            await pilot.press("p")
            await settle(pilot)
            panel = app.screen.query_one(DiscernmentPanel)
            app.push_screen(LabelEstimatesDialog(run_id))
            await wait_until(pilot, lambda: getattr(app.screen, "result", None) is not None, "the label estimates")
            shown = app.screen.result  # type: ignore[attr-defined]

        # The command line's way: the same core functions in this process.
        here = compare_evaluators(dataset, length_scores(dataset.examples), dict(ws.scores_of(column)), "overall",
                                  name_a=LENGTH_EVALUATOR, name_b=column, n_boot=services.n_boot, seed=services.seed)
        assert repr(app.decisions.comparison) == repr(here)  # repr: NaN equals NaN
        assert panel.rows
        assert repr(list(panel.rows.values())) == repr(list(discernment.discernment_table(dataset, ws.all_scores())))
        with services.session.store() as store:
            alt_tests = le.alt_test_for_run(store, run_id, dataset=dataset, app_config=services.config)
            estimates = le.estimate_for_run(store, run_id, labelled=50, seed=0, dataset=dataset,
                                            app_config=services.config)
        assert shown.alt_test_problem is None and shown.estimate_problem is None
        assert repr(shown.alt_tests) == repr(alt_tests) and repr(shown.estimates) == repr(estimates)


async def _ended(pid: int) -> bool:
    """The app's end ends its compute process (bounded: its reaper waits a few seconds at most)."""
    import asyncio

    for _ in range(200):
        if not _alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_a_killed_compute_process_leaves_the_app_up_and_the_next_computation_starts_another(
        services, computed_elsewhere) -> None:
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_until(pilot, lambda: app.datasets.stats is not None, "the first statistics")
        worker = compute.compute_worker(services.session)
        first = worker.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        await wait_until(pilot, lambda: worker.pid is None, "the app noticing the process ended")
        assert app.is_running

        app.datasets.choose_view(subset="open")
        await wait_until(pilot, lambda: app.datasets.stats is not None, "the statistics of the next view")
        second = worker.pid
        assert second is not None and second != first and _alive(second)
        assert app.workspace.subset.spec == "open"
        inputs = app.workspace.agreement_inputs()
        here = command_lines_table(inputs, services)
        for name in app.workspace.evaluators:
            assert_same_cell(app.datasets.stats.cells[name], here.cell(name, inputs.quality))  # type: ignore[union-attr]
