"""Label qualities in the terminal and in files: judges against the human majority, the ceiling."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Sequence

from rich.console import Console
from rich.markup import escape

from dialjudge.core.judges.labels import LabelReport
from dialjudge.core.report import to_csv, to_json, to_jsonl
from dialjudge.core.stats.label_agreement import EXCLUSION_REASONS, Estimate, LabelComparison

from . import render

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
                 _plain(ceiling.alpha) + (" (annotators)" if not math.isnan(ceiling.alpha) else ""), "–"])
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
    for label, counts, score in zip(c.labels, c.confusion, c.per_label):
        rows.append([f"human {label}", *map(str, counts), estimate_text(score.recall, with_ci=True)])
    rows.append(["precision", *[estimate_text(s.precision, with_ci=True) for s in c.per_label], ""])
    return rows


def print_report(con: Console, report: LabelReport, *, title: str, warnings: Sequence[str] = ()) -> None:
    if report.reason:
        con.print(f"[yellow]No comparison with the human labels of {report.quality!r}: "
                  f"{escape(report.reason)}[/yellow]")
    con.print(render.plain_table(f"{title} — {report.quality} (vs the human majority label)", HEADER,
                                 summary_rows(report), right=HEADER[1:]))
    for c in report.comparisons:
        if c.n:
            con.print(render.plain_table(
                f"Confusion matrix — {c.evaluator} (rows: human majority, columns: judge)",
                ["", *[f"judge {label}" for label in c.labels], "recall"], confusion_rows(c),
                right=[f"judge {label}" for label in c.labels] + ["recall"]))
    lines = list(report.notes) + tie_lines(report)
    first = report.comparisons[0] if report.comparisons else None
    if first is not None:
        lines.append(f"[low, high]: bootstrap {int(first.confidence * 100)}% percentile CI over {first.n_boot} resamples of "
                     f"contexts (seed {first.seed})" if first.n_boot else "no confidence intervals (--bootstrap 0)")
    lines.append("α (+ judge): Krippendorff's α (nominal) of the annotators with the judge as one more rater; "
                 "the ceiling's α is the annotators' alone")
    lines.extend(report.ceiling.reasons)
    for c in report.comparisons:
        lines.extend(f"{c.evaluator}: {r}" for r in c.reasons)
    render.print_notes(con, lines)
    for warning in warnings:
        con.print(f"[yellow]warning: {escape(warning)}[/yellow]")


def tie_lines(report: LabelReport) -> list[str]:
    out = []
    for c in report.comparisons[:1]:
        kept = f"{c.n_ties_kept} kept, {c.n_ties - c.n_ties_kept} left out" if c.n_ties else "none"
        out.append(f"human majority ties among the judged items: {c.n_ties} ({kept}; rule {c.tie_rule.value})")
    return out


def write_report(report: LabelReport, fmt: str, output: Path | None, *, title: str,
                 meta: dict[str, Any]) -> None:
    """The comparison in a file format (json, jsonl, csv, markdown, latex), to ``output`` or stdout."""
    records = report.to_records()
    meta = {**meta, "quality": report.quality, "tie_rule": report.tie_rule, "reason": report.reason,
            "notes": list(report.notes) + tie_lines(report)}
    if fmt == "json":
        text = to_json(records, meta=meta)
    elif fmt == "jsonl":
        text = to_jsonl(records)
    elif fmt == "csv":
        text = to_csv([{k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v
                        for k, v in r.items()} for r in records])
    elif fmt == "latex":
        text = _latex(report, title)
    else:
        text = _markdown(report, title)
    if output:
        render.write_output(output, text)
        render.console(stderr=True).print(f"wrote {output}", markup=False)
    else:
        print(text, end="")


def _markdown(report: LabelReport, title: str) -> str:
    def row(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    lines = [f"**{title} — {report.quality}**", "", row(HEADER), row(["---"] * len(HEADER))]
    lines += [row(r) for r in summary_rows(report)]
    for c in report.comparisons:
        if c.n:
            head = ["", *[f"judge {label}" for label in c.labels], "recall"]
            lines += ["", f"**Confusion matrix — {c.evaluator}**", "", row(head), row(["---"] * len(head))]
            lines += [row(r) for r in confusion_rows(c)]
    notes = ([report.reason] if report.reason else []) + list(report.notes) + tie_lines(report)
    lines += [""] + [f"- {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _latex(report: LabelReport, title: str) -> str:
    def tex(text: str) -> str:
        return "".join({"&": r"\&", "%": r"\%", "_": r"\_", "#": r"\#", "–": "--", "κ": r"$\kappa$",
                        "α": r"$\alpha$"}.get(ch, ch) for ch in text)

    lines = [r"\begin{table}", r"\centering", f"\\caption{{{tex(title)} -- {tex(report.quality)}}}",
             r"\begin{tabular}{l" + "r" * (len(HEADER) - 1) + "}", r"\toprule",
             " & ".join(tex(h) for h in HEADER) + r" \\", r"\midrule"]
    lines += [" & ".join(tex(c) for c in r) + r" \\" for r in summary_rows(report, with_ci=True)]
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def _plain(x: float, *, percent: bool = False) -> str:
    if x is None or math.isnan(x):
        return "–"
    return f"{100 * x:.1f}" if percent else f"{x:.3f}"
