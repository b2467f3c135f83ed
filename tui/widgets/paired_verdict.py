"""The paired comparison of two evaluators: Δr/Δρ/Δτ with their CIs and the verdict line.

Renders a :class:`~dialjudge.core.stats.paired.PairedComparison`; the Runs screen
mounts it beside the correlation deltas and the prompt diff, the Scores screen
when two evaluator columns are picked (there with Williams's test for Δr).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from dialjudge.core.api.formatting import (
    SYMBOLS,
    interval_text,
    verdict_line,
)
from dialjudge.core.format import number_text

if TYPE_CHECKING:
    from dialjudge.core.api.types import PairedComparison


def render_paired(comparisons: Sequence[PairedComparison], coefficient: str = "spearman", *,
                  williams: bool = False) -> RenderableType:
    """The Δ table and each comparison's verdict line; ``williams`` adds Williams's test for Δr."""
    if not comparisons:
        return Text("No paired comparison: the two sides share no judge or no scored item.", style="dim")
    table = Table(title="Paired comparison (CI: same context resamples for both; p: randomization test over contexts)",
                  title_justify="left", pad_edge=False)
    for name in ("quality", "subset", "Δ", "A", "B", "B − A", "95% CI", "p"):
        table.add_column(name, justify="left" if name in ("quality", "subset", "Δ") else "right")
    # Which side is A and which B, in the words the verdict lines use (one line per distinct pair).
    sides = dict.fromkeys((c.name_a, c.name_b) for c in comparisons)
    lines: list[RenderableType] = [Text(f"A = {name_a}, B = {name_b}", style="dim") for name_a, name_b in sides]
    lines.append(table)
    for c in comparisons:
        for method, d in c.deltas.items():
            style = ("green" if d.delta > 0 else "red") if c.decided(method) else None
            table.add_row(c.quality, c.subset, f"Δ{SYMBOLS[method]}", number_text(d.a), number_text(d.b),
                          Text(number_text(d.delta, signed=True), style=style or ""), interval_text(d), number_text(d.p_value))
        decided = c.decided(coefficient)
        if williams and c.williams is not None:
            lines.append(Text(williams_line(c), style="dim"))
        lines.append(Text(verdict_line(c, coefficient), style="bold" if decided else ""))
    return Group(*lines)


def williams_line(c: PairedComparison) -> str:
    """Williams's t for Δr, with what it assumes (independent items, unlike the context bootstrap)."""
    assert c.williams is not None
    w = c.williams
    p = "< 0.001" if w.p_value < 0.001 else f"= {number_text(w.p_value)}"
    return (f"Williams's test for Δr: t = {number_text(w.t, 2, signed=True)}, df = {w.df}, p {p} "
            f"(r between {c.name_a} and {c.name_b}: {number_text(w.r_between)}; assumes independent items, "
            "the bootstrap over contexts does not)")


class PairedVerdict(Static):
    """Shows paired comparisons; ``show`` replaces what is shown."""

    DEFAULT_CSS = "PairedVerdict { height: auto; }"

    def show(self, comparisons: Sequence[PairedComparison], coefficient: str = "spearman", *,
             williams: bool = False) -> None:
        self.comparisons = list(comparisons)
        self.update(render_paired(self.comparisons, coefficient, williams=williams))
