"""How much probability a run's answers put on valid answers: one line per judge for `runs show`.

A probability-mode judgment records the mass its valid answers hold at the answer position
(core.judges.run.scoring); this sums a run's up so that a judge answering something else most of
the time is seen at once, and says where the masses are only lower bounds (read from a
truncated top list) or where valid answers were missing from the top-K list.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from statistics import median

from ..prompts.templates import parse_template
from ..run.scoring import format_mass, is_low_mass_failure
from ..types import Judgment


@dataclass(frozen=True)
class MassSummary:
    """One judge's valid-answer masses over a run."""

    measured: int
    median: float
    least: float
    low_mass: int
    lower_bounds: int
    #: Judgments whose top-K list showed fewer valid answers than the template has.
    incomplete_top: int
    unmeasured: int

    def text(self) -> str:
        if not self.measured:
            return f"not measured ({self.unmeasured} judgments from before masses were recorded)"
        bound = ">=" if self.lower_bounds else ""
        parts = [f"median {bound}{format_mass(self.median)}, least {bound}{format_mass(self.least)} "
                 f"over {self.measured} judgments"]
        if self.low_mass:
            parts.append(f"{self.low_mass} not scored for too little valid mass")
        if self.lower_bounds:
            parts.append(f"{self.lower_bounds} read from a truncated top list (lower bounds: valid answers "
                         "below the list cannot be seen)")
        if self.incomplete_top:
            parts.append(f"{self.incomplete_top} with valid answers missing from the top-K list")
        if self.unmeasured:
            parts.append(f"{self.unmeasured} not measured")
        return "; ".join(parts)


def summarize_masses(judgments: Iterable[Judgment], n_choices: int | None = None) -> MassSummary | None:
    """The summary of one judge's judgments, or None when none is from a probability mode."""
    measured: list[float] = []
    low = bounds = incomplete = unmeasured = 0
    for j in judgments:
        if j.mode.value == "generate":
            continue
        if j.valid_mass is None:
            unmeasured += 1
            continue
        measured.append(j.valid_mass)
        low += is_low_mass_failure(j)
        bounds += j.mass_is_lower_bound
        if n_choices is not None and j.valid_in_top is not None and j.valid_in_top < n_choices:
            incomplete += 1
    if not measured and not unmeasured:
        return None
    return MassSummary(len(measured), median(measured) if measured else 0.0, min(measured, default=0.0), low,
                       bounds, incomplete, unmeasured)


def run_mass_lines(judgments: Iterable[Judgment], template_text: str = "", template_name: str = "",
                   top_k: int = 0) -> dict[str, str]:
    """``{"valid mass (JUDGE)": text}`` for each judge of a run that scored from probabilities.
    With top-K weighting (``top_k`` > 0) it also counts the judgments whose top-K list left
    valid answers out (the weighting renormalises over those it saw)."""
    n_choices = None
    if template_text and top_k > 0:
        try:
            n_choices = len(parse_template(template_text, template_name).output.choices) or None
        except Exception:  # a template this version no longer reads: the counts go without it
            n_choices = None
    by_judge: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_judge.setdefault(j.judge, []).append(j)
    lines = {}
    for judge, own in by_judge.items():
        summary = summarize_masses(own, n_choices)
        if summary is not None:
            lines[f"valid mass ({judge})"] = summary.text()
    return lines
