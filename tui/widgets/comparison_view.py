"""Two runs side by side: how each judge's correlation moved, what changed in the setup and the prompt."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dialjudge.core.api.pair_runs import PAIR_COMPARISON_COLUMNS, pair_comparison_notes, pair_comparison_rows

from ..format import number_text
from .fit import FirstThatFits
from .paired_verdict import render_paired

if TYPE_CHECKING:
    from dialjudge.core.api import RunComparison

SYMBOLS = {"pearson": "r", "spearman": "ρ", "kendall": "τ"}
#: A change smaller than this is shown without colour (noise at these sample sizes).
NOTABLE_CHANGE = 0.01


def change_text(change: float | None) -> Text:
    if change is None:
        return Text("–", style="dim")
    style = "green" if change >= NOTABLE_CHANGE else "red" if change <= -NOTABLE_CHANGE else "dim"
    return Text(f"{change:+.3f}", style=style)


def diff_line(line: str) -> Text:
    """A unified-diff line coloured as in a terminal diff."""
    if line.startswith(("+++", "---")):
        return Text(line, style="bold")
    if line.startswith("@@"):
        return Text(line, style="cyan")
    if line.startswith("+"):
        return Text(line, style="green")
    if line.startswith("-"):
        return Text(line, style="red")
    return Text(line, style="dim")


def render_comparison(comparison: RunComparison) -> RenderableType:
    a, b = comparison.run_a, comparison.run_b
    parts: list[RenderableType] = [Text(f"A = run {a}, B = run {b} on {comparison.dataset}", style="bold")]
    if comparison.on_pairs:
        # Runs that judged pairs: the verdicts on the pairs both judged, as `runs compare` prints them.
        parts.append(_pair_verdicts(comparison))
    else:
        parts.append(Text(f"Correlation with the human labels per judge, quality and subset; Δ = run {b} − run {a}; "
                          "n: items scored in each run.", style="dim"))
        # Side by side where the width allows; narrower (80 columns), one row per coefficient: no number is cut.
        parts.append(FirstThatFits(lambda: _delta_table(comparison), lambda: _long_delta_table(comparison))
                     if comparison.deltas else _delta_table(comparison))
    if comparison.paired:
        parts += [Text(""), render_paired(comparison.paired)]
    parts.append(Text("\nConfiguration changes", style="bold"))
    if comparison.config_changes:
        changes = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
        changes.add_column("setting", no_wrap=True)
        changes.add_column(f"run {a}", style="red")
        changes.add_column(f"run {b}", style="green")
        for key, before, after in comparison.config_changes:
            changes.add_row(key, _value_text(before), _value_text(after))
        parts.append(changes)
    else:
        parts.append(Text("None besides the prompt.", style="dim"))

    parts.append(Text("\nPrompt diff (template and persona texts)", style="bold"))
    if comparison.prompt_diff:
        parts += [diff_line(line) for line in comparison.prompt_diff]
    else:
        parts.append(Text("The two runs used the same template and personas.", style="dim"))
    return Group(*parts)


def _pair_verdicts(comparison: RunComparison) -> RenderableType:
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for name in PAIR_COMPARISON_COLUMNS:
        table.add_column(name, justify="left" if name == "judge" else "right", overflow="fold")
    for row in pair_comparison_rows(comparison.pair_verdicts):
        table.add_row(*row)
    lines = [Text(test.verdict()) for test in comparison.pair_verdicts] or [Text("Neither run has a judge.")]
    notes = [Text(f"• {note}", style="dim") for note in pair_comparison_notes()]
    return Group(Text("Agreement with the humans' preference on the pairs both judged", style="dim"), table,
                 *lines, *notes)


def _long_delta_table(comparison: RunComparison) -> RenderableType:
    """One row per judge, quality, subset and coefficient: run A, run B and the change."""
    a, b = comparison.run_a, comparison.run_b
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for name in ("judge", "quality", "subset", ""):
        table.add_column(name, overflow="fold")
    table.add_column(f"n {a}/{b}", justify="right", no_wrap=True)
    for header in (f"run {a}", f"run {b}", "Δ"):
        table.add_column(header, justify="right", no_wrap=True, min_width=6)
    for d in comparison.deltas:
        table.add_row(d.evaluator, d.quality, d.subset, SYMBOLS.get(d.coefficient, d.coefficient),
                      f"{d.n_before}/{d.n_after}", number_text(d.before), number_text(d.after),
                      change_text(d.change))
    return table


def _delta_table(comparison: RunComparison) -> RenderableType:
    """One row per judge, quality and subset; for each coefficient: run A, run B and the change."""
    if not comparison.deltas:
        return Text("Neither run has scores to correlate.", style="dim")
    rows: dict[tuple[str, str, str], dict[str, Any]] = {}
    coefficients: list[str] = []
    for d in comparison.deltas:
        rows.setdefault((d.evaluator, d.quality, d.subset), {})[d.coefficient] = d
        if d.coefficient not in coefficients:
            coefficients.append(d.coefficient)
    a, b = comparison.run_a, comparison.run_b
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for name in ("judge", "quality", "subset"):
        table.add_column(name, no_wrap=True)
    table.add_column(f"n {a}/{b}", justify="right", no_wrap=True)
    for c in coefficients:
        symbol = SYMBOLS.get(c, c)
        table.add_column(f"{symbol} {a}", justify="right", no_wrap=True)
        table.add_column(f"{symbol} {b}", justify="right", no_wrap=True)
        table.add_column(f"Δ{symbol}", justify="right", no_wrap=True)
    for (evaluator, quality, subset), by_coefficient in rows.items():
        first = next(iter(by_coefficient.values()))
        cells: list[Any] = [evaluator, quality, subset, f"{first.n_before}/{first.n_after}"]
        for c in coefficients:
            delta = by_coefficient.get(c)
            if delta is None:
                cells += ["", "", ""]
            else:
                cells += [number_text(delta.before), number_text(delta.after), change_text(delta.change)]
        table.add_row(*cells)
    return table


def _value_text(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "…"
