"""What a tuning search reports: the tuning leaderboard, the finalists on held-out data with
CIs, the winner against the starting prompt (paired), and the tuning-vs-held-out gap.

The winner is chosen on tuning data only (the top of the leaderboard); the held-out numbers
describe it and never pick it, so they are an honest estimate of how it does on new contexts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..format import number_text
from ..report import records_to_markdown, to_csv
from ..stats.ceiling import HumanCeiling
from ..stats.correlation import CorrelationResult
from ..stats.paired import PairedComparison, verdict_line
from .halving import Round, Standing
from .space import Variant
from .split import ContextSplit

FORMATS = ("markdown", "json", "csv")
LEADERBOARD_COLUMNS = ("rank", "variant", "round", "contexts", "items", "tuning", "settings")
HELDOUT_COLUMNS = ("variant", "tuning", "held_out", "ci_low", "ci_high", "gap", "items", "contexts")


@dataclass(frozen=True)
class HeldoutResult:
    variant: str
    #: The variant's coefficient on the tuning sample of the last round it reached.
    tuning: float | None
    correlation: CorrelationResult
    coefficient: str
    run_id: int

    @property
    def heldout(self) -> float | None:
        value = self.correlation.coefficient(self.coefficient).value
        return None if value != value else value  # NaN -> None

    @property
    def ci(self) -> tuple[float | None, float | None]:
        c = self.correlation.coefficient(self.coefficient)
        return (None if c.ci_low != c.ci_low else c.ci_low, None if c.ci_high != c.ci_high else c.ci_high)

    def heldout_text(self) -> str:
        """The held-out coefficient with its CI and sample, as the report and the app print it."""
        low, high = self.ci
        ci = f" [{number_text(low)}, {number_text(high)}]" if low is not None and high is not None else ""
        if not ci and self.correlation.ci_reason:
            ci = f" ({self.correlation.ci_reason})"
        return f"{number_text(self.heldout)}{ci} (n = {self.correlation.n_items} items in {self.correlation.n_groups} contexts)"

    @property
    def gap(self) -> float | None:
        """Tuning minus held-out: how much the search's choice overfit the tuning sample."""
        if self.tuning is None or self.heldout is None:
            return None
        return self.tuning - self.heldout


@dataclass(frozen=True)
class TuningReport:
    dataset: str
    quality: str
    coefficient: str
    variants: tuple[Variant, ...]
    split: ContextSplit
    rounds: tuple[Round, ...]
    round_scores: tuple[dict[str, float | None], ...]
    leaderboard: tuple[Standing, ...]
    heldout: tuple[HeldoutResult, ...]
    winner: str
    baseline: str
    paired: PairedComparison | None
    #: Judgments the search needed (cached or not) and the most it was allowed (0: no limit).
    spent: int
    budget: int
    #: Requests actually sent to a model (the rest came from the store or its response cache).
    model_calls: int
    stop_reason: str
    heldout_items: int = 0
    run_ids: dict[str, list[int]] = field(default_factory=dict)
    #: The humans' agreement on the held-out items the finalists are compared on.
    ceiling: HumanCeiling | None = None

    def variant(self, name: str) -> Variant:
        return next(v for v in self.variants if v.name == name)

    def heldout_of(self, name: str) -> HeldoutResult | None:
        return next((h for h in self.heldout if h.variant == name), None)

    # -- records -----------------------------------------------------------------------------

    def leaderboard_records(self) -> list[dict[str, Any]]:
        return [{"rank": i + 1, "variant": s.variant, "round": s.round + 1, "contexts": s.n_contexts,
                 "items": s.n_items, "tuning": s.score, "settings": self.variant(s.variant).describe()}
                for i, s in enumerate(self.leaderboard)]

    def heldout_records(self) -> list[dict[str, Any]]:
        out = []
        for h in self.heldout:
            low, high = h.ci
            out.append({"variant": h.variant, "tuning": h.tuning, "held_out": h.heldout, "ci_low": low,
                        "ci_high": high, "gap": h.gap, "items": h.correlation.n_items,
                        "contexts": h.correlation.n_groups, "run": h.run_id,
                        "winner": h.variant == self.winner, "baseline": h.variant == self.baseline})
        return out

    def summary_lines(self) -> list[str]:
        budget = f"{self.spent} of {self.budget}" if self.budget else f"{self.spent} (no limit)"
        lines = [
            f"{len(self.variants)} variants on {self.dataset}, ranked by {self.coefficient} with the humans' "
            f"{self.quality}.",
            f"Split by context (seed {self.split.seed}): {len(self.split.tuning)} tuning contexts, "
            f"{len(self.split.heldout)} held-out contexts ({self.heldout_items} items); few-shot examples "
            f"come from the tuning part only.",
            f"Judgments: {budget}; {self.model_calls} sent to a model by this invocation, the rest reused from "
            f"the store. "
            f"Successive halving: {len(self.rounds)} rounds ({', '.join(self._round_text(r) for r in self.rounds)}); "
            f"stopped: {self.stop_reason}.",
            f"Winner (best on tuning): {self.winner}. Starting prompt: {self.baseline}.",
        ]
        win = self.heldout_of(self.winner)
        if win is not None:
            lines.append(f"Held-out {self.coefficient} of the winner: {win.heldout_text()}; tuning {number_text(win.tuning)}, "
                         f"gap (tuning − held-out) {number_text(win.gap, signed=True)}.")
        if self.ceiling is not None:
            lines.append(f"Human ceiling on those held-out items: {self.ceiling_text()}.")
        if self.paired is not None:
            lines.append("Winner vs starting prompt on held-out: " + verdict_line(self.paired, self.coefficient))
        elif self.winner == self.baseline:
            lines.append("The starting prompt won the search; there is nothing to compare it with.")
        return lines

    def ceiling_text(self) -> str:
        """The human ceiling's coefficient with its n, as the report and the app print it."""
        c = self.ceiling
        if c is None:
            return "–"
        # The same text as the app's panel and the command line: value [CI], or why there is no CI.
        shown = c.ci(self.coefficient)[0] == c.ci(self.coefficient)[0]
        note = f"; {c.ci_reason}" if not shown and c.ci_reason else ""
        return f"{self.coefficient} {c.text(self.coefficient)} ({c.n_text()}, leave-one-out{note})"

    @staticmethod
    def _round_text(r: Round) -> str:
        return f"{len(r.variants)} variants × {r.n_contexts} contexts"

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset, "quality": self.quality, "coefficient": self.coefficient,
            "winner": self.winner, "baseline": self.baseline, "spent": self.spent, "budget": self.budget,
            "model_calls": self.model_calls, "stop_reason": self.stop_reason, "split": self.split.to_dict(),
            "variants": [v.to_dict() for v in self.variants],
            "rounds": [{"round": r.index + 1, "contexts": r.n_contexts, "items": r.n_items, "cost": r.cost,
                        "scores": scores} for r, scores in zip(self.rounds, self.round_scores)],
            "leaderboard": self.leaderboard_records(),
            "heldout": self.heldout_records(),
            "paired": self.paired.to_records() if self.paired is not None else None,
            "run_ids": self.run_ids,
            "ceiling": self.ceiling.to_dict() if self.ceiling is not None else None,
        }


def render_report(report: TuningReport, fmt: str) -> str:
    """The report as markdown, json or csv (csv: the leaderboard and held-out rows, one table)."""
    if fmt == "json":
        return json.dumps(report.to_dict(), indent=2, ensure_ascii=False) + "\n"
    if fmt == "csv":
        rows = [{"table": "tuning", **r} for r in report.leaderboard_records()]
        rows += [{"table": "held-out", **r} for r in report.heldout_records()]
        return to_csv(rows)
    if fmt != "markdown":
        raise ValueError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")
    parts = ["\n".join(f"- {line}" for line in report.summary_lines()), "",
             records_to_markdown(_texts(report.leaderboard_records()), LEADERBOARD_COLUMNS,
                                 title=f"Tuning leaderboard ({report.coefficient})"), "",
             records_to_markdown(_texts(report.heldout_records()), HELDOUT_COLUMNS,
                                 title=f"Held-out ({report.coefficient}, 95% CI over contexts)")]
    return "\n".join(parts) + "\n"


def _texts(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: number_text(v, signed=k == "gap") if isinstance(v, float) else v for k, v in r.items()}
            for r in records]
