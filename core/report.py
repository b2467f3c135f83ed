"""Agreement tables as the papers print them, and their exports (CSV, JSON, Markdown, LaTeX).

The statistics layer yields flat records (one per evaluator x quality x level x
subset). A :class:`WideTable` lays them out like the papers' tables: one row per
evaluator, Pearson and Spearman (optionally Kendall) per quality, with n and
95% CIs. CSV and JSON keep the flat records, which are what scripts want.
"""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .metrics.signatures import library_versions, signature_for_label

COEFFICIENTS = ("pearson", "spearman", "kendall")
SYMBOL = {"pearson": "r", "spearman": "ρ", "kendall": "τ"}
LATEX_SYMBOL = {"pearson": r"$r$", "spearman": r"$\rho$", "kendall": r"$\tau$"}
FORMATS = ("table", "csv", "json", "markdown", "latex")


@dataclass(frozen=True)
class WideCell:
    value: float | None
    low: float | None = None
    high: float | None = None
    p: float | None = None

    def text(self, with_ci: bool = True, digits: int = 3) -> str:
        if self.value is None or math.isnan(self.value):
            return "–"
        out = f"{self.value:.{digits}f}"
        if self.p is not None and not math.isnan(self.p) and self.p < 0.05:
            out += "*"
        if with_ci and self.low is not None and self.high is not None and not math.isnan(self.low):
            out += f" [{self.low:.2f}, {self.high:.2f}]"
        return out


@dataclass
class WideRow:
    evaluator: str
    cells: dict[tuple[str, str], WideCell]  # (quality, coefficient) -> cell
    n: dict[str, int]
    excluded: dict[str, int]
    failed: dict[str, int]
    is_ceiling: bool = False


@dataclass
class WideTable:
    title: str
    qualities: list[str]
    coefficients: tuple[str, ...]
    rows: list[WideRow]
    notes: list[str] = field(default_factory=list)

    def header(self) -> list[str]:
        cols = ["Evaluator"]
        for q in self.qualities:
            cols.extend(f"{q} {SYMBOL[c]}" for c in self.coefficients)
        cols.extend(["n", "excluded", "failed"])
        return cols

    def text_rows(self, with_ci: bool = True) -> list[list[str]]:
        out = []
        for row in self.rows:
            line = [row.evaluator]
            for q in self.qualities:
                for c in self.coefficients:
                    cell = row.cells.get((q, c))
                    line.append(cell.text(with_ci) if cell else "–")
            line.append(_range_text(row.n.values()))
            line.append(_range_text(row.excluded.values()))
            line.append(_range_text(row.failed.values()))
            out.append(line)
        return out


def wide_table(records: Sequence[Mapping[str, Any]], *, title: str, level: str = "turn",
               subset: str = "all", coefficients: Sequence[str] = ("pearson", "spearman"),
               notes: Sequence[str] = ()) -> WideTable:
    """Pivot flat records of one level and subset into the papers' layout."""
    chosen = [r for r in records if r.get("level", level) == level and r.get("subset", subset) == subset]
    qualities: list[str] = []
    rows: dict[str, WideRow] = {}
    for rec in chosen:
        q = str(rec["quality"])
        if q not in qualities:
            qualities.append(q)
        name = str(rec["evaluator"])
        row = rows.get(name)
        if row is None:
            row = rows[name] = WideRow(name, {}, {}, {}, {}, is_ceiling=bool(rec.get("is_ceiling")))
        for c in coefficients:
            if c in rec:
                row.cells[(q, c)] = WideCell(_num(rec.get(c)), _num(rec.get(f"{c}_lo")), _num(rec.get(f"{c}_hi")),
                                         _num(rec.get(f"{c}_p")))
        row.n[q] = int(rec.get("n") or 0)
        row.excluded[q] = int(rec.get("excluded") or 0)
        row.failed[q] = int(rec.get("failed") or 0)
    ordered = [r for r in rows.values() if not r.is_ceiling] + [r for r in rows.values() if r.is_ceiling]
    return WideTable(title, qualities, tuple(coefficients), ordered, list(notes))


def to_csv(records: Sequence[Mapping[str, Any]]) -> str:
    buf = io.StringIO()
    fields: list[str] = []
    for rec in records:
        for k in rec:
            if k not in fields:
                fields.append(k)
    writer = csv.DictWriter(buf, fieldnames=fields, lineterminator="\n")
    # Column names can come from data too (a quality or judge name).
    csv.writer(buf, lineterminator="\n").writerow([neutralize_formula(k) for k in fields])
    for rec in records:
        writer.writerow({k: _csv_value(rec.get(k)) for k in fields})
    return buf.getvalue()


def to_jsonl(records: Sequence[Mapping[str, Any]]) -> str:
    """One JSON object per line (per-item judgments and reviews); NaN becomes null."""
    return "".join(json.dumps({k: _json_value(v) for k, v in rec.items()}, ensure_ascii=False) + "\n"
                   for rec in records)


def to_json(records: Sequence[Mapping[str, Any]], *, meta: Mapping[str, Any] | None = None) -> str:
    clean = [{k: _json_value(v) for k, v in rec.items()} for rec in records]
    return json.dumps({"meta": dict(meta or {}), "results": clean}, indent=2, ensure_ascii=False) + "\n"


def records_to_markdown(records: Sequence[Mapping[str, Any]], columns: Sequence[str], *, title: str) -> str:
    """Flat records (per-item judgments) as a Markdown table of ``columns``; one line per record."""
    lines = [f"**{_md_escape(title)}**", "", "| " + " | ".join(_md_escape(c) for c in columns) + " |",
             "|" + "|".join("---" for _ in columns) + "|"]
    for rec in records:
        lines.append("| " + " | ".join(_md_escape(_cell_text(rec.get(c))) for c in columns) + " |")
    return "\n".join(lines) + "\n"


def records_to_latex(records: Sequence[Mapping[str, Any]], columns: Sequence[str], *, title: str) -> str:
    """Flat records as a LaTeX tabular of ``columns`` (booktabs), every cell escaped."""
    out = [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{'l' * len(columns)}}}",
           r"\toprule", " & ".join(_tex(c) for c in columns) + r" \\", r"\midrule"]
    for rec in records:
        out.append(" & ".join(_tex(_cell_text(rec.get(c))) for c in columns) + r" \\")
    out.extend([r"\bottomrule", r"\end{tabular}", rf"\caption{{{_tex(title)}}}", r"\end{table}"])
    return "\n".join(out) + "\n"


def records_text(records: Sequence[Mapping[str, Any]], fmt: str, *, columns: Sequence[str], title: str,
                 meta: Mapping[str, Any] | None = None) -> str:
    """Flat records in one of the export formats: csv, json (with ``meta``), jsonl, markdown or latex
    (those two show ``columns`` under ``title``). The one dispatch the export commands share."""
    if fmt == "csv":
        return to_csv(records)
    if fmt == "json":
        return to_json(records, meta=meta)
    if fmt == "jsonl":
        return to_jsonl(records)
    if fmt == "markdown":
        return records_to_markdown(records, columns, title=title)
    if fmt == "latex":
        return records_to_latex(records, columns, title=title)
    raise ValueError(f"unknown export format {fmt!r}: use csv, json, jsonl, markdown or latex")


def _cell_text(value: Any) -> str:
    """One table cell on one line: no value is a dash, floats get 3 decimals, line breaks become spaces."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return " ".join(str(value).split())


def to_markdown(table: WideTable, *, with_ci: bool = True, provenance: Provenance | None = None) -> str:
    header = table.header()
    lines = [f"**{_md_escape(table.title)}**", "", "| " + " | ".join(_md_escape(h) for h in header) + " |",
             "|" + "|".join(["---"] + ["---:"] * (len(header) - 1)) + "|"]
    for line in table.text_rows(with_ci):
        # The evaluator's name is text from outside; the number cells are ours ("0.500* [0.40, 0.60]"),
        # kept readable in the Markdown source.
        cells = [_md_escape(line[0]), *(c.replace("|", "\\|") for c in line[1:])]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.extend(f"- {_md_escape(note)}" for note in table.notes)
    lines.append("- `*` p < 0.05; brackets: bootstrap 95% CI; n: items scored; excluded: missing score or human label.")
    if provenance is not None:
        lines.append(f"- versions: {_md_escape(provenance.versions_text())}")
        lines.extend(f"- signature: `{signature}`" for signature in provenance.signatures.values())
    return "\n".join(lines) + "\n"


def to_latex(table: WideTable, *, with_ci: bool = False, provenance: Provenance | None = None) -> str:
    cols = "l" + "r" * (len(table.qualities) * len(table.coefficients)) + "r"
    # LaTeX comments: kept with the table's source, invisible in the paper.
    out = [f"% {line}" for line in (provenance.lines() if provenance is not None else [])]
    out += [r"\begin{table}[t]", r"\centering", r"\small", rf"\begin{{tabular}}{{{cols}}}", r"\toprule"]
    top = ["Metrics"] + [rf"\multicolumn{{{len(table.coefficients)}}}{{c}}{{{_tex(q)}}}" for q in table.qualities] + [""]
    out.append(" & ".join(top) + r" \\")
    sub = [""] + [LATEX_SYMBOL[c] for _ in table.qualities for c in table.coefficients] + [r"$n$"]
    out.append(" & ".join(sub) + r" \\")
    out.append(r"\midrule")
    for row, line in zip(table.rows, table.text_rows(with_ci), strict=True):
        if row.is_ceiling:
            out.append(r"\midrule")
        cells = [_tex(line[0])] + [_tex(c) for c in line[1:-3]] + [_tex(line[-3])]
        out.append(" & ".join(cells) + r" \\")
    out.extend([r"\bottomrule", r"\end{tabular}", rf"\caption{{{_tex(table.title)}}}", r"\end{table}"])
    return "\n".join(out) + "\n"


@dataclass(frozen=True)
class Provenance:
    """How a table's numbers were made: library versions and each metric row's signature."""

    versions: dict[str, str]
    signatures: dict[str, str]  # evaluator label -> sacrebleu-style signature

    @classmethod
    def of(cls, records: Sequence[Mapping[str, Any]]) -> Provenance:

        signatures: dict[str, str] = {}
        for rec in records:
            label = str(rec.get("evaluator", ""))
            if label not in signatures:
                signature = signature_for_label(label)
                if signature is not None:
                    signatures[label] = signature
        return cls(library_versions(), signatures)

    def versions_text(self) -> str:
        return ", ".join(f"{name} {version}" for name, version in self.versions.items())

    def lines(self) -> list[str]:
        """``versions: ...`` then one ``signature`` line per metric."""
        return [f"versions: {self.versions_text()}", *(f"signature: {s}" for s in self.signatures.values())]

    def annotate(self, records: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The flat records with each metric row's signature and the versions (for CSV and JSON)."""
        versions = self.versions_text()
        return [{**rec, "signature": self.signatures.get(str(rec.get("evaluator", "")), ""), "versions": versions}
                for rec in records]


def render(records: Sequence[Mapping[str, Any]], fmt: str, *, title: str, level: str = "turn",
           subset: str = "all", coefficients: Sequence[str] = ("pearson", "spearman"),
           notes: Sequence[str] = (), meta: Mapping[str, Any] | None = None) -> str:
    """One exported table; every format records the library versions and the metrics' signatures."""
    provenance = Provenance.of(records)
    if fmt == "csv":
        return to_csv(provenance.annotate(records))
    if fmt == "json":
        return to_json(provenance.annotate(records), meta={
            **(meta or {}), "notes": list(notes), "versions": provenance.versions,
            "metric_signatures": provenance.signatures})
    table = wide_table(records, title=title, level=level, subset=subset, coefficients=coefficients, notes=notes)
    if fmt == "markdown":
        return to_markdown(table, provenance=provenance)
    if fmt == "latex":
        return to_latex(table, provenance=provenance)
    raise ValueError(f"unknown format {fmt!r} (choose from {', '.join(FORMATS[1:])})")


SPARK = " ▁▂▃▄▅▆▇█"


def sparkline(counts: Sequence[int]) -> str:
    """A histogram as one line of block characters; an empty bin is a dot, any non-empty one shows."""
    top = max(counts) if counts else 0
    if not top:
        return "·" * len(counts)
    return "".join(SPARK[max(1, round(c / top * (len(SPARK) - 1)))] if c else "·" for c in counts)


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _range_text(values: Iterable[int]) -> str:
    vals = sorted(set(values))
    if not vals:
        return "–"
    return str(vals[0]) if len(vals) == 1 else f"{vals[0]}–{vals[-1]}"


#: A cell starting with one of these is a formula to a spreadsheet (OWASP "CSV injection").
_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _csv_value(v: Any) -> Any:
    if isinstance(v, float) and math.isnan(v):
        return ""
    if v is None:
        return ""
    if isinstance(v, str):
        # A lone carriage return is no line end to the csv writer (ours is "\n"), so it would go
        # unquoted and split the row for every reader: written as "\n", the cell is quoted.
        return neutralize_formula(v).replace("\r\n", "\n").replace("\r", "\n")
    return v


def neutralize_formula(text: str) -> str:
    """``text`` safe to open in a spreadsheet: a leading ``'`` where it would start a formula.

    Dataset text and model answers are untrusted: ``=HYPERLINK(...)`` in a reply would run
    when the CSV is opened. A number written as text (``-0.25``) is left as it is.
    """
    if not text.startswith(_FORMULA_STARTS):
        return text
    try:
        float(text)
    except ValueError:
        return "'" + text
    return text


def _json_value(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


#: Markdown punctuation that could format, link or split a table cell; HTML is written as entities.
_MD_PUNCTUATION = frozenset("\\`*_{}[]()#|~!")
_MD_ENTITIES = {"<": "&lt;", ">": "&gt;", "&": "&amp;"}


def _md_escape(text: str) -> str:
    """``text`` printed literally in Markdown: on one line (a line break would end a table row),
    its punctuation escaped (a reply's ``[link](javascript:…)`` stays text, ``|`` never splits a cell,
    ``_`` around a judge label never turns it italic), its HTML tags shown, never rendered."""
    text = " ".join(text.split()) if ("\n" in text or "\r" in text) else text
    return "".join(_MD_ENTITIES.get(ch) or ("\\" + ch if ch in _MD_PUNCTUATION else ch) for ch in text)


_TEX = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
        "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}", "–": "--",
        "ρ": r"$\rho$", "τ": r"$\tau$"}


def _tex(text: str) -> str:
    # On one line: a blank line inside a tabular cell is a LaTeX error; control characters are dropped.
    text = " ".join(text.split()) if ("\n" in text or "\r" in text) else text
    return "".join(_TEX.get(ch, ch) for ch in text if ch >= " " or ch == "\t")
