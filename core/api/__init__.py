"""The application layer: what the command line and the app ask core to do, and what they get back.

Both front ends import core through this package only (plus the plain types of
``core.model``, ``core.errors`` and ``core.format``); an import-linter contract in
pyproject.toml keeps it so. A front end turns its arguments or its forms into a
request (:mod:`core.api.requests`) and calls one function per use case:

- runs: :func:`plan_run` / :func:`plan_runs`, :func:`open_run` / :func:`execute_run` with a
  :class:`RunDisplay`, :func:`stop_rule_for`, :func:`prepare_retry`, :func:`find_resumable`;
- the reports that follow a run: :func:`reports_after_run` decides, :func:`run_reports` computes;
- stored runs: :func:`list_runs`, :func:`run_details`, :func:`judge_columns`, :func:`rescore`,
  :func:`export`, :func:`judgment_rows`, :func:`delete`; :func:`compare` two of them;
- tuning: :func:`read_space`, :func:`open_search`, :func:`save_winner`;
- datasets: :func:`list_datasets`, :func:`open_dataset`, :func:`describe`, :func:`dataset_statistics`,
  :func:`metrics_report`, :func:`make_adversarial`.

The names below the use cases are the types those functions hand out (results,
events, enums) and the functions that lay them out as rows and text, so that
every front end shows them the same way.
"""

from __future__ import annotations

# The types and layouts the use cases hand out, re-exported so that a front end needs no deeper import.
from ..adversarial.builder import CONTRADICTS
from ..adversarial.discernment import DiscernmentRow
from ..compare import RunComparison
from ..config import Config, JudgeConfig, load_config
from ..errors import TemplateError
from ..evaluation import EvaluationReport, compared_items
from ..judges.backends import local_threads, make_backend, model_file_backend
from ..judges.post_run.cost import USAGE_COLUMNS, RunUsage, usage_rows, usage_summary
from ..judges.post_run.labels import LabelReport
from ..judges.post_run.pairwise_report import BT_SUFFIX, SUMMARY_COLUMNS, PairwiseReport, summary_notes, summary_rows
from ..judges.post_run.pool import PoolReport, Stability
from ..judges.post_run.rescore import RescoreResult, RescoreSettings
from ..judges.prompts.constraint import AnswerConstraint
from ..judges.prompts.personas import Persona
from ..judges.prompts.templates import Template
from ..judges.run.config import RunConfig
from ..judges.run.engine import RunEngine
from ..judges.run.events import JudgmentScored, RunEvent, RunFinished, RunProgress, RunSummary, StopRuleChecked
from ..judges.run.stopping import StopRule
from ..judges.store.run_store import RunRecord, RunStore
from ..judges.store.status import Part, RunState, RunStatus, problem_lines, status_text
from ..judges.types import JudgeBackend, Judgment, ScoringMode
from ..label_rows import HEADER as LABEL_HEADER
from ..label_rows import confusion_rows, tie_lines
from ..label_rows import summary_rows as label_summary_rows
from ..planning import NO_PERSONA, RunPlan, infer_quality, preferred_mode
from ..report import (
    FORMATS,
    WideRow,
    WideTable,
    records_to_latex,
    records_to_markdown,
    render,
    sparkline,
    to_csv,
    to_json,
    to_jsonl,
    wide_table,
)
from ..run_columns import POOL
from ..run_export import FORMAT_LABELS, ExportResult
from ..stats import AgreementCell, AgreementTable, HumanCeiling
from ..stats.interjudge import InterJudgeMatrix
from ..stats.label_agreement import TieRule
from ..stats.paired import SYMBOLS, PairedComparison, interval_text, verdict_line
from ..tuning.search import JudgingProgressed, RoundStarted, SearchEvent, SearchStarted, VariantScored
from ..workspace import Workspace, judge_evaluator
from .choices import JudgeChoices, judge_choices
from .comparison import compare
from .datasets import (
    ADVERSARIAL_KINDS,
    DEFAULT_DATASET,
    AdversarialSet,
    DatasetEntry,
    DatasetStatistics,
    DatasetSummary,
    LabelCeilingRow,
    dataset_statistics,
    describe,
    list_datasets,
    make_adversarial,
    metric_scores,
    metrics_report,
    open_dataset,
    quality_annotators,
)
from .display import RunDisplay
from .reports import (
    FILE_REPORTS,
    DrawSpread,
    LengthAndCertainty,
    Report,
    RunReports,
    agreement_levels,
    discernment,
    label_run_note,
    metric_length_bias,
    only_dialogs,
    reports_after_run,
    run_finished,
    run_reports,
)
from .requests import (
    DEFAULT_JUDGE,
    AgreementRequest,
    CompareRequest,
    ExportRequest,
    RescoreRequest,
    RunRequest,
    StopRequest,
)
from .runs import (
    RetryPlan,
    build_backends,
    execute_run,
    find_resumable,
    open_run,
    pair_plan_text,
    plan_run,
    plan_runs,
    prepare_retry,
    stop_rule_for,
)
from .stored import (
    RunDetails,
    dataset_of_run,
    delete,
    environment_lines,
    export,
    judge_columns,
    judgment_rows,
    list_runs,
    rescore,
    run_details,
    usage_of_run,
)
from .tune import REPORT_FORMATS as TUNING_FORMATS
from .tune import (
    SearchSpace,
    TuningReport,
    TuningSearch,
    open_search,
    read_space,
    render_report,
    save_search_record,
    save_winner,
)

__all__ = [
    # requests
    "RunRequest", "StopRequest", "AgreementRequest", "RescoreRequest", "CompareRequest", "ExportRequest",
    "DEFAULT_JUDGE",
    # runs
    "RunPlan", "plan_run", "plan_runs", "find_resumable", "build_backends", "open_run", "execute_run",
    "stop_rule_for", "RetryPlan", "prepare_retry", "pair_plan_text", "RunDisplay", "infer_quality",
    "preferred_mode", "NO_PERSONA", "JudgeChoices", "judge_choices",
    # reports
    "Report", "FILE_REPORTS", "reports_after_run", "run_reports", "RunReports", "DrawSpread", "LengthAndCertainty",
    "agreement_levels", "only_dialogs", "label_run_note", "metric_length_bias", "run_finished", "compared_items",
    # stored runs
    "list_runs", "run_details", "RunDetails", "usage_of_run", "judge_columns", "rescore", "export", "judgment_rows",
    "delete", "dataset_of_run", "environment_lines", "compare",
    # tuning
    "read_space", "open_search", "save_winner", "render_report", "save_search_record", "TUNING_FORMATS",
    "SearchSpace", "TuningReport", "TuningSearch", "SearchEvent", "SearchStarted", "RoundStarted",
    "VariantScored", "JudgingProgressed",
    # datasets
    "DEFAULT_DATASET", "ADVERSARIAL_KINDS", "DatasetEntry", "DatasetSummary", "DatasetStatistics",
    "LabelCeilingRow", "AdversarialSet", "list_datasets", "open_dataset", "describe", "quality_annotators",
    "dataset_statistics", "metrics_report", "metric_scores", "make_adversarial",
    # handed-out types and their layouts
    "CONTRADICTS", "DiscernmentRow", "discernment", "RunComparison", "Config", "JudgeConfig", "load_config",
    "EvaluationReport", "AnswerConstraint", "USAGE_COLUMNS", "RunUsage", "usage_rows", "usage_summary",
    "JudgmentScored", "RunEvent", "RunFinished", "RunProgress", "RunSummary", "StopRuleChecked", "LabelReport", "BT_SUFFIX",
    "SUMMARY_COLUMNS", "PairwiseReport", "summary_notes", "summary_rows", "RescoreResult", "RescoreSettings",
    "RunConfig", "Part", "RunState", "RunStatus", "problem_lines", "status_text", "RunRecord", "RunStore",
    "Judgment", "ScoringMode", "JudgeBackend", "make_backend", "local_threads", "model_file_backend", "AgreementCell", "AgreementTable", "HumanCeiling", "LABEL_HEADER", "confusion_rows", "tie_lines", "label_summary_rows", "FORMATS",
    "WideRow", "WideTable", "records_to_latex", "records_to_markdown", "render", "sparkline", "to_csv", "to_json",
    "to_jsonl", "wide_table", "POOL", "FORMAT_LABELS", "ExportResult", "SYMBOLS", "PairedComparison",
    "verdict_line", "interval_text", "TieRule", "RunEngine", "Workspace", "judge_evaluator", "Persona", "Template", "TemplateError", "PoolReport", "Stability", "StopRule", "InterJudgeMatrix",
]
