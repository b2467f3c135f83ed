"""The paired-verdict and reliability widgets, each mounted in a minimal App (Pilot)."""

from __future__ import annotations

import numpy as np
from textual.app import App, ComposeResult

from dialjudge.core.stats.calibration import reliability
from dialjudge.core.stats.paired import paired_comparison, verdict_line
from dialjudge.tui.widgets.paired_verdict import PairedVerdict, render_paired
from dialjudge.tui.widgets.reliability_plot import ReliabilityPlot, render_reliability


def comparison():
    rng = np.random.default_rng(0)
    human = {f"i{k}": float(rng.integers(1, 6)) for k in range(90)}
    groups = {i: f"c{k // 3}" for k, i in enumerate(human)}
    a = {i: h + rng.normal(0, 2.0) for i, h in human.items()}
    b = {i: h + rng.normal(0, 0.3) for i, h in human.items()}
    return paired_comparison(a, b, human, groups, name_a="run 1", name_b="run 2", quality="Overall", n_boot=300)


class Host(App[None]):
    def compose(self) -> ComposeResult:
        yield PairedVerdict(id="paired")
        yield ReliabilityPlot(id="reliability")


async def test_widgets_render_the_core_results() -> None:
    app = Host()
    result = comparison()
    calibration = reliability([0.1, 0.2, 0.8, 0.9, 0.7], [0, 0, 1, 1, 0], n_bins=5)
    async with app.run_test(size=(120, 40)) as pilot:
        paired = app.query_one(PairedVerdict)
        paired.show([result])
        plot = app.query_one(ReliabilityPlot)
        plot.show(calibration, title="p(yes) vs Understandable")
        await pilot.pause()
        assert paired.comparisons == [result]
        assert plot.calibration is calibration
        # The widgets show what the render functions draw, at full height.
        assert paired.size.height >= 6 and plot.size.height == 1 + 5 + 1
        text = _text(render_paired([result])) + _text(render_reliability(calibration, title="p(yes)"))
        assert verdict_line(result) in text
        assert "run 2 agrees better with humans on overall" in text
        assert f"ECE {calibration.ece:.3f}" in text and "Brier" in text


def _text(renderable) -> str:
    from rich.console import Console

    console = Console(width=200, record=True)
    console.print(renderable)
    return " ".join(console.export_text().split())
