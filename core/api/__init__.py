"""The application layer: what the command line and the app ask core to do, and what they get back.

Both front ends import core through this package only (plus the plain types of
``core.model``, ``core.errors`` and ``core.format``); an import-linter contract in
pyproject.toml keeps it so. A front end turns its arguments or its forms into a
request (:mod:`core.api.requests`) and calls one function per use case:

- runs: :func:`plan_run` / :func:`plan_runs`, :func:`open_run` / :func:`execute_run` with a
  :class:`RunDisplay`, :func:`stop_rule_for`, :func:`prepare_retry`, :func:`find_resumable`,
  :func:`find_finished` (an identical finished run is shown again, not duplicated);
- the reports that follow a run: :func:`reports_after_run` decides, :func:`run_reports` computes;
- stored runs: :func:`list_runs`, :func:`run_details`, :func:`judge_columns`, :func:`rescore`,
  :func:`export`, :func:`judgment_rows`, :func:`delete`; :func:`compare` two of them; a large run read in
  parts: :func:`judgment_page`, :func:`judgments_of_items`, :func:`score_columns`, :func:`write_judgments_file`;
- tuning: :func:`read_space`, :func:`open_search`, :func:`save_winner`;
- datasets: :func:`list_datasets`, :func:`open_dataset` (with a :class:`ColumnMap`: :func:`parse_column_map`,
  :func:`column_choices`), :func:`describe`, :func:`dataset_statistics`,
  :func:`metrics_report`, :func:`make_adversarial`;
- the app's live view of an open dataset (:mod:`core.api.view`): :func:`item_metric_scores`,
  :func:`compare_columns`, :func:`judges_as_labels`, :func:`stored_run_of`;
- the prompt lab (:mod:`core.api.prompt_lab`): :func:`prepare_prompt`, :func:`trial_request`,
  :func:`ask_judge`, :func:`trial_judgment`, :func:`save_edited_template`, :func:`check_persona_name`;
- reviewing a run (:mod:`core.api.review`): :func:`review_data`, :func:`export_reviews`.

The names below the use cases are the types those functions hand out (results,
events, enums) and the functions that lay them out as rows and text, so that
every front end shows them the same way.
"""

from __future__ import annotations

# The types and layouts the use cases hand out, re-exported so that a front end needs no deeper import.
from ..adversarial.builder import CONTRADICTS
from ..adversarial.discernment import DiscernmentRow, DiscernmentTable, discernment_table
from ..compare import RunComparison
from ..config import Config, JudgeConfig, load_config, user_data_dir
from ..errors import TemplateError
from ..evaluation import EvaluationReport, compared_items
from ..judge_diagnostics import ConfusionView, JudgeDiagnostics
from ..judges.backends import local_threads, make_backend, model_file_backend
from ..judges.post_run.cost import USAGE_COLUMNS, RunUsage, money_text, usage_rows, usage_summary
from ..judges.post_run.labels import LabelReport, run_label_report
from ..judges.post_run.pairwise_report import (
    BT_SUFFIX,
    SUMMARY_COLUMNS,
    PairwiseReport,
    pairwise_report,
    summary_notes,
    summary_rows,
)
from ..judges.post_run.pool import PoolReport, Stability
from ..judges.post_run.rescore import RescoreResult, RescoreSettings
from ..judges.prompts.constraint import AnswerConstraint
from ..judges.prompts.personas import Persona, save_persona
from ..judges.prompts.templates import Template
from ..judges.run.config import RunConfig
from ..judges.run.engine import RunEngine
from ..judges.run.events import (
    JudgmentScored,
    RunEvent,
    RunFinished,
    RunPhase,
    RunProgress,
    RunSummary,
    StopRuleChecked,
)
from ..judges.run.pairwise import PairSetting, plan_pairs
from ..judges.run.stopping import StopRule
from ..judges.store.run_store import JudgmentPage, Review, RunRecord, RunStore, ScoreColumns, StoreError
from ..judges.store.status import Part, RunState, RunStatus, problem_lines, status_line, status_text
from ..judges.types import JudgeBackend, Judgment, OutputKind, RenderedPrompt, ScoringMode
from ..label_rows import HEADER as LABEL_HEADER
from ..label_rows import confusion_rows, tie_lines
from ..label_rows import summary_rows as label_summary_rows
from ..metrics import MetricScores, score_examples
from ..planning import NO_PERSONA, RunPlan, Scoring, default_scoring, infer_quality, preferred_mode
from ..registry import bundled_path
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
from ..review_queue import FlagKind, ReviewCase, human_unit
from ..run_columns import POOL
from ..run_export import FORMAT_LABELS, ExportResult
from ..stats import AgreementCell, AgreementTable, CeilingRow, HumanCeiling, Snapshot, ceiling_table
from ..stats.baselines import LENGTH_EVALUATOR
from ..stats.calibration import Calibration
from ..stats.interjudge import InterJudgeMatrix
from ..stats.label_agreement import TieRule
from ..stats.paired import SYMBOLS, PairedComparison, interval_text, verdict_line
from ..subsets import parse_subset
from ..tuning.search import (
    JudgingProgressed,
    RoundStarted,
    SearchCancelled,
    SearchEvent,
    SearchFinished,
    SearchStarted,
    VariantScored,
)
from ..workspace import AgreementInputs, PreparedDataset, Workspace, judge_evaluator
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
from .masses import mass_lines, scoring_lines
from .preferences import (
    AGREEMENT_COLUMNS,
    CATEGORY_COLUMNS,
    PAIR_COLUMNS,
    PAIR_VOTE_COLUMNS,
    VERSUS_COLUMNS,
    PreferenceReport,
    PreferenceRequest,
    VersusRow,
    agreement_notes,
    agreement_rows,
    category_rows,
    on_prepaired_items,
    pair_label,
    pair_rows,
    pair_summary_lines,
    pair_vote_rows,
    pairs_to_review,
    preference_plan_text,
    preference_report_of,
    stored_preference_report,
    versus,
    versus_notes,
    versus_rows,
)
from .prompt_lab import (
    LAB_SOURCE,
    FewShotCache,
    PreparedPrompt,
    PromptSetup,
    SavedTemplate,
    ask_judge,
    check_persona_name,
    judge_key,
    prepare_prompt,
    save_edited_template,
    trial_judgment,
    trial_request,
)
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
from .review import (
    REVIEW_FORMAT_LABELS,
    REVIEW_FORMATS,
    ReviewData,
    check_review_formats,
    export_reviews,
    review_data,
)
from .runs import (
    RetryPlan,
    build_backends,
    execute_run,
    find_finished,
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
    judgment_page,
    judgment_rows,
    judgments_of_items,
    list_runs,
    rescore,
    run_details,
    score_columns,
    usage_of_run,
    write_judgments_file,
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
from .view import compare_columns, is_length_baseline, item_metric_scores, judges_as_labels, stored_run_of

__all__ = [
    # requests
    "RunRequest", "StopRequest", "AgreementRequest", "RescoreRequest", "CompareRequest", "ExportRequest",
    "DEFAULT_JUDGE",
    # runs
    "RunPlan", "plan_run", "plan_runs", "find_resumable", "find_finished", "build_backends", "open_run", "execute_run",
    "stop_rule_for", "RetryPlan", "prepare_retry", "pair_plan_text", "RunDisplay", "infer_quality",
    "preferred_mode", "default_scoring", "Scoring", "NO_PERSONA", "JudgeChoices", "judge_choices",
    # reports
    "Report", "FILE_REPORTS", "reports_after_run", "run_reports", "RunReports", "DrawSpread", "LengthAndCertainty",
    "agreement_levels", "only_dialogs", "label_run_note", "metric_length_bias", "run_finished", "compared_items",
    # stored runs
    "list_runs", "run_details", "RunDetails", "usage_of_run", "judge_columns", "rescore", "export", "judgment_rows",
    "delete", "dataset_of_run", "environment_lines", "compare", "mass_lines", "scoring_lines",
    "judgment_page", "judgments_of_items", "score_columns", "write_judgments_file", "JudgmentPage", "ScoreColumns",
    # tuning
    "read_space", "open_search", "save_winner", "render_report", "save_search_record", "TUNING_FORMATS",
    "SearchSpace", "TuningReport", "TuningSearch", "SearchEvent", "SearchStarted", "RoundStarted",
    "VariantScored", "JudgingProgressed",
    # datasets
    "DEFAULT_DATASET", "ADVERSARIAL_KINDS", "DatasetEntry", "DatasetSummary", "DatasetStatistics",
    "LabelCeilingRow", "AdversarialSet", "list_datasets", "open_dataset", "describe", "quality_annotators",
    "dataset_statistics", "metrics_report", "metric_scores", "make_adversarial",
    # pre-paired preference data (issue 21)
    "PreferenceRequest", "PreferenceReport", "on_prepaired_items", "preference_plan_text", "preference_report_of",
    "stored_preference_report", "versus", "VersusRow", "versus_rows", "versus_notes", "pair_summary_lines",
    "pair_label", "pairs_to_review", "AGREEMENT_COLUMNS", "CATEGORY_COLUMNS", "PAIR_COLUMNS", "VERSUS_COLUMNS", "agreement_rows",
    "agreement_notes", "category_rows", "pair_rows", "PAIR_VOTE_COLUMNS", "pair_vote_rows",
    # handed-out types and their layouts
    "CONTRADICTS", "DiscernmentRow", "discernment", "RunComparison", "Config", "JudgeConfig", "load_config",
    "EvaluationReport", "AnswerConstraint", "USAGE_COLUMNS", "RunUsage", "usage_rows", "usage_summary",
    "JudgmentScored", "RunEvent", "RunFinished", "RunPhase", "RunProgress", "RunSummary", "StopRuleChecked", "LabelReport", "BT_SUFFIX",
    "SUMMARY_COLUMNS", "PairwiseReport", "summary_notes", "summary_rows", "RescoreResult", "RescoreSettings",
    "RunConfig", "Part", "RunState", "RunStatus", "problem_lines", "status_text", "RunRecord", "RunStore",
    "Judgment", "ScoringMode", "JudgeBackend", "make_backend", "local_threads", "model_file_backend", "AgreementCell", "AgreementTable", "HumanCeiling", "LABEL_HEADER", "confusion_rows", "tie_lines", "label_summary_rows", "FORMATS",
    "WideRow", "WideTable", "records_to_latex", "records_to_markdown", "records_text", "render", "sparkline", "to_csv", "to_json",
    "to_jsonl", "wide_table", "POOL", "FORMAT_LABELS", "ExportResult", "SYMBOLS", "PairedComparison",
    "verdict_line", "interval_text", "TieRule", "RunEngine", "Workspace", "PreparedDataset", "judge_evaluator", "Persona", "Template", "TemplateError", "PoolReport", "Stability", "StopRule", "InterJudgeMatrix",
    # the app's live view, prompt lab and review
    "item_metric_scores", "compare_columns", "is_length_baseline", "judges_as_labels", "stored_run_of",
    "LAB_SOURCE", "FewShotCache", "PromptSetup", "PreparedPrompt", "SavedTemplate", "prepare_prompt",
    "trial_request", "ask_judge", "trial_judgment", "judge_key", "save_edited_template", "check_persona_name",
    "save_persona", "REVIEW_FORMATS", "REVIEW_FORMAT_LABELS", "ReviewData", "review_data", "check_review_formats",
    "export_reviews",
    # what they hand out or lay out
    "DiscernmentTable", "discernment_table",
    "user_data_dir", "ConfusionView", "JudgeDiagnostics", "money_text", "run_label_report",
    "PairSetting", "plan_pairs", "pairwise_report", "Review", "StoreError", "OutputKind", "RenderedPrompt",
    "MetricScores", "score_examples", "bundled_path", "FlagKind", "ReviewCase", "human_unit",
    "CeilingRow", "Snapshot", "ceiling_table", "LENGTH_EVALUATOR", "Calibration", "status_line", "parse_subset",
    "SearchCancelled", "SearchFinished", "AgreementInputs",
]

# Importing judges' scores from elsewhere: `runs import` and the Runs screen's import action.
from .imports import IMPORT_FORMATS, ImportRefused, ImportReport, ImportRequest, ImportResult, import_scores

# The alternative annotator test, few-label estimates and the label-next order (core.api.labels_estimates).
from .labels_estimates import (
    ALT_TEST_COLUMNS,
    ESTIMATE_COLUMNS,
    AltTestReport,
    EstimateReport,
    LabelPlan,
    alt_test_for_run,
    alt_test_lines,
    alt_test_rows,
    alt_test_title,
    estimate_for_run,
    estimate_lines,
    estimate_rows,
    estimate_title,
    label_next,
)

__all__ += ["IMPORT_FORMATS", "ImportRefused", "ImportReport", "ImportRequest", "ImportResult", "import_scores"]

# Metric profiles (issue 24): which code computes the reference-based metrics.
from .profiles import (  # noqa: E402
    DEFAULT_PROFILE,
    METRIC_PROFILES,
    profile_columns,
    profile_metric_ids,
    profile_names,
    table_signatures,
)

__all__ += ["DEFAULT_PROFILE", "METRIC_PROFILES", "profile_columns", "profile_metric_ids", "profile_names", "table_signatures"]

# -- resuming an interrupted run, a template's identity -------------------------------------------
from .interrupted import find_interrupted_run  # noqa: E402
from .template_identity import (  # noqa: E402
    is_shipped_name,
    overridden_names,
    parse_template,
    renamed_template_text,
    revert_override,
    template_text_hash,
)

__all__ += ["find_interrupted_run", "is_shipped_name", "overridden_names", "parse_template",
            "renamed_template_text", "revert_override", "template_text_hash"]

# the few-label names imported above
__all__ += ["ALT_TEST_COLUMNS", "ESTIMATE_COLUMNS", "AltTestReport", "EstimateReport", "alt_test_for_run",
            "alt_test_lines", "alt_test_rows", "alt_test_title", "estimate_for_run", "estimate_lines",
            "estimate_rows", "estimate_title", "LabelPlan", "label_next"]

# JUDGE-BENCH's table convention over stored runs (issue 24)
from ..stats.judge_bench_protocol import JudgeBenchMetric, JudgeBenchSummary  # noqa: E402
from .protocol_judge_bench import (  # noqa: E402
    JudgeBenchTable,
    judge_bench_requests,
    judge_bench_table,
    judge_bench_text,
)

__all__ += ["JudgeBenchMetric", "JudgeBenchSummary", "JudgeBenchTable", "judge_bench_requests", "judge_bench_table", "judge_bench_text"]

# Column mappings for tables with other column names (issue 20): --map COLUMN=FIELD, the app's column dialog
from .column_maps import (  # noqa: E402
    NOT_A_FIELD,
    RATING,
    TEXT_FIELDS,
    ColumnChoice,
    ColumnChoices,
    ColumnMap,
    column_choices,
    column_map_from_fields,
    parse_column_map,
    rating_field,
    valid_fields_text,
)

__all__ += ["NOT_A_FIELD", "RATING", "TEXT_FIELDS", "ColumnChoice", "ColumnChoices", "ColumnMap", "column_choices",
            "column_map_from_fields", "parse_column_map", "rating_field", "valid_fields_text"]

# The app's garbage-collection policy while background work runs (issue 23: no full collection stalls the UI)
from ..gc_pause import collect_young, freeze_survivors, gc_paused  # noqa: E402

__all__ += ["collect_young", "freeze_survivors", "gc_paused"]

# Background work gives the interpreter to the app's UI thread while it runs (issue 23)
from ..foreground import end_turn, foreground_busy, foreground_gone, foreground_idle, give_way, giving_way  # noqa: E402

__all__ += ["end_turn", "foreground_busy", "foreground_gone", "foreground_idle", "give_way", "giving_way"]
