"""The Scores screen's decision area: two picked evaluator columns compared (paired verdict), and the
judge columns read as labels (confusion matrix with weighted κ, inter-judge agreement); numbers from core."""

from __future__ import annotations

from textual.widgets import Select
from tui_helpers import SIZE, settle, static_text

from dialjudge.core.compare import compare_evaluators
from dialjudge.core.config import JudgeConfig, Sampling
from dialjudge.core.judge_diagnostics import judge_diagnostics
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.stats.baselines import LENGTH_EVALUATOR
from dialjudge.core.stats.paired import verdict_line
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.compare_dialog import CompareDialog
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.widgets.confusion_matrix import ConfusionMatrix, kappa_line
from dialjudge.tui.widgets.decision_panel import DecisionPanel
from dialjudge.tui.widgets.paired_verdict import PairedVerdict


def fake_run_config(dataset, name: str = "fake", **options) -> RunConfig:
    # Each judge name its own seed, so two fake judges answer differently.
    judge = JudgeConfig(name=name, backend="fake", sampling=Sampling(seed=0 if name == "fake" else 1))
    return RunConfig.build(dataset, get_template("likert-1to5"), [judge],
                           aspect="overall", quality="overall", mode=ScoringMode.GENERATE, **options)


async def run_fake_judge(app, pilot, name: str = "fake", **options) -> str:
    app.runs.start(fake_run_config(app.workspace.dataset, name, **options))
    await settle(pilot)
    state = app.runs.state
    assert state is not None and state.status == "finished"
    return f"{name}#{state.run_id}"


async def test_compare_two_picked_columns_shows_the_paired_verdict(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ScoresScreen)
        panel = screen.query_one(DecisionPanel)
        assert not panel.display  # nothing to show before a judge runs
        judge = await run_fake_judge(app, pilot)

        await pilot.press("c")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, CompareDialog)
        assert LENGTH_EVALUATOR in dialog.choices and judge in dialog.choices and "BLEU-1" in dialog.choices
        assert dialog.chosen() == ("BLEU-1", judge)  # one judge: it (B) against the first metric (A)
        dialog.query_one("#compare-a", Select).value = LENGTH_EVALUATOR
        await pilot.press("ctrl+s")
        await settle(pilot)

        assert app.screen is screen and panel.display
        verdict = screen.query_one(PairedVerdict)
        [shown] = verdict.comparisons
        ws = app.workspace
        expected = compare_evaluators(ws.dataset, _lengths(ws.dataset), dict(ws.scores_of(judge)), "overall",
                                      name_a=LENGTH_EVALUATOR, name_b=judge, n_boot=services.n_boot,
                                      seed=services.seed)
        assert (shown.n_items, shown.n_groups, shown.n_excluded) == (expected.n_items, expected.n_groups, 0) == (
            60, 12, 0)
        for method in ("pearson", "spearman", "kendall"):
            got, want = shown.delta(method), expected.delta(method)
            assert (got.delta, got.ci_low, got.ci_high, got.p_value) == (want.delta, want.ci_low, want.ci_high,
                                                                         want.p_value)
        text = " ".join(static_text(verdict).split())
        assert verdict_line(expected) in text
        assert "n = 60 items in 12 contexts" in text
        # 5 candidates per context: Williams's test (independent items) is not given.
        assert expected.williams is None and "Williams" not in text
        for symbol in ("Δr", "Δρ", "Δτ"):
            assert symbol in text


async def test_the_comparison_follows_the_subset_and_counts_items_only_one_side_scored(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = await run_fake_judge(app, pilot)
        second = await run_fake_judge(app, pilot, "other", limit=40)  # 20 items scored by the first only
        app.decisions.compare(first, second)
        await settle(pilot)
        shown = app.decisions.comparison
        ws = app.workspace
        expected = compare_evaluators(ws.dataset, dict(ws.scores_of(first)), dict(ws.scores_of(second)), "overall",
                                      name_a=first, name_b=second, n_boot=services.n_boot, seed=services.seed)
        assert shown is not None and shown.only_a == expected.only_a == 20 and shown.n_items == 40
        text = " ".join(static_text(app.screen.query_one(PairedVerdict)).split())
        assert "(20 scored by one side only or unlabelled, left out)" in text
        assert shown.delta("spearman").ci_low == expected.delta("spearman").ci_low

        await pilot.press("right_square_bracket")  # subset: open; the pair is compared again there
        await settle(pilot)
        shown = app.decisions.comparison
        assert shown is not None and shown.subset == "open"
        expected = compare_evaluators(ws.dataset, dict(ws.scores_of(first)), dict(ws.scores_of(second)), "overall",
                                      subset="open", name_a=first, name_b=second, n_boot=services.n_boot,
                                      seed=services.seed)
        assert shown.delta("pearson").delta == expected.delta("pearson").delta
        assert shown.n_items == expected.n_items


async def test_judges_on_an_ordinal_quality_show_confusion_matrices_and_the_inter_judge_matrix(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = await run_fake_judge(app, pilot)
        second = await run_fake_judge(app, pilot, "other")
        screen = app.screen
        panel = screen.query_one(DecisionPanel)
        assert panel.display
        ws = app.workspace
        columns = {name: dict(ws.scores_of(name)) for name in (first, second)}
        expected = judge_diagnostics(ws.selected_examples(), "overall", ws.scale, columns)
        assert app.decisions.diagnostics == expected
        confusion = screen.query_one(ConfusionMatrix)
        assert [v.evaluator for v in confusion.views] == [first, second]
        text = static_text(confusion)
        for view in expected.confusion:
            assert kappa_line(view) in text
            assert view.n == 60 and sum(map(sum, view.matrix.counts)) == 60
        inter = static_text(screen.query_one("#inter-judge"))
        assert "Inter-judge agreement (Spearman ρ" in inter
        assert f"{expected.inter_judge.value(first, second):.3f} (n 60)" in inter


def _lengths(dataset):
    from dialjudge.core.stats.baselines import length_scores

    return length_scores(dataset.examples)


async def test_a_probability_judge_on_a_binary_quality_shows_its_reliability_diagram(services):
    from dialjudge.core.judge_diagnostics import human_points
    from dialjudge.core.stats.calibration import reliability
    from dialjudge.tui.widgets.reliability_plot import ReliabilityPlot

    app = make_app("incar-kpi", services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        config = RunConfig.build(app.workspace.dataset, get_template("inca-kpi"),
                                 [JudgeConfig(name="fake", backend="fake")], kpi="harmful-input",
                                 quality="harmful-input", subset="tag:kpi:harmful-input", mode=ScoringMode.LOGPROB)
        app.runs.start(config)
        await settle(pilot)
        app.datasets.choose_view(quality="harmful-input")
        await settle(pilot)
        [judge] = app.workspace.judge_names
        plot = app.screen.query_one(ReliabilityPlot)
        assert plot.display and len(plot.calibrations) == 1
        # p(yes) of the fake judge against the annotators' majority, binned by core's reliability().
        ws = app.workspace
        human = human_points(ws.selected_examples(), "harmful-input")
        scores = ws.scores_of(judge)
        ids = [i for i in human if scores.get(i) is not None]
        expected = reliability([scores[i] for i in ids], [float(human[i] > 0.5) for i in ids])
        shown = plot.calibrations[0]
        assert (shown.n, shown.ece, shown.brier) == (expected.n, expected.ece, expected.brier) and shown.n == 15
        assert f"ECE {expected.ece:.3f} · Brier {expected.brier:.3f} · n 15" in static_text(plot)
        assert " ".join(static_text(plot).split()).startswith(f"Reliability of {judge}: p(1): ECE")
