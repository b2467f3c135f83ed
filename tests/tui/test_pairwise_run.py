"""Pairwise runs in the app: the Run screen offers pairs and counts them, the report shows after the run,
and the per-candidate columns join the Scores screen's comparison with the humans."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select, SelectionList, Static
from tui_helpers import SIZE, settle, static_text

from dialjudge.core.judges.post_run.pairwise_report import pairwise_report
from dialjudge.core.judges.run.pairwise import PairSetting, plan_pairs
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.run import RunScreen
from dialjudge.tui.widgets.pairwise_report import PairwiseReportView


async def open_run_screen(pilot) -> RunScreen:
    await settle(pilot)
    await pilot.press("j")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, RunScreen)
    return screen


async def test_a_pairwise_run_from_the_run_screen_shows_its_report_and_candidate_columns(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run_screen(pilot)
        judges = screen.query_one("#run-judges", SelectionList)
        judges.deselect_all()
        judges.select("fake")
        pairs_row = screen.query_one("#run-pairs-row")
        assert not pairs_row.display  # a pointwise template has no pairs
        screen.query_one("#run-template", Select).value = "pairwise-plain"
        await pilot.pause()
        assert pairs_row.display
        screen.query_one("#run-pairs", Input).value = "2"
        screen.query_one("#run-pair-seed", Input).value = "4"
        screen.query_one("#run-limit", Input).value = "15"
        await pilot.pause()

        dataset = app.workspace.dataset
        assert dataset is not None
        expected = plan_pairs(dataset.examples[:15], PairSetting(per_context=2, seed=4))
        assert len(expected.asked) == 12  # 3 contexts of 5 candidates, 2 pairs each, both orders
        plan = static_text(screen.query_one("#run-plan", Static))
        assert "Pairwise: 6 pairs of 15 candidates in 3 contexts" in plan
        assert "= 12 judgments" in plan
        assert "= 15 judgments" not in plan  # the candidates are not what is judged

        screen.query_one("#run-pairs", Input).value = "none"
        await pilot.pause()
        assert "pairs must be 'all' or a number" in static_text(screen.query_one("#run-plan", Static))
        screen.query_one("#run-pairs", Input).value = "2"
        await pilot.pause()

        view = screen.query_one(PairwiseReportView)
        assert not view.display
        await pilot.press("ctrl+r")
        await settle(pilot)
        state = app.runs.state
        assert state is not None and state.status == "finished" and state.done == state.total == 12
        assert app.pairwise.run_id == state.run_id
        assert view.display
        shown = static_text(view, width=240)
        assert f"Pairwise verdicts — run {state.run_id}" in shown
        assert "flip with order" in shown and "humans (overall)" in shown

        # The report on screen is core's, and its columns are the workspace's judge columns.
        with services.session.store() as store:
            record = store.runs.get_run(state.run_id)
            report = pairwise_report(record.run_config, dataset, store.judgments.load_judgments(state.run_id))
        fake = report.judges["fake"]
        assert fake.position.verdicts + fake.failed == 12
        assert f"{fake.position.verdicts}" in shown
        columns = app.workspace.evaluators
        assert f"fake:winrate#{state.run_id}" in columns and f"fake:bt#{state.run_id}" in columns
        assert not any(">" in item for c in columns for item in app.workspace.scores_of(c))
        bt = app.workspace.scores_of(f"fake:bt#{state.run_id}")
        assert bt == pytest.approx(fake.scores.bt)


async def test_the_prompt_lab_previews_a_pairwise_template_in_both_orders(services):
    from dialjudge.tui.screens.prompt_lab import PREVIEW_DELAY_S, PromptLabScreen
    from dialjudge.tui.widgets.prompt_preview import PromptPreview

    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PromptLabScreen)
        screen.query_one("#lab-template", Select).value = "pairwise-plain"
        await pilot.pause(PREVIEW_DELAY_S + 0.1)
        await settle(pilot)
        dataset = app.workspace.dataset
        assert dataset is not None
        item, partner = dataset.examples[0], dataset.examples[1]  # the context's next candidate
        text = static_text(screen.query_one(PromptPreview).query_one("#prompt-body", Static), width=400)
        first, second = text.split("Order 2 of 2")
        assert f"Order 1 of 2: {item.id} shown first (A)" in first
        assert f"Reply A: {item.candidate}" in first and f"Reply B: {partner.candidate}" in first
        assert f"Reply A: {partner.candidate}" in second and f"Reply B: {item.candidate}" in second


async def test_a_stored_pairwise_run_loaded_into_the_scores_shows_its_candidate_columns(services):
    import asyncio

    from dialjudge.core.judges.run.engine import RunEngine
    from dialjudge.core.planning import plan_run

    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dataset = app.workspace.dataset
        assert dataset is not None
        plan = plan_run(dataset, services.config, template="pairwise-plain", judges=["fake"], limit=10,
                        pairs=PairSetting(per_context=3, seed=2))
        with services.session.store() as store:
            backends = {"fake": services.session.make_backend(services.config.judge("fake"))}
            summary = await asyncio.to_thread(asyncio.run, RunEngine(plan.config, dataset, backends, store).run())
        app.stored_runs.show_in_scores(summary.run_id)
        await settle(pilot)
        columns = app.workspace.evaluators
        assert f"fake:bt#{summary.run_id}" in columns and f"fake#{summary.run_id}" not in columns
        assert app.pairwise.run_id == summary.run_id
