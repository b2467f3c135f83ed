"""What a dataset holds, as the Datasets screen shows it: counts, splits, qualities and the human ceiling."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dialjudge.core.api.datasets import MIN_SHARED_ITEMS
from dialjudge.core.api.types import bundled_path

if TYPE_CHECKING:
    from dialjudge.core.api import DatasetSummary
    from dialjudge.core.api.types import CeilingRow


def render_summary(summary: DatasetSummary, ceilings: Sequence[CeilingRow]) -> RenderableType:
    title = Text(summary.name, style="bold")
    if summary.illustrative:
        title.append("  illustrative data: explore the tool with it, draw no conclusions", style="yellow")
    parts: list[RenderableType] = [title]
    if summary.description:
        parts.append(Text(summary.description, style="dim"))
    if summary.source:
        parts.append(Text(f"source: {source_text(summary.source)}", style="dim"))
    if summary.column_map:
        parts.append(Text(f"columns mapped: {', '.join(summary.column_map)}", style="dim"))
    parts += [Text(""), _facts(summary), Text(""), Text("Qualities and the human ceiling", style="bold"),
              _qualities(summary, ceilings)]
    parts += [Text(line, style="dim") for line in _rests_on_lines(ceilings)]
    return Group(*parts)


def source_text(source: str) -> str:
    """Where the data came from; a bundled file is named as such, not by its install path."""
    from pathlib import Path

    path = Path(source)
    if path.parent == bundled_path(path.name).parent:
        return f"bundled with dialjudge ({path.name})"
    return source


def _facts(s: DatasetSummary) -> Table:
    table = Table(box=None, padding=(0, 1), show_header=False, show_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    levels = f"{s.turn_level} turn-level, {s.dialog_level} dialog-level" if s.dialog_level else "all turn-level"
    table.add_row("Items", f"{s.examples} in {s.groups} contexts ({levels})")
    refs = f"{s.with_references} with references"
    if s.references_as_candidates:
        refs += f"; {s.references_as_candidates} candidates are the reference itself"
    table.add_row("References", refs)
    table.add_row("Facts", f"{s.with_fact} items carry a fact")
    adversarial = f"adversarial {s.adversarial}"
    if s.adversarial_kinds:
        adversarial += " (" + ", ".join(f"{k} {n}" for k, n in sorted(s.adversarial_kinds.items())) + ")"
    table.add_row("Split", f"open {s.open_ended} · closed {s.closed_ended} · untagged {s.untagged} · {adversarial}")
    table.add_row("Systems", ", ".join(f"{name} {n}" for name, n in s.systems.items()))
    table.add_row("Languages", ", ".join(f"{name} {n}" for name, n in s.languages.items()))
    if s.left_out_text:
        table.add_row("Left out at load", Text(s.left_out_text, style="yellow"))
    return table


def _qualities(s: DatasetSummary, ceilings: Sequence[CeilingRow]) -> Table:
    by_key = {(row.quality, row.level): row for row in ceilings}
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    for name in ("quality", "level", "scale"):
        table.add_column(name, justify="left", no_wrap=True)
    for name in ("rated", "annotators", "missing", "LOO r", "LOO ρ", "pair ρ", "α"):
        table.add_column(name, justify="right", no_wrap=True)
    for q in s.qualities:
        row = by_key.get((q.name, q.level.value))
        ceiling = row.ceiling if row is not None else None
        alpha = ""
        if ceiling is not None and ceiling.alpha is not None and not math.isnan(ceiling.alpha):
            alpha = f"{ceiling.alpha:.2f} {ceiling.alpha_level}"
        table.add_row(
            q.name, q.level.value, q.scale_text, str(q.rated_items), str(q.annotators), str(q.missing_values),
            _coefficient(ceiling.pearson if ceiling else None), _coefficient(ceiling.spearman if ceiling else None),
            _coefficient(ceiling.pairwise_spearman.value if ceiling and ceiling.pairwise_spearman else None),
            alpha,
        )
    return table


def _rests_on_lines(ceilings: Sequence[CeilingRow]) -> list[str]:
    """Where a ceiling rests on fewer raters or items than the quality has (annotators sharing too few
    items are left out, core.stats.rater_pairs), one line that says on which; none where it rests on all."""
    lines = []
    for row in ceilings:
        c = row.ceiling
        basis = c.agreement_basis if c.agreement_basis is not None else c.loo_basis
        if not math.isnan(basis.value) and (basis.n_raters, basis.n_items) != (c.n_annotators, c.n_items):
            lines.append(f"{row.quality} ({row.level}): the ceiling rests on {basis.n_raters} of {c.n_annotators} "
                         f"raters and {basis.n_items} of {c.n_items} items (pairs of raters sharing fewer than "
                         f"{MIN_SHARED_ITEMS} items are left out)")
    return lines


def _coefficient(value: float | None) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.2f}"
