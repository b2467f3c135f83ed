"""dialjudge's Python API: the application layer the command line and the app call, for notebooks and scripts.

Everything here is re-exported from ``dialjudge.core.api`` (the use cases, their requests and results, and the
:class:`Session` they share) and from its topic modules (the leaderboard's records, the HTML report, the CI gate,
experiment files, juries, cascades and alignment), so a script computes exactly what ``dialjudge`` prints for the
same request. ``docs/python.md`` walks through it with an example that the test suite runs; it also states which
names are stable.
"""

from __future__ import annotations

from .core.api import *  # noqa: F403  (the layer's surface, as core.api.__all__ lists it)
from .core.api import __all__ as _layer_names
from .core.api.align import AlignReport, AlignRequest, align, open_align
from .core.api.cascade import CascadeReport, CascadeRequest, cascade_record, run_cascade
from .core.api.cascade_live import LiveCascadeReport, LiveCascadeRequest, live_cascade
from .core.api.experiments import ExperimentOutcome, plan_experiment, read_experiment, run_experiment
from .core.api.gate import GateRequest, GateResult, check_runs, junit_xml, parse_rules
from .core.api.html_report import HtmlReportRequest, HtmlReportResult, write_html_report
from .core.api.jury import JuryReport, JuryRequest, jury_records, run_jury
from .core.api.leaderboards import records_of as leaderboard_records

__all__ = [
    *_layer_names,
    # the leaderboard as records (dialjudge leaderboard)
    "leaderboard_records",
    # the HTML report (dialjudge report)
    "HtmlReportRequest", "HtmlReportResult", "write_html_report",
    # the CI gate (dialjudge check)
    "GateRequest", "GateResult", "check_runs", "junit_xml", "parse_rules",
    # experiment files (dialjudge eval)
    "ExperimentOutcome", "plan_experiment", "read_experiment", "run_experiment",
    # several judges as one (dialjudge jury, dialjudge cascade)
    "CascadeReport", "CascadeRequest", "JuryReport", "JuryRequest", "cascade_record", "jury_records", "run_cascade",
    "run_jury", "LiveCascadeReport", "LiveCascadeRequest", "live_cascade",
    # a judge aligned to the user's corrections (dialjudge align)
    "AlignReport", "AlignRequest", "align", "open_align",
]
