"""Each evaluator against the humans, drawn by matplotlib as inline SVG (no script, no fetched file).

One figure per evaluator, two panels on the 0-1 scale both are normalised to: the judge's score
against the pooled human label of each item, and the two distributions as histograms.

**Size budget.** A chart is at most :data:`CHART_BUDGET_BYTES` whatever the number of items: up to
:data:`SCATTER_LIMIT` items the scatter panel draws one marker each (about 100 bytes of SVG a point);
above it, a 2-D histogram of :data:`GRID` x :data:`GRID` cells embedded as one small PNG image
(``img-src data:`` in the page's policy), whose size does not grow with the items. Text stays text
(``svg.fonttype = "none"``), not glyph outlines. A run of twelve judges at 100,000 items therefore
carries at most 12 x 60 KB = 720 KB of charts, within the report's stated 1.5 MB for charts;
``tests/core/test_html_report.py`` and ``python -m bench --only report`` measure it.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:  # matplotlib loads when a chart is drawn, not when core is imported
    from matplotlib.axes import Axes

#: Items drawn as single markers; above it, a 2-D histogram.
SCATTER_LIMIT = 250
#: Cells per side of the 2-D histogram and bins of the histograms.
GRID = 40
BINS = 20
#: The most one chart may weigh, in bytes of SVG.
CHART_BUDGET_BYTES = 60_000
#: The most the charts of one report may weigh (twelve evaluators' worth, with room to spare).
CHARTS_BUDGET_BYTES = 1_500_000

JUDGE_COLOUR = "#2563eb"
HUMAN_COLOUR = "#6b7280"
INK = "#1f2937"
GRID_COLOUR = "#e5e7eb"

_STYLE: dict[str, Any] = {
    "svg.fonttype": "none",
    "svg.hashsalt": "dialjudge-report",
    "font.family": "sans-serif",
    "font.size": 8.5,
    "axes.edgecolor": "#9ca3af",
    "axes.labelcolor": INK,
    "axes.titlesize": 9,
    "axes.titleweight": "bold",
    "axes.titlecolor": INK,
    "xtick.color": "#4b5563",
    "ytick.color": "#4b5563",
    "axes.spines.top": False,
    "axes.spines.right": False,
}

_ID = re.compile(r'\bid="([^"]+)"')
_REFERENCE = re.compile(r'(url\(#|href="#)([^")]+)')
_METADATA = re.compile(r"\s*<metadata>.*?</metadata>", re.S)
_SIZE = re.compile(r'^(<svg[^>]*?)\s(?:width|height)="[^"]*"(?:\s(?:width|height)="[^"]*")?', re.S)


def paired_values(judge: Sequence[float | None], human: Sequence[float | None]) -> tuple[np.ndarray, np.ndarray]:
    """The items both scored: (human, judge) as float arrays, undefined values left out."""
    h = np.array([np.nan if v is None else v for v in human], dtype=float)
    j = np.array([np.nan if v is None else v for v in judge], dtype=float)
    keep = np.isfinite(h) & np.isfinite(j)
    return h[keep], j[keep]


def evaluator_chart(name: str, human: np.ndarray, judge: np.ndarray, *, chart_id: str) -> str:
    """One evaluator's SVG (scatter or 2-D histogram, and histograms), its ids prefixed with ``chart_id``
    so that several charts live in one page without clashing."""
    import matplotlib
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    n = len(human)
    with matplotlib.rc_context(_STYLE):  # type: ignore[arg-type]  # the stubs' keys are one Literal
        figure = Figure(figsize=(7.4, 2.8), layout="constrained")
        FigureCanvasSVG(figure)
        scatter, histogram = figure.subplots(1, 2, gridspec_kw={"width_ratios": (1, 1.25)})
        _draw_scatter(scatter, human, judge)
        _draw_histograms(histogram, human, judge, name)
        figure.suptitle(f"{name}  ·  n = {n:,}", x=0.01, ha="left", fontsize=9.5, fontweight="bold", color=INK)
        out = io.StringIO()
        figure.savefig(out, format="svg", metadata={"Date": None, "Creator": None})
    return inline_svg(out.getvalue(), chart_id)


def _draw_scatter(axes: Axes, human: np.ndarray, judge: np.ndarray) -> None:
    if len(human) <= SCATTER_LIMIT:
        axes.scatter(human, judge, s=9, color=JUDGE_COLOUR, alpha=0.45, linewidths=0)
        axes.set_title("judge vs humans (one dot an item)", loc="left")
    else:
        counts, _, _ = np.histogram2d(human, judge, bins=GRID, range=((0, 1), (0, 1)))
        shade = np.ma.masked_equal(np.log1p(counts.T), 0)
        axes.imshow(shade, origin="lower", extent=(0, 1, 0, 1), aspect="auto", cmap="Blues",
                    interpolation="nearest", vmin=0)
        axes.set_title("judge vs humans (darker: more items)", loc="left")
    axes.plot((0, 1), (0, 1), color=GRID_COLOUR, linewidth=0.8, zorder=0)
    axes.set_xlim(-0.02, 1.02)
    axes.set_ylim(-0.02, 1.02)
    axes.set_xlabel("human label (pooled, 0–1)")
    axes.set_ylabel("judge score (0–1)")


def _draw_histograms(axes: Axes, human: np.ndarray, judge: np.ndarray, name: str) -> None:
    edges = [k / BINS for k in range(BINS + 1)]
    axes.hist(human, bins=edges, color=HUMAN_COLOUR, alpha=0.35, label="humans")
    axes.hist(judge, bins=edges, histtype="step", color=JUDGE_COLOUR, linewidth=1.6, label=name)
    axes.set_title("distributions (items per bin)", loc="left")
    axes.set_xlim(0, 1)
    axes.set_xlabel("score (0–1)")
    axes.legend(frameon=False, loc="upper left")


def inline_svg(document: str, prefix: str) -> str:
    """matplotlib's SVG file as an element of a page: no XML prologue, ids prefixed, sized by CSS."""
    svg = document[document.index("<svg"):]
    svg = _METADATA.sub("", svg, count=1)
    svg = _ID.sub(lambda m: f'id="{prefix}-{m.group(1)}"', svg)
    svg = _REFERENCE.sub(lambda m: f"{m.group(1)}{prefix}-{m.group(2)}", svg)
    # The viewBox keeps the proportions; the page's CSS gives the width (100% of its box).
    svg = _SIZE.sub(r"\1", svg, count=1)
    return svg.replace("<svg ", '<svg role="img" ', 1).strip()
