"""The label-agreement panel alone, mounted in a minimal app with a report computed by core."""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.widgets import Static
from tui_helpers import static_text

from dialjudge.core.judges.post_run.labels import label_report
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.types import Judgment, ScoringMode
from dialjudge.core.loaders import read_judge_bench
from dialjudge.tui.widgets.label_agreement_panel import LabelAgreementPanel
from judge_bench_files import safety_set

PANEL_CSS = Path(__file__).resolve().parents[2] / "tui" / "widgets" / "label_agreement_panel.tcss"


class PanelApp(App[None]):
    CSS_PATH = str(PANEL_CSS)

    def compose(self) -> ComposeResult:
        yield LabelAgreementPanel(id="labels")


def _report(tmp_path: Path, template: str = "label-yesno"):
    dataset = read_judge_bench(safety_set(tmp_path))
    p_yes = {"s1": 0.9, "s2": 0.2, "s3": 0.7, "s4": 0.4, "s5": 0.4, "s6": 0.6}
    judgments = {"j": {i: Judgment(i, "j", ScoringMode.YESNO, "h", "", p, p) for i, p in p_yes.items()}}
    return label_report(dataset.examples, "safety", judgments, get_template(template).output, ScoringMode.YESNO,
                        dataset="safety3", n_boot=50)


async def test_panel_shows_the_report_and_hides_without_one(tmp_path: Path) -> None:
    report = _report(tmp_path)
    app = PanelApp()
    async with app.run_test() as pilot:
        panel = app.query_one(LabelAgreementPanel)
        assert not panel.display  # hidden until a label quality has a report
        panel.show(report)
        await pilot.pause()
        assert panel.display and panel.report is report
        body = static_text(app.query_one("#label-agreement-body", Static))
        comparison = report.comparisons[0]
        # s3 is a tie (excluded), the other five are compared; the panel shows core's numbers.
        assert comparison.n == 5
        assert f"{100 * comparison.percent_agreement.value:.1f}" in body
        assert f"{comparison.kappa.value:.3f}" in body and f"{comparison.auc.value:.3f}" in body
        assert "human ceiling (3 annotators, pairs)" in body
        assert "judge No" in body and "judge Yes" in body and "precision" in body
        assert "human majority ties among the judged items: 1" in body
        panel.show(None)
        await pilot.pause()
        assert not panel.display


async def test_panel_says_why_there_is_no_comparison(tmp_path: Path) -> None:
    report = _report(tmp_path, template="likert-1to5")
    app = PanelApp()
    async with app.run_test() as pilot:
        panel = app.query_one(LabelAgreementPanel)
        panel.show(report)
        await pilot.pause()
        body = static_text(app.query_one("#label-agreement-body", Static))
        assert report.reason and "label-choice" in report.reason
        assert "No comparison:" in body
