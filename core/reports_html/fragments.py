"""Small pieces of escaped HTML: tables, key-value lists, notes, the agreement table."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..format import interval_text
from ..report import WideTable
from .escape import text


def table(columns: Sequence[str], rows: Iterable[Sequence[object]], *, numeric: Iterable[str] = (),
          table_id: str | None = None, caption: str | None = None) -> str:
    """A plain table of text cells (each escaped); ``numeric`` columns right-aligned."""
    right = set(numeric)
    head = "".join(f'<th scope="col"{_num(c in right)}>{text(c)}</th>' for c in columns)
    body = "".join("<tr>" + "".join(f"<td{_num(c in right)}>{text('–' if v is None else v)}</td>"
                                    for c, v in zip(columns, row)) + "</tr>" for row in rows)
    ident = f' id="{text(table_id)}"' if table_id else ""
    cap = f"<caption class=\"note\">{text(caption)}</caption>" if caption else ""
    return f'<div class="scroll"><table{ident}>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'


def _num(numeric: bool) -> str:
    return ' class="num"' if numeric else ""


def key_values(items: Mapping[str, object]) -> str:
    return '<dl class="kv">' + "".join(f"<dt>{text(k)}</dt><dd>{text('–' if v is None else v)}</dd>"
                                       for k, v in items.items()) + "</dl>"


def notes(lines: Iterable[str]) -> str:
    items = "".join(f"<li>{text(line)}</li>" for line in lines)
    return f'<ul class="notes">{items}</ul>' if items else ""


def paragraph(line: str, css: str = "note") -> str:
    return f'<p class="{css}">{text(line)}</p>'


def heading(title: str) -> str:
    return f"<h3>{text(title)}</h3>"


def agreement_table(table: WideTable, *, table_id: str) -> str:
    """A wide agreement table as the command line prints it (core.report.wide_table, cli/render.py): each
    coefficient's value with its p-marker, its bootstrap CI below it, then n, excluded and failed; the
    human ceiling's row in italics, last."""
    header = table.header()
    head = "".join(f'<th scope="col"{_num(i > 0)}>{text(c)}</th>' for i, c in enumerate(header))
    rows = []
    for row, cells in zip(table.rows, table.text_rows(with_ci=False)):
        out = [f'<th scope="row">{text(row.evaluator)}</th>']
        position = 1
        for q in table.qualities:
            for c in table.coefficients:
                cell = row.cells.get((q, c))
                ci = interval_text(cell.low, cell.high) if cell is not None else ""
                ci_html = f'<span class="ci">{text(ci)}</span>' if ci else ""
                out.append(f'<td class="num"><span class="value">{text(cells[position])}</span>{ci_html}</td>')
                position += 1
        out += [f'<td class="num">{text(v)}</td>' for v in cells[position:]]
        css = ' class="ceiling"' if row.is_ceiling else ""
        rows.append(f"<tr{css}>{''.join(out)}</tr>")
    return (f'<div class="scroll"><table class="agreement" id="{text(table_id)}" data-title="{text(table.title)}">'
            f"<caption class=\"note\">{text(table.title)}</caption><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table></div>")
