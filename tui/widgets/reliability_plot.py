"""A reliability diagram in the terminal, with ECE and Brier score.

Renders a :class:`~dialjudge.core.stats.calibration.Calibration`: one row per
bin of predicted probability, a bar of the observed rate of positives beside a
marker at the bin's mean prediction (a calibrated judge's bar ends at its
marker), and the bin's item count.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text
from textual.widgets import Static

if TYPE_CHECKING:
    from dialjudge.core.api.types import Calibration

BAR_WIDTH = 30


def render_reliability(calibration: Calibration, *, title: str = "Reliability") -> RenderableType:
    lines: list[RenderableType] = [Text(
        f"{title}: ECE {calibration.ece:.3f} · Brier {calibration.brier:.3f} · n {calibration.n}"
        + (f" ({calibration.n_excluded} left out)" if calibration.n_excluded else ""), style="bold")]
    for b in calibration.bins:
        label = f"{b.low:.1f}–{b.high:.1f} "
        if not b.n:
            lines.append(Text(label + "·".ljust(BAR_WIDTH) + "   n 0", style="dim"))
            continue
        bar = ["█" if k < round(b.observed_rate * BAR_WIDTH) else " " for k in range(BAR_WIDTH)]
        marker = min(BAR_WIDTH - 1, int(b.mean_predicted * BAR_WIDTH))
        bar[marker] = "│"
        lines.append(Text(f"{label}{''.join(bar)} {b.observed_rate:5.2f} n {b.n}"))
    lines.append(Text("bar: observed rate of positives; │: mean predicted probability", style="dim"))
    return Group(*lines)


class ReliabilityPlot(Static):
    """Shows one calibration; ``show`` replaces it."""

    DEFAULT_CSS = "ReliabilityPlot { height: auto; }"
    calibration: Calibration | None = None
    calibrations: Sequence[Calibration] = ()

    def show(self, calibration: Calibration, *, title: str = "Reliability") -> None:
        self.calibration = calibration
        self.calibrations = [calibration]
        self.update(render_reliability(calibration, title=title))

    def show_many(self, plots: Sequence[tuple[Calibration, str]]) -> None:
        """Several diagrams one under the other (one per probability judge), each with its title."""
        self.calibrations = [calibration for calibration, _ in plots]
        self.calibration = self.calibrations[0] if self.calibrations else None
        self.update(Group(*(render_reliability(c, title=title) for c, title in plots)))
