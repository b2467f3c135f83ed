"""Writing :class:`~.judge_diagnostics.JudgeDiagnostics` as files: CSV tables, one JSON document, Markdown.

The run export (:mod:`.run_export`) writes these next to the agreement table:
the confusion matrices with κ / linear κ / quadratic κ, the reliability bins
with ECE and Brier score, and the inter-judge matrix. CSV holds one table per
file, so each part has its own; JSON and Markdown hold all of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from .judge_diagnostics import JudgeDiagnostics
from .report import _md_escape, to_csv, to_json

#: The formats diagnostics are written in.
DIAGNOSTICS_FORMATS = ("csv", "json", "markdown")


def csv_tables(d: JudgeDiagnostics) -> dict[str, str]:
    """File stem suffix -> CSV text, for the parts ``d`` has."""
    out: dict[str, str] = {}
    if d.confusion:
        out["confusion"] = to_csv([r for view in d.confusion for r in view.cell_records()])
        out["kappa"] = to_csv([view.summary_record() for view in d.confusion])
    if d.calibration:
        rows = []
        for view in d.calibration:
            summary = view.summary_record()
            rows += [{**record, "ece": summary["ece"], "brier": summary["brier"]} for record in view.bin_records()]
        out["calibration"] = to_csv(rows)
    if d.inter_judge is not None:
        out["interjudge"] = to_csv(d.inter_judge.to_records())
    return out


def json_document(d: JudgeDiagnostics, *, meta: Mapping[str, Any] | None = None) -> str:
    confusion = [{**view.summary_record(), "labels": [_label(v) for v in view.matrix.labels],
                  "rows": "judge", "columns": "human", "counts": [list(row) for row in view.matrix.counts]}
                 for view in d.confusion]
    calibration = [{**view.summary_record(), "bins": view.calibration.to_records()} for view in d.calibration]
    inter = None
    if d.inter_judge is not None:
        m = d.inter_judge
        inter = {"measure": m.measure, "judges": list(m.judges),
                 "values": [[None if math.isnan(v) else v for v in row] for row in m.values],
                 "n": [list(row) for row in m.n]}
    record = {"quality": d.quality, "confusion": confusion, "calibration": calibration, "inter_judge": inter,
              "notes": list(d.notes)}
    return to_json([record], meta=meta)


def markdown(d: JudgeDiagnostics, *, title: str) -> str:
    lines = [f"## {_md_escape(title)}", ""]
    if d.inter_judge is not None:
        m = d.inter_judge
        lines += [f"**Inter-judge agreement ({_md_escape(m.measure)} on items both scored)**", "",
                  "| judge × judge | " + " | ".join(_md_escape(j) for j in m.judges) + " |",
                  "|---|" + "---|" * len(m.judges)]
        for i, a in enumerate(m.judges):
            cells = [f"{_num(m.values[i][j])} (n={m.n[i][j]})" for j in range(len(m.judges))]
            lines.append(f"| {_md_escape(a)} | " + " | ".join(cells) + " |")
        lines.append("")
    for view in d.confusion:
        labels = [_md_escape(str(_label(v))) for v in view.matrix.labels]
        lines += [f"**{_md_escape(view.evaluator)} — {_md_escape(view.quality)}: rows judge, columns human**", "",
                  "| judge \\ human | " + " | ".join(labels) + " |", "|---|" + "---|" * len(labels)]
        for label, row in zip(labels, view.matrix.counts, strict=True):
            lines.append(f"| {label} | " + " | ".join(map(str, row)) + " |")
        lines += ["", f"n = {view.n} ({view.excluded} left out) · agreement {_pct(view.agreement)} · "
                      f"κ {_num(view.kappa)} · linear κ {_num(view.kappa_linear)} · "
                      f"quadratic κ {_num(view.kappa_quadratic)}", ""]
    for cal in d.calibration:
        c = cal.calibration
        lines += [f"**Reliability of {_md_escape(cal.evaluator)} — p({_label(cal.positive)}) on "
                  f"{_md_escape(cal.quality)}**", "", "| bin | n | mean predicted | observed rate |",
                  "|---|---|---|---|"]
        for b in c.bins:
            lines.append(f"| {b.low:.1f}–{b.high:.1f} | {b.n} | {_num(b.mean_predicted)} | {_num(b.observed_rate)} |")
        lines += ["", f"ECE {_num(c.ece)} · Brier {_num(c.brier)} (always the base rate: "
                      f"{_num(c.base_rate * (1 - c.base_rate))}) · n = {c.n} ({c.n_excluded} left out)", ""]
    lines += [f"*{_md_escape(note)}*" for note in d.notes]
    return "\n".join(lines).rstrip() + "\n"


def _label(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _num(value: float) -> str:
    return "–" if value is None or math.isnan(value) else f"{value:.3f}"


def _pct(value: float) -> str:
    return "–" if math.isnan(value) else f"{100 * value:.1f}%"
