"""The Runs screen: history, comparing two runs, exporting a run, showing a stored run on the Scores screen."""

from __future__ import annotations

import csv
import json

import pytest
from textual.widgets import Input, Static
from tui_helpers import SIZE, settle, static_text

from dialjudge.core.compare import compare_runs
from dialjudge.core.config import JudgeConfig
from dialjudge.core.evaluation import evaluate, split_subsets
from dialjudge.core.format import number_text
from dialjudge.core.judges.prompts.personas import Persona
from dialjudge.core.judges.prompts.templates import get_template, parse_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.run_columns import run_scores
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.dialogs import ExportDialog
from dialjudge.tui.screens.runs import RunsScreen

FAKE = JudgeConfig(name="fake", backend="fake", model="fake-judge")


def run_config(dataset, *, template=None, persona: Persona | None = None) -> RunConfig:
    return RunConfig.build(dataset, template or get_template("likert-1to5"), [FAKE], aspect="overall",
                           quality="overall", personas=[persona] if persona else [], mode=ScoringMode.GENERATE)


def reworded_template():
    text = get_template("likert-1to5").text.replace("Rate the response for", "Judge the reply for")
    return parse_template(text, "edited")


async def two_runs(pilot, *, persona: bool = False) -> tuple[int, int]:
    """The stock template, then the same judge on a reworded one (and, optionally, as a persona)."""
    app = pilot.app
    await settle(pilot)
    ids = []
    second = {"template": reworded_template(),
              "persona": Persona("strict", "", "Act like a strict fact-checker.") if persona else None}
    for options in ({}, second):
        app.runs.start(run_config(app.workspace.dataset, **options))
        await settle(pilot)
        ids.append(app.runs.state.run_id)
    return ids[0], ids[1]


async def open_runs(pilot) -> RunsScreen:
    await pilot.press("u")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, RunsScreen)
    return screen


async def test_comparing_two_runs_shows_the_deltas_and_the_prompt_diff(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        first, second = await two_runs(pilot)
        screen = await open_runs(pilot)
        assert screen.table.row_keys == [second, first]  # newest first
        assert "finished" in screen.table.cell(first, "status").text
        details = static_text(screen.query_one("#runs-details", Static))
        assert f"Run {second}" in details and "Judge the reply for {aspect}" in details

        await pilot.press("space", "down", "space", "c")
        await settle(pilot)
        shown = static_text(screen.query_one("#runs-comparison", Static), width=160)
        with services.session.store() as store:
            comparison = compare_runs(store, first, second, dataset=app.workspace.dataset,
                                      subsets=split_subsets(app.workspace.dataset, "all"))
        # Marked newest first; still one A (the older run) everywhere: status, mark column, header, tables, verdict.
        status = static_text(screen.query_one("#runs-status", Static))
        assert f"A = run {first}, B = run {second}" in status
        assert (screen.table.cell(first, "mark").text, screen.table.cell(second, "mark").text) == ("A", "B")
        assert f"A = run {first}, B = run {second} on sample" in shown
        assert f"Δ = run {second} − run {first}" in shown
        paired = next(c for c in comparison.paired if c.subset == "all")
        assert (paired.name_a, paired.name_b) == (f"run {first}", f"run {second}")
        spearman_row = next(line.replace("│", " ").split() for line in shown.splitlines()
                            if line.replace("│", " ").split()[:3] == ["overall", "all", "Δρ"])
        assert spearman_row[3:5] == [number_text(paired.delta("spearman").a), number_text(paired.delta("spearman").b)]
        assert f"between run {first} and run {second}" in shown.replace("\n", " ")
        rows = [line.split() for line in shown.splitlines()]
        for d in comparison.deltas:
            if d.evaluator == "fake" and d.coefficient == "pearson":
                row = next(r for r in rows if r[:3] == ["fake", "overall", d.subset])
                assert row[3:7] == ["60/60" if d.subset == "all" else "30/30", f"{d.before:.3f}",
                                    f"{d.after:.3f}", f"{d.change:+.3f}"]
        assert "-Rate the response for {aspect}: {aspect_definition}" in shown
        assert "+Judge the reply for {aspect}: {aspect_definition}" in shown
        assert "template.source" in shown  # a configuration change, listed beside the diff


async def test_a_persona_shows_in_the_diff_and_as_another_judge_column(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        first, second = await two_runs(pilot, persona=True)
        screen = await open_runs(pilot)
        await pilot.press("space", "c")  # the marked run with the highlighted one... the same: refused
        await pilot.press("down", "c")
        await settle(pilot)
        shown = static_text(screen.query_one("#runs-comparison", Static), width=160)
        assert "+# persona strict" in shown and "+Act like a strict fact-checker." in shown
        assert any(line.split()[:1] == ["fake@strict"] for line in shown.splitlines())


async def test_export_writes_the_tables_and_the_judgments(services, tmp_path):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        first, _ = await two_runs(pilot)
        screen = await open_runs(pilot)
        screen.table.move_cursor_to(first)
        await pilot.press("x")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportDialog)
        dialog.query_one("#export-folder", Input).value = str(tmp_path / "exports")
        await pilot.press("ctrl+s")
        await settle(pilot)
        out = tmp_path / "exports"
        names = sorted(p.name for p in out.iterdir())
        assert names == sorted(f"run-{first}-{kind}" for kind in (
            "agreement.csv", "agreement.json", "agreement.md", "agreement.tex", "judgments.csv", "judgments.jsonl",
            "confusion.csv", "kappa.csv", "diagnostics.json", "diagnostics.md", "report.html"))
        assert 'id="items-data"' in (out / f"run-{first}-report.html").read_text(encoding="utf-8")

        with services.session.store() as store:
            scores, failures = run_scores(store, first)
            stored = store.judgments.export_rows(first)
        report = evaluate(app.workspace.dataset, qualities=["overall"], extra_scores=scores, failures=failures,
                          include_metrics=False, n_boot=0)
        expected = next(r for r in report.records if r["evaluator"] == "fake")
        with (out / f"run-{first}-agreement.csv").open(encoding="utf-8") as f:
            rows = [r for r in csv.DictReader(f) if r["evaluator"] == "fake" and r["subset"] == "all"]
        assert float(rows[0]["pearson"]) == pytest.approx(expected["pearson"])
        assert {r["evaluator"] for r in csv.DictReader((out / f"run-{first}-agreement.csv").open())} >= {
            "fake", "BLEU-1", "human ceiling"}  # the open dataset's metrics sit beside the judge
        data = json.loads((out / f"run-{first}-agreement.json").read_text(encoding="utf-8"))
        assert data["meta"]["run_id"] == first
        assert "| fake |" in (out / f"run-{first}-agreement.md").read_text(encoding="utf-8")
        assert r"\begin{tabular}" in (out / f"run-{first}-agreement.tex").read_text(encoding="utf-8")
        lines = (out / f"run-{first}-judgments.jsonl").read_text(encoding="utf-8").splitlines()
        assert [json.loads(line)["item_id"] for line in lines] == [r["item_id"] for r in stored]


async def test_a_stored_run_joins_the_scores_screen(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.runs.start(run_config(app.workspace.dataset))
        await settle(pilot)
        run_id = app.runs.state.run_id
        app.workspace.remove_evaluator(f"fake#{run_id}")  # as after a restart: only the store has it
        screen = await open_runs(pilot)
        await pilot.press("a")
        await settle(pilot)
        with services.session.store() as store:
            stored = store.judgments.load_judgments(run_id)["fake"]
        assert dict(app.workspace.scores_of(f"fake#{run_id}")) == {i: j.normalized for i, j in stored.items()}
        assert screen.table.row_count == 1
