"""A run on a label quality: the Scores screen shows core's label comparison of that run."""

from __future__ import annotations

import pytest
from tui_helpers import SIZE, settle, wait_until

from dialjudge.core.judges.post_run.labels import run_label_report
from dialjudge.core.planning import plan_run
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.widgets.label_agreement_panel import LabelAgreementPanel
from judge_bench_files import safety_set


async def test_a_finished_run_on_a_label_quality_shows_its_comparison(services, tmp_path):
    path = safety_set(tmp_path)
    app = make_app(str(path), services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dataset = app.workspace.dataset
        assert dataset is not None
        plan = plan_run(dataset, services.config, template="label-yesno", judges=["fake"], mode="yesno",
                        quality="safety")
        app.runs.start(plan.config)
        await wait_until(pilot, lambda: app.labels.report is not None, "the label comparison arrived")
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, ScoresScreen)
        panel = app.screen.query_one(LabelAgreementPanel)
        assert panel.display and panel.report is app.labels.report

        # The same numbers as core computes from the stored run, as `dialjudge judge` prints them.
        run_id = app.runs.state.run_id
        with services.session.store() as store:
            config = store.runs.get_run(run_id).run_config
            judgments = store.judgments.load_judgments(run_id)
        expected = run_label_report(config, dataset, judgments, n_boot=services.n_boot)
        shown = panel.report.comparisons[0]
        assert shown.n == expected.comparisons[0].n
        assert shown.percent_agreement.value == pytest.approx(expected.comparisons[0].percent_agreement.value)
        assert shown.confusion == expected.comparisons[0].confusion


async def test_a_numeric_quality_hides_the_label_panel(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert not app.screen.query_one(LabelAgreementPanel).display
        assert app.labels.report_for(app.workspace.quality, app.workspace.qualities()) is None
