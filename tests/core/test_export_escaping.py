"""Exports print untrusted text (dataset replies, raw judge answers, judge and quality names) inertly:
no spreadsheet formula, no Markdown link or HTML tag, no LaTeX command, no broken table row."""

from __future__ import annotations

import csv
import io

import pytest

from dialjudge.core.report import (
    neutralize_formula,
    records_to_latex,
    records_to_markdown,
    to_csv,
    to_latex,
    to_markdown,
    wide_table,
)

#: Cells a spreadsheet would run as formulas (OWASP's CSV injection list), as a reply or raw answer.
FORMULAS = ["=HYPERLINK(\"http://evil.example\",\"click\")", "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1:A9)",
            "\t=1+1", "\r=1+1"]
HOSTILE = "<script>alert(1)</script> [click](javascript:alert(1)) **bold** | cell `code`\nsecond line"
TEX_HOSTILE = r"\input{/etc/passwd} 100% $x$ #1 a_b {c} ~ ^" + "\n\nnew paragraph"


def read_csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text, newline="")))


@pytest.mark.parametrize("text", FORMULAS)
def test_csv_cells_that_would_be_formulas_get_a_leading_quote(text: str) -> None:
    (row,) = read_csv(to_csv([{"item": "i1", "raw_output": text, "reply": text}]))
    # A carriage return is written as a line break, inside the quoted cell (a lone one would split the row).
    assert row["raw_output"] == row["reply"] == "'" + text.replace("\r", "\n")


def test_csv_keeps_numbers_and_plain_text_as_they_are() -> None:
    rows = read_csv(to_csv([{"r": -0.25, "r_text": "-0.250", "n": 3, "reply": "fine, thanks", "none": None,
                             "inner": "a=b+c", "plus": "+5"}]))
    assert rows == [{"r": "-0.25", "r_text": "-0.250", "n": "3", "reply": "fine, thanks", "none": "",
                     "inner": "a=b+c", "plus": "+5"}]
    for text in FORMULAS:
        assert neutralize_formula(text)[0] not in "=+-@\t\r"


def test_csv_header_names_from_data_are_neutralised_too() -> None:
    # A quality or judge name becomes a column name in wide exports.
    (row,) = read_csv(to_csv([{"=cmd|'/C calc'!A0": 1}]))
    assert list(row) == ["'=cmd|'/C calc'!A0"]


def test_a_carriage_return_in_a_reply_never_splits_the_row() -> None:
    rows = read_csv(to_csv([{"item": "i1", "reply": "one\rtwo\r\nthree"}, {"item": "i2", "reply": "x"}]))
    assert [r["item"] for r in rows] == ["i1", "i2"] and rows[0]["reply"] == "one\ntwo\nthree"


def test_markdown_prints_links_html_and_pipes_as_text_on_one_line() -> None:
    text = records_to_markdown([{"item": "i1", "raw_output": HOSTILE}], ["item", "raw_output"], title="run <1>")
    lines = text.splitlines()
    assert lines[0] == "**run &lt;1&gt;**"
    row = lines[4]
    assert len(lines) == 5  # the line break inside the answer did not start a new row
    assert "<script>" not in text and "&lt;script&gt;" in row
    assert "](javascript" not in row and r"\[click\]\(javascript:alert\(1\)\)" in row
    assert r"\*\*bold\*\*" in row and r"\`code\`" in row
    assert row.count(" | ") == 1 and r"\|" in row  # exactly two cells: the escaped pipe split nothing


def test_markdown_agreement_table_escapes_evaluator_names_and_notes() -> None:
    records = [{"evaluator": "<img src=x onerror=alert(1)>", "quality": "[q](http://x)", "subset": "all",
                "level": "turn", "n": 10, "excluded": 0, "failed": 0, "pearson": 0.5, "pearson_p": 0.01,
                "pearson_lo": 0.4, "pearson_hi": 0.6}]
    table = wide_table(records, title="t", coefficients=("pearson",))
    table.notes.append("note about <b>judge</b>")
    text = to_markdown(table)
    assert "<img" not in text and "<b>" not in text and "](http" not in text
    assert "&lt;img src=x onerror=alert\\(1\\)&gt;" in text


def test_latex_prints_commands_as_text_and_keeps_each_row_on_one_line() -> None:
    text = records_to_latex([{"item": "i1", "raw_output": TEX_HOSTILE}], ["item", "raw_output"], title="a & b")
    row = next(line for line in text.splitlines() if line.startswith("i1"))
    assert r"\input" not in text.replace(r"\textbackslash{}input", "")
    assert r"\textbackslash{}input\{/etc/passwd\} 100\% \$x\$ \#1 a\_b \{c\}" in row
    assert "new paragraph" in row and "\n\n" not in text
    assert r"\caption{a \& b}" in text


def test_latex_agreement_table_escapes_names() -> None:
    records = [{"evaluator": r"judge\write18{rm}", "quality": "q_1 & 2", "subset": "all", "level": "turn",
                "n": 10, "excluded": 0, "failed": 0, "pearson": 0.5, "pearson_p": 0.01}]
    text = to_latex(wide_table(records, title="t", coefficients=("pearson",)))
    assert r"\write18" not in text and r"judge\textbackslash{}write18\{rm\}" in text
    assert r"q\_1 \& 2" in text
