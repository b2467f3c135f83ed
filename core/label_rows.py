"""A label comparison as rows of text, the same in the terminal, in files and in the app."""

from __future__ import annotations

import math

from .judges.post_run.labels import LabelReport
from .stats.label_agreement import EXCLUSION_REASONS, Estimate, LabelComparison

HEADER = ["evaluator", "n", "excluded", "% agreement", "Cohen's κ", "α (+ judge)", "ROC-AUC"]


def estimate_text(e: Estimate | None, *, percent: bool = False, with_ci: bool = True) -> str:
    if e is None or not e.defined:
        return "–"
    scale = 100.0 if percent else 1.0
    digits = ".1f" if percent else ".3f"
    text = f"{e.value * scale:{digits}}"
    if with_ci and not math.isnan(e.low):
        text += f" [{e.low * scale:{digits}}, {e.high * scale:{digits}}]"
    return text


def summary_rows(report: LabelReport, *, with_ci: bool = True) -> list[list[str]]:
    rows = []
    for c in report.comparisons:
        rows.append([c.evaluator, str(c.n), exclusions_text(c),
                     estimate_text(c.percent_agreement, percent=True, with_ci=with_ci),
                     estimate_text(c.kappa, with_ci=with_ci), estimate_text(c.alpha, with_ci=with_ci),
                     estimate_text(c.auc, with_ci=with_ci) + (f" (n {c.n_auc})" if c.auc and c.auc.defined
                                                             and c.n_auc != c.n else "")])
    ceiling = report.ceiling
    rows.append([f"human ceiling ({ceiling.annotators_text} annotators, pairs)" if not ceiling.aggregate_only
                 else f"human ceiling ({ceiling.annotators_text})", str(ceiling.n_items), "–",
                 _plain(ceiling.pairwise_agreement, percent=True), _plain(ceiling.pairwise_kappa),
                 estimate_text(Estimate(ceiling.alpha, ceiling.alpha_low, ceiling.alpha_high), with_ci=with_ci)
                 + (" (annotators)" if not math.isnan(ceiling.alpha) else ""), "–"])
    if ceiling.per_annotator:
        ns = [a.n for a in ceiling.per_annotator]
        rows.append(["annotator vs majority of the others (mean)", f"{min(ns)}–{max(ns)}" if min(ns) != max(ns)
                     else str(ns[0]), "–", _plain(ceiling.vs_majority_agreement, percent=True),
                     _plain(ceiling.vs_majority_kappa), "–", "–"])
    return rows


def exclusions_text(c: LabelComparison) -> str:
    parts = [f"{c.exclusions[r]} {r.replace('_', ' ')}" for r in EXCLUSION_REASONS if c.exclusions.get(r)]
    return str(c.excluded) + (f" ({', '.join(parts)})" if parts else "")


def confusion_rows(c: LabelComparison) -> list[list[str]]:
    rows = []
    for label, counts, score in zip(c.labels, c.confusion, c.per_label, strict=True):
        rows.append([f"human {label}", *map(str, counts), estimate_text(score.recall, with_ci=True)])
    rows.append(["precision", *[estimate_text(s.precision, with_ci=True) for s in c.per_label], ""])
    return rows


def tie_lines(report: LabelReport) -> list[str]:
    out = []
    for c in report.comparisons[:1]:
        kept = f"{c.n_ties_kept} kept, {c.n_ties - c.n_ties_kept} left out" if c.n_ties else "none"
        out.append(f"human majority ties among the judged items: {c.n_ties} ({kept}; rule {c.tie_rule.value})")
    return out


def _plain(x: float, *, percent: bool = False) -> str:
    if x is None or math.isnan(x):
        return "–"
    return f"{100 * x:.1f}" if percent else f"{x:.3f}"
