"""Label qualities in the terminal and in files: judges against the human majority, the ceiling."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from dialjudge.core.api import LabelReport
from dialjudge.core.api.formatting import LABEL_HEADER as HEADER
from dialjudge.core.api.formatting import (
    confusion_rows,
    tie_lines,
    to_csv,
    to_json,
    to_jsonl,
)
from dialjudge.core.api.formatting import label_summary_rows as summary_rows

from . import render


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


def write_report(report: LabelReport, fmt: str, output: Path | None, *, title: str,
                 meta: dict[str, Any]) -> None:
    """The comparison in a file format (json, jsonl, csv, markdown, latex), to ``output`` or stdout."""
    meta = {**meta, "quality": report.quality, "tie_rule": report.tie_rule, "reason": report.reason,
            "notes": list(report.notes) + tie_lines(report)}
    if fmt == "json":
        text = to_json(file_records(report, fmt), meta=meta)
    elif fmt == "jsonl":
        text = to_jsonl(file_records(report, fmt))
    elif fmt == "csv":
        text = to_csv(file_records(report, fmt))
    else:
        text = render_text(report, fmt, title=title)
    if output:
        render.write_output(output, text)
        render.console(stderr=True).print(f"wrote {output}", markup=False)
    else:
        print(text, end="")


def file_records(report: LabelReport, fmt: str) -> list[dict[str, Any]]:
    """The report's records; in CSV the nested values (confusion matrix, per-label scores) as JSON text."""
    records = report.to_records()
    if fmt != "csv":
        return records
    return [{k: json.dumps(v, ensure_ascii=False) if isinstance(v, (list, dict)) else v for k, v in r.items()}
            for r in records]


def render_text(report: LabelReport, fmt: str, *, title: str) -> str:
    """Markdown or LaTeX tables of the report."""
    return _latex(report, title) if fmt == "latex" else _markdown(report, title)


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


