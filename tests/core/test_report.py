"""Agreement records laid out as the papers' tables, and their CSV, JSON, Markdown and LaTeX exports."""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

import pytest

from dialjudge.core.report import Provenance, WideCell, render, to_csv, to_json, to_latex, to_markdown, wide_table


def record(evaluator: str, quality: str, pearson: float, spearman: float, *, level: str = "turn",
           subset: str = "all", n: int = 300, excluded: int = 0, failed: int = 0, ceiling: bool = False,
           **extra: Any) -> dict[str, Any]:
    return {"evaluator": evaluator, "quality": quality, "level": level, "subset": subset,
            "pearson": pearson, "pearson_p": 0.001, "pearson_lo": pearson - 0.1, "pearson_hi": pearson + 0.1,
            "spearman": spearman, "spearman_p": 0.2, "spearman_lo": spearman - 0.1, "spearman_hi": spearman + 0.1,
            "n": n, "excluded": excluded, "failed": failed, "is_ceiling": ceiling, **extra}


RECORDS = [
    # The ceiling comes first here: the table must still print it last.
    record("human ceiling", "Overall", 0.9, 0.88, n=360, ceiling=True),
    record("human ceiling", "Engaging", 0.8, 0.79, n=360, ceiling=True),
    record("BLEU-4", "Overall", 0.2, 0.3, excluded=60),
    record("BLEU-4", "Engaging", 0.1, 0.25, n=290, excluded=70),
    record("my_judge", "Overall", 0.5, 0.45, failed=3),
    record("my_judge", "Engaging", float("nan"), float("nan")),
    record("BLEU-4", "Overall", -0.5, -0.5, level="system", n=5),
    record("BLEU-4", "Overall", 0.7, 0.7, subset="open", n=150),
]


def test_wide_table_pivots_one_level_and_subset() -> None:
    table = wide_table(RECORDS, title="t")
    assert table.qualities == ["Overall", "Engaging"]
    assert [r.evaluator for r in table.rows] == ["BLEU-4", "my_judge", "human ceiling"]
    assert table.rows[-1].is_ceiling and not table.rows[0].is_ceiling
    assert table.header() == ["Evaluator", "Overall r", "Overall ρ", "Engaging r", "Engaging ρ",
                              "n", "excluded", "failed"]

    bleu = table.rows[0]
    assert bleu.cells[("Overall", "pearson")].value == 0.2  # the turn-level, all-items value
    assert bleu.cells[("Overall", "spearman")] == WideCell(0.3, pytest.approx(0.2), pytest.approx(0.4), 0.2)
    assert bleu.n == {"Overall": 300, "Engaging": 290}

    text = table.text_rows()
    assert text[0] == ["BLEU-4", "0.200* [0.10, 0.30]", "0.300 [0.20, 0.40]", "0.100* [0.00, 0.20]",
                       "0.250 [0.15, 0.35]", "290–300", "60–70", "0"]
    assert text[1][3:5] == ["–", "–"]  # NaN prints as a dash
    assert text[1][-1] == "0–3"
    assert table.text_rows(with_ci=False)[0][1] == "0.200*"


def test_wide_table_other_level_subset_and_kendall() -> None:
    system = wide_table(RECORDS, title="t", level="system")
    assert [r.evaluator for r in system.rows] == ["BLEU-4"]
    assert system.text_rows(with_ci=False)[0][:3] == ["BLEU-4", "-0.500*", "-0.500"]

    open_only = wide_table(RECORDS, title="t", subset="open")
    assert open_only.rows[0].cells[("Overall", "pearson")].value == 0.7

    with_kendall = wide_table(RECORDS, title="t", coefficients=("pearson", "spearman", "kendall"))
    assert "Overall τ" in with_kendall.header()
    assert with_kendall.text_rows()[0][3] == "–"  # no kendall in the records


def test_csv_round_trips_the_records() -> None:
    text = to_csv(RECORDS)
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == len(RECORDS)
    assert list(rows[0]) == list(RECORDS[0])
    for original, row in zip(RECORDS, rows):
        for key, value in original.items():
            if isinstance(value, float) and math.isnan(value):
                assert row[key] == ""
            elif isinstance(value, bool):
                assert row[key] == str(value)
            elif isinstance(value, (int, float)):
                assert float(row[key]) == value  # floats are written exactly
            else:
                assert row[key] == value


def test_csv_header_is_the_union_of_keys_and_none_is_empty() -> None:
    text = to_csv([{"a": 1}, {"b": None, "a": 2}])
    assert text == "a,b\n1,\n2,\n"


def test_json_round_trips_with_nan_as_null() -> None:
    data = json.loads(to_json(RECORDS, meta={"dataset": "usr"}))
    assert data["meta"] == {"dataset": "usr"}
    assert len(data["results"]) == len(RECORDS)
    judge_engaging = data["results"][5]
    assert judge_engaging["pearson"] is None and judge_engaging["spearman"] is None
    assert data["results"][2] == RECORDS[2]
    assert json.loads(to_json([{"x": float("inf")}]))["results"] == [{"x": None}]


def test_markdown_has_a_header_row_and_escapes_cell_text() -> None:
    records = [record("judge|a_b", "Over|all", 0.5, 0.4), record("human ceiling", "Over|all", 0.9, 0.9, ceiling=True)]
    text = to_markdown(wide_table(records, title="usr_topical | all", notes=["a note"]))
    lines = text.splitlines()
    assert lines[0] == r"**usr\_topical \| all**"
    header, rule, first, last = lines[2], lines[3], lines[4], lines[5]
    assert header == r"| Evaluator | Over\|all r | Over\|all ρ | n | excluded | failed |"
    assert rule == "|---|---:|---:|---:|---:|---:|"
    assert first.startswith(r"| judge\|a\_b | 0.500* [0.40, 0.60] |")
    assert last.startswith("| human ceiling |")
    # Every row has as many unescaped separators as the header.
    unescaped = [line.replace(r"\|", "").count("|") for line in (header, rule, first, last)]
    assert len(set(unescaped)) == 1
    assert "- a note" in lines


def test_latex_escapes_special_characters_and_keeps_columns_aligned() -> None:
    records = [record("judge_x & 50%", "Uses_Knowledge", 0.5, 0.4),
               record("human ceiling", "Uses_Knowledge", 0.9, 0.9, ceiling=True)]
    text = to_latex(wide_table(records, title="USR #1: 100% of {items}"))
    assert r"\begin{tabular}{lrrr}" in text and r"\end{tabular}" in text
    assert r"judge\_x \& 50\%" in text
    assert r"\multicolumn{2}{c}{Uses\_Knowledge}" in text
    assert r"\caption{USR \#1: 100\% of \{items\}}" in text
    assert "judge_x" not in text and " & 50%" not in text
    body = [line for line in text.splitlines() if line.endswith(r"\\")]
    assert all(line.count(" & ") == 3 for line in body[2:])  # evaluator, 2 coefficients, n
    lines = text.splitlines()
    ceiling_at = next(i for i, line in enumerate(lines) if line.startswith("human ceiling"))
    assert lines[ceiling_at - 1] == r"\midrule"  # the ceiling is set apart, last
    assert lines[ceiling_at + 1] == r"\bottomrule"
    assert "[0.40" not in text  # CIs are left out of LaTeX by default


def test_latex_prints_missing_values_as_en_dash() -> None:
    text = to_latex(wide_table([record("j", "q", float("nan"), 0.1)], title="t"))
    assert r"j & -- & 0.100 & 300 \\" in text


def test_render_dispatches_on_format() -> None:
    provenance = Provenance.of(RECORDS)
    assert render(RECORDS, "csv", title="t") == to_csv(provenance.annotate(RECORDS))
    data = json.loads(render(RECORDS, "json", title="t", notes=["n1"], meta={"dataset": "d"}))
    assert data["meta"] == {"dataset": "d", "notes": ["n1"], "versions": provenance.versions,
                            "metric_signatures": provenance.signatures}
    assert render(RECORDS, "markdown", title="t").startswith("**t**")
    assert r"\begin{tabular}" in render(RECORDS, "latex", title="t", level="system")
    with pytest.raises(ValueError, match="unknown format 'html'"):
        render(RECORDS, "html", title="t")


def test_sparkline_shows_every_non_empty_bin() -> None:
    from dialjudge.core.report import sparkline

    assert sparkline([0, 1, 100, 50]) == "·▁█▄"
    assert sparkline([0, 0]) == "··"


def test_jsonl_is_one_object_per_line_with_nan_as_null() -> None:
    import json

    from dialjudge.core.report import to_jsonl

    text = to_jsonl([{"id": "a", "score": float("nan")}, {"id": "b", "note": "ü"}])
    lines = text.splitlines()
    assert [json.loads(line) for line in lines] == [{"id": "a", "score": None}, {"id": "b", "note": "ü"}]
    assert "ü" in text and text.endswith("\n")


METRIC_RECORDS = [record("BLEU-4", "Overall", 0.3, 0.2), record("METEOR (exact+stem)", "Overall", 0.2, 0.1),
                  record("chrF++", "Overall", 0.25, 0.2), record("judge_x", "Overall", 0.5, 0.4)]


def test_every_export_records_versions_and_metric_signatures() -> None:
    from dialjudge import __version__
    from dialjudge.core.metrics.families.bleu import bleu_signature
    from dialjudge.core.metrics.families.chrf import chrf_signature
    from dialjudge.core.metrics.families.meteor import meteor_signature

    bleu4, meteor, chrf = bleu_signature("bleu4"), meteor_signature("exact+stem"), chrf_signature()
    markdown = render(METRIC_RECORDS, "markdown", title="t")
    assert f"- signature: `{bleu4}`" in markdown and f"- signature: `{meteor}`" in markdown
    assert f"dialjudge {__version__}" in markdown
    latex = render(METRIC_RECORDS, "latex", title="t")
    assert latex.splitlines()[0].startswith("% versions: dialjudge ")
    assert f"% signature: {chrf}" in latex
    rows = list(csv.DictReader(io.StringIO(render(METRIC_RECORDS, "csv", title="t"))))
    assert [r["signature"] for r in rows] == [bleu4, meteor, chrf, ""]  # a judge has no metric signature
    assert all(f"dialjudge {__version__}" in r["versions"] for r in rows)
    data = json.loads(render(METRIC_RECORDS, "json", title="t"))
    assert data["meta"]["metric_signatures"] == {"BLEU-4": bleu4, "METEOR (exact+stem)": meteor, "chrF++": chrf}
    assert set(data["meta"]["versions"]) == {"dialjudge", "sacrebleu", "rouge-score", "nltk", "llama-cpp-python"}


def test_records_text_is_each_formats_own_writer() -> None:
    import pytest

    from dialjudge.core.report import (
        records_text,
        records_to_latex,
        records_to_markdown,
        to_csv,
        to_json,
        to_jsonl,
    )

    records = [{"judge": "=cmd", "r": 0.5}, {"judge": "b|c", "r": float("nan")}]
    columns, title, meta = ["judge", "r"], "T_1", {"run": 3}
    assert records_text(records, "csv", columns=columns, title=title) == to_csv(records)
    assert records_text(records, "json", columns=columns, title=title, meta=meta) == to_json(records, meta=meta)
    assert records_text(records, "jsonl", columns=columns, title=title) == to_jsonl(records)
    assert records_text(records, "markdown", columns=columns, title=title) == records_to_markdown(
        records, columns, title=title)
    assert records_text(records, "latex", columns=columns, title=title) == records_to_latex(records, columns, title=title)
    with pytest.raises(ValueError, match="unknown export format 'xlsx'"):
        records_text(records, "xlsx", columns=columns, title=title)
