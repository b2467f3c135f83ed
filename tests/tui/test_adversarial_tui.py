"""Adversarial sets in the app: the Plots screen's discernment panel, and the "make adversarial set" dialog."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Checkbox, Input
from tui_helpers import SIZE, make_services, settle, toast_texts

from dialjudge.core.adversarial.builder import make_adversarial_set
from dialjudge.core.adversarial.discernment import ORIGINAL_VS_ADVERSARIAL, discernment_table
from dialjudge.core.config import JudgeConfig
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.loaders import read_native, save_dataset
from dialjudge.tui.app import make_app
from dialjudge.tui.controllers.adversarial import AdversarialRequest, default_output
from dialjudge.tui.screens.adversarial_dialog import AdversarialDialog
from dialjudge.tui.screens.plots import PlotsScreen
from dialjudge.tui.widgets.discernment_panel import DiscernmentPanel


def fooled_sometimes(item_id: str, prompt: str) -> float:
    """Rates originals 4, the first perturbation 2 and the second 5 (fooled), everything else 3."""
    if item_id.endswith("-adv2"):
        return 5.0
    if item_id.endswith("-adv1"):
        return 2.0
    return 4.0 if item_id.endswith("-ref") else 3.0


def judge_services(tmp_path: Path):
    return make_services(tmp_path, make_backend=lambda config: FakeBackend(name=config.name,
                                                                           score_fn=fooled_sometimes))


def judge_run(dataset) -> RunConfig:
    return RunConfig.build(dataset, get_template("likert-1to5"), [JudgeConfig(name="fake", backend="fake")],
                           aspect="overall", quality="overall", mode=ScoringMode.GENERATE)


def discernment_panel(app) -> DiscernmentPanel:
    assert isinstance(app.screen, PlotsScreen)
    return app.screen.query_one(DiscernmentPanel)


async def test_discernment_panel_shows_core_table_for_metrics_and_judge(tmp_path):
    app = make_app(services=judge_services(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        panel = discernment_panel(app)
        assert panel.display
        ws = app.workspace
        assert list(panel.rows) == ws.evaluators  # metrics only so far

        app.runs.start(judge_run(ws.dataset))
        await settle(pilot)
        assert ws.judge_names == ["fake#1"] and list(panel.rows) == ws.evaluators
        expected = {row.evaluator: row for row in discernment_table(ws.dataset, ws.all_scores())}
        for name, row in panel.rows.items():
            core = expected[name]
            assert (row.comparison, row.n_positive, row.n_adversarial) == \
                (core.comparison, core.n_positive, core.n_adversarial)
            for field in ("auc", "mean_positive", "mean_adversarial", "gap", "share_at_or_above"):
                assert getattr(row, field) == pytest.approx(getattr(core, field), abs=1e-12)
            assert (row.hist_positive, row.hist_adversarial) == (core.hist_positive, core.hist_adversarial)
        judge = panel.rows["fake#1"]
        # Originals 4 (0.75); adversarial 2 (0.25) or 5 (1.0): half fooled, AUC one half.
        assert judge.comparison == ORIGINAL_VS_ADVERSARIAL
        assert judge.auc == pytest.approx(0.5)
        assert judge.share_at_or_above == pytest.approx(0.5)
        assert judge.mean_positive == pytest.approx(0.75)


async def test_discernment_panel_hides_for_a_set_without_adversarial_items(tmp_path):
    sample = open_dataset("sample", remember=False)
    plain = save_dataset(sample.subset([ex for ex in sample.examples if not ex.is_adversarial]),
                         tmp_path / "plain.jsonl")
    app = make_app(services=make_services(tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        assert discernment_panel(app).display
        app.datasets.open(str(plain))
        await settle(pilot)
        panel = discernment_panel(app)
        assert not panel.display and panel.rows == {}


async def test_dialog_builds_saves_and_opens_an_adversarial_set(tmp_path):
    out = tmp_path / "sample-adv.jsonl"
    app = make_app(services=make_services(tmp_path))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, AdversarialDialog)
        assert dialog.query_one("#adv-out", Input).value == str(default_output("sample", 1))
        dialog.query_one("#adv-kind-knowledge", Checkbox).value = False
        dialog.query_one("#adv-per-item", Input).value = "2"
        dialog.query_one("#adv-n", Input).value = "5"
        dialog.query_one("#adv-seed", Input).value = "7"
        await pilot.pause()
        assert dialog.query_one("#adv-out", Input).value == str(default_output("sample", 7))  # follows the seed
        dialog.query_one("#adv-out", Input).value = str(out)
        await pilot.press("ctrl+s")
        await settle(pilot)

        assert out.is_file()
        assert app.workspace.dataset.source == str(out)
        _, report = make_adversarial_set(open_dataset("sample", remember=False),
                                         kinds=("negation", "number", "date"), per_item=2, n=5, seed=7)
        written = read_native(out)
        adversarial = [ex for ex in written.examples if ex.is_adversarial]
        assert len(adversarial) == report.total_candidates > 0
        assert len({ex.adversarial.source_id for ex in adversarial}) == report.items_used
        assert {ex.adversarial.kind for ex in adversarial} <= {"negation", "number", "date"}
        assert len(written) == len(app.workspace.dataset.examples)
        toasts = " ".join(toast_texts(app)).replace("\n", " ")
        assert report.summary().splitlines()[0] in toasts and out.name in toasts, toasts


async def test_dialog_refuses_bad_fields_and_a_build_error_becomes_a_notification(tmp_path, worker_failures):
    app = make_app(services=make_services(tmp_path))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("d")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, AdversarialDialog)
        dialog.query_one("#adv-out", Input).value = str(tmp_path / "adv.csv")
        assert "JSONL" in dialog.request()
        for kind in ("negation", "number", "date", "knowledge"):
            dialog.query_one(f"#adv-kind-{kind}", Checkbox).value = False
        assert "perturbation" in dialog.request()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, AdversarialDialog)

        # No KdConv in the (empty) data folders: the worker's DataError is shown, nothing written.
        app.adversarial.make_set(AdversarialRequest("kdconv-film", ("negation",), 1, 2, 1, tmp_path / "k.jsonl"))
        await settle(pilot)
        assert any("kdconv/film/test.json" in text for text in toast_texts(app)), toast_texts(app)
        worker_failures.expect("kdconv/film/test.json")
        assert not (tmp_path / "k.jsonl").exists()
        assert app.workspace.dataset.name == "sample"
