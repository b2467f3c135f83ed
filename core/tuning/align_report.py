"""What ``dialjudge align`` reports: the winner beside the starting judge on held-out contexts that
no correction touched, the paired verdict with its CI, and the overfitting gap.

The search-split agreement is each variant's Spearman correlation with the user's labels on the
corrected items (what chose the winner); the held-out agreement is its correlation with the
dataset's human ratings on the untouched contexts. Their difference, the gap, is how much of the
search-split agreement was fitting the corrections rather than judging better.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..format import number_text
from ..report import records_to_markdown, to_csv
from ..stats.paired import verdict_line
from .align import START, Corrections, align_verdict
from .report import TuningReport

FORMATS = ("markdown", "json", "csv")
COLUMNS = ("variant", "search_split", "held_out", "ci_low", "ci_high", "gap", "items", "contexts")


@dataclass(frozen=True)
class AlignReport:
    run_id: int
    corrections: Corrections
    tuning: TuningReport
    #: Corrected items the search judged (labels on items of the run) and labels left out (not items of it).
    n_labelled: int
    n_unknown_labels: int = 0
    #: Variants not proposed, each with why.
    skipped: tuple[str, ...] = ()
    #: Where the corrections, the winner's template and this report were stored (None: not stored).
    record_path: str | None = None
    template_path: str | None = None
    winner_template: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def winner(self) -> str:
        return self.tuning.winner

    @property
    def verdict(self) -> str:
        return align_verdict(self.tuning.paired, self.tuning.coefficient)

    def _search_score(self, variant: str) -> float | None:
        return next((s.score for s in self.tuning.leaderboard if s.variant == variant), None)

    def records(self) -> list[dict[str, Any]]:
        """The held-out rows (the winner and the starting judge), as the tables and exports show them."""
        out = []
        for r in self.tuning.heldout_records():
            out.append({"variant": r["variant"], "search_split": r["tuning"], "held_out": r["held_out"],
                        "ci_low": r["ci_low"], "ci_high": r["ci_high"], "gap": r["gap"], "items": r["items"],
                        "contexts": r["contexts"], "winner": r["winner"], "start": r["variant"] == START})
        return out

    def search_records(self) -> list[dict[str, Any]]:
        return [{"variant": s.variant, "search_split": s.score, "items": s.n_items,
                 "settings": self.tuning.variant(s.variant).describe()} for s in self.tuning.leaderboard]

    def summary_lines(self) -> list[str]:
        t, c = self.tuning, self.corrections
        lines = [
            f"Aligned run {self.run_id}'s judge to {self.n_labelled} corrections ({c.source}; digest {c.digest}"
            + (f"; {len(c.notes)} notes" if c.notes else "") + ")"
            + (f"; {self.n_unknown_labels} labels left out: not items of the run" if self.n_unknown_labels else "")
            + ".",
            f"Search split: the {len(t.split.tuning)} contexts the corrections touch (only the corrected items "
            f"judged, against your labels). Held out: the {len(t.split.heldout)} contexts no correction touched "
            f"({t.heldout_items} items, against the dataset's {t.quality} ratings).",
            f"{len(t.variants) - 1} proposed variants; winner (the best {t.coefficient} with your labels among "
            f"them): {t.winner}; compared with the starting judge ({START}, search split "
            f"{number_text(self._search_score(START))}).",
        ]
        for h in t.heldout:
            role = "winner" if h.variant == t.winner else "starting judge"
            lines.append(f"Held-out {t.coefficient} of the {role} {h.variant}: {h.heldout_text()}; search split "
                         f"{number_text(h.tuning)}, overfitting gap (search split − held-out) "
                         f"{number_text(h.gap, signed=True)}.")
        if t.paired is not None:
            lines.append(f"Verdict: {self.verdict}. " + verdict_line(t.paired, t.coefficient))
        else:
            lines.append(f"Verdict: {self.verdict}. There was no held-out comparison to make.")
        lines += [f"Not proposed: {s}." for s in self.skipped]
        lines += list(self.notes)
        if self.record_path:
            lines.append(f"Corrections, notes and the winner's template stored in {self.record_path}.")
        if self.template_path:
            lines.append(f"Winner's template saved as {self.template_path}.")
        return lines

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run_id, "verdict": self.verdict, "winner": self.winner,
                "corrections": self.corrections.to_dict(), "n_labelled": self.n_labelled,
                "n_unknown_labels": self.n_unknown_labels, "skipped": list(self.skipped),
                "heldout": self.records(), "search": self.search_records(),
                "paired": self.tuning.paired.to_records() if self.tuning.paired is not None else None,
                "split": self.tuning.split.to_dict(), "winner_template": self.winner_template,
                "template_path": self.template_path, "search_report": self.tuning.to_dict()}


def render_align(report: AlignReport, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        return to_csv(report.records())
    if fmt != "markdown":
        raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    rows = [{k: number_text(v, signed=k == "gap") if isinstance(v, float) or v is None else v
             for k, v in r.items()} for r in report.records()]
    return ("\n".join(f"- {line}" for line in report.summary_lines()) + "\n\n"
            + records_to_markdown(rows, COLUMNS, title="Held-out (95% CI over contexts)") + "\n")
