"""How results are laid out as rows, lines and text, so that the app and the command line show the same thing.

Nothing here computes a figure: each function turns what a use case returned into
cells, lines or a file's text (CSV, JSON, Markdown, LaTeX).
"""

from __future__ import annotations

from ..adversarial.discernment import (
    discernment_table,
)
from ..evaluation import (
    compared_items,
)
from ..judges.post_run.cost import (
    USAGE_COLUMNS,
    money_text,
    usage_rows,
    usage_summary,
)
from ..judges.post_run.pairwise_report import (
    BT_SUFFIX,
    SUMMARY_COLUMNS,
    summary_notes,
    summary_rows,
)
from ..judges.store.status import (
    problem_lines,
    status_line,
    status_text,
)
from ..label_rows import (
    HEADER as LABEL_HEADER,
)
from ..label_rows import (
    confusion_rows,
    tie_lines,
)
from ..label_rows import (
    summary_rows as label_summary_rows,
)
from ..report import (
    FORMATS,
    WideRow,
    WideTable,
    records_text,
    records_to_latex,
    records_to_markdown,
    render,
    sparkline,
    to_csv,
    to_json,
    to_jsonl,
    wide_table,
)
from ..review_queue import (
    human_unit,
)
from ..run_export import (
    FORMAT_LABELS,
)
from ..stats import (
    ceiling_table,
)
from ..stats.paired import (
    SYMBOLS,
    interval_text,
    verdict_line,
)
from .runs import (
    pair_plan_text,
)

__all__ = [
    "BT_SUFFIX",
    "ceiling_table",
    "compared_items",
    "confusion_rows",
    "discernment_table",
    "FORMAT_LABELS",
    "FORMATS",
    "human_unit",
    "interval_text",
    "LABEL_HEADER",
    "label_summary_rows",
    "money_text",
    "pair_plan_text",
    "problem_lines",
    "records_text",
    "records_to_latex",
    "records_to_markdown",
    "render",
    "sparkline",
    "status_line",
    "status_text",
    "SUMMARY_COLUMNS",
    "summary_notes",
    "summary_rows",
    "SYMBOLS",
    "tie_lines",
    "to_csv",
    "to_json",
    "to_jsonl",
    "USAGE_COLUMNS",
    "usage_rows",
    "usage_summary",
    "verdict_line",
    "wide_table",
    "WideRow",
    "WideTable",
]
