"""The application layer: what the command line and the app ask core to do, and what they get back.

Both front ends open one :class:`Session` (the configuration, the run store's place and
the backend factory) and hand it to every use case; neither constructs a store, an
engine or a backend. A front end turns its arguments or its forms into a request
(``RunRequest``, ``AgreementRequest``, ...) and calls one function per use case:

- judging: :func:`plan_run` / :func:`plan_runs`, then :func:`judge` (run every plan, then
  :meth:`JudgeOutcome.reports`), or :func:`start_run` for a run the app drives and cancels itself;
  :func:`stop_rule_for`, :func:`prepare_retry`, :func:`find_resumable`, :func:`find_finished`,
  :func:`find_interrupted_run`;
- stored runs: :func:`list_runs` (:func:`run_list`: a tuning search's runs folded), :func:`run_record`, :func:`run_details`, :func:`judge_columns`,
  :func:`rescore`, :func:`export`, :func:`judgment_rows`, :func:`delete`, :func:`compare`, and a large run
  read in parts (:func:`judgment_page`, :func:`judgments_of_items`, :func:`score_columns`);
- datasets: :func:`list_datasets`, :func:`open_dataset`, :func:`describe`, :func:`dataset_statistics`,
  :func:`metrics_report`, :func:`make_adversarial`;
- tuning: :func:`read_space`, :func:`open_search`, :func:`save_winner`;
- the prompt lab, review, imports, few-label estimates and the JUDGE-BENCH protocol.

Beside this surface (at most 120 names; ``tests/core/test_api_surface.py`` counts them):
``core.api.types`` (the plain types and enums handed out), ``core.api.events`` (what a
running run or search reports), ``core.api.formatting`` (results laid out as rows, lines
and text, so both front ends print the same), and the use-case modules themselves for
their own columns and helpers (``core.api.preferences``, ``core.api.labels_estimates``, ...).
"""

from __future__ import annotations

from ..compare import (
    RunComparison,
)
from ..config import (
    Config,
    JudgeConfig,
)
from ..judges.post_run.labels import (
    LabelReport,
)
from ..judges.post_run.pairwise_report import (
    PairwiseReport,
)
from ..judges.post_run.rescore import (
    RescoreResult,
)
from ..judges.prompts.personas import (
    save_persona,
)
from ..judges.run.events import (
    RunSummary,
)
from ..judges.run.options import EngineOptions
from ..judges.store.run_store import (
    RunRecord,
)
from ..planning import (
    RunPlan,
)
from ..run_export import (
    ExportResult,
)
from .choices import (
    JudgeChoices,
    judge_choices,
)
from .column_maps import (
    ColumnChoices,
    ColumnMap,
    column_choices,
    parse_column_map,
)
from .datasets import (
    AdversarialSet,
    DatasetEntry,
    DatasetStatistics,
    DatasetSummary,
    dataset_statistics,
    describe,
    list_datasets,
    make_adversarial,
    metric_scores,
    metrics_report,
    open_dataset,
)
from .imports import (
    ImportReport,
    ImportRequest,
    ImportResult,
)
from .judging import (
    JudgeOutcome,
    RunHandle,
    SearchHandle,
    judge,
    open_search,
    start_run,
)
from .labels_estimates import (
    AltTestReport,
    EstimateReport,
    LabelPlan,
)
from .leaderboards import (
    Leaderboard,
    LeaderboardRequest,
)
from .preferences import (
    PreferenceReport,
    PreferenceRequest,
    preference_report_of,
)
from .prompt_lab import (
    PreparedPrompt,
    SavedTemplate,
    ask_judge,
    check_persona_name,
    prepare_prompt,
    save_edited_template,
    trial_judgment,
    trial_request,
)
from .protocol_judge_bench import (
    JudgeBenchTable,
    judge_bench_requests,
)
from .reports import (
    RunReports,
    reports_after_run,
)
from .requests import (
    AgreementRequest,
    CompareRequest,
    ExportRequest,
    RescoreRequest,
    RunRequest,
    StopRequest,
)
from .review import (
    ReviewData,
    export_reviews,
)
from .run_list import RunList, SearchEntry
from .runs import (
    RetryPlan,
    plan_run,
    plan_runs,
)
from .session import (
    Session,
)
from .stored import (
    RunDetails,
    dataset_of_run,
)
from .stored_use_cases import (
    alt_test_for_run,
    compare,
    delete,
    estimate_for_run,
    export,
    find_finished,
    find_interrupted_run,
    find_resumable,
    import_scores,
    judge_bench_table,
    judge_columns,
    judgment_page,
    judgment_rows,
    judgments_of_items,
    label_next,
    leaderboard,
    list_runs,
    mass_lines,
    prepare_retry,
    rescore,
    review_data,
    run_config_of,
    run_details,
    run_judgments,
    run_list,
    run_record,
    run_reports,
    save_review,
    score_columns,
    stop_rule_for,
    stored_preference_report,
    usage_of_run,
    versus,
    write_judgments_file,
)
from .tune import (
    SearchSpace,
    TuningReport,
    read_space,
    save_search_record,
    save_winner,
)
from .view import (
    compare_columns,
    item_metric_scores,
    judges_as_labels,
)

__all__ = [
    "AdversarialSet",
    "AgreementRequest",
    "alt_test_for_run",
    "AltTestReport",
    "ask_judge",
    "check_persona_name",
    "column_choices",
    "ColumnChoices",
    "ColumnMap",
    "compare",
    "compare_columns",
    "CompareRequest",
    "Config",
    "dataset_of_run",
    "dataset_statistics",
    "DatasetEntry",
    "DatasetStatistics",
    "DatasetSummary",
    "EngineOptions",
    "delete",
    "describe",
    "estimate_for_run",
    "EstimateReport",
    "export",
    "export_reviews",
    "ExportRequest",
    "ExportResult",
    "find_finished",
    "find_interrupted_run",
    "find_resumable",
    "import_scores",
    "ImportReport",
    "ImportRequest",
    "ImportResult",
    "item_metric_scores",
    "judge",
    "judge_bench_requests",
    "judge_bench_table",
    "judge_choices",
    "judge_columns",
    "JudgeBenchTable",
    "JudgeChoices",
    "JudgeConfig",
    "JudgeOutcome",
    "judges_as_labels",
    "judgment_page",
    "judgment_rows",
    "judgments_of_items",
    "label_next",
    "leaderboard",
    "Leaderboard",
    "LeaderboardRequest",
    "LabelPlan",
    "LabelReport",
    "list_datasets",
    "list_runs",
    "make_adversarial",
    "mass_lines",
    "metric_scores",
    "metrics_report",
    "open_dataset",
    "open_search",
    "PairwiseReport",
    "parse_column_map",
    "plan_run",
    "plan_runs",
    "preference_report_of",
    "PreferenceReport",
    "PreferenceRequest",
    "prepare_prompt",
    "prepare_retry",
    "PreparedPrompt",
    "read_space",
    "reports_after_run",
    "rescore",
    "RescoreRequest",
    "RescoreResult",
    "RetryPlan",
    "review_data",
    "ReviewData",
    "run_config_of",
    "run_details",
    "run_judgments",
    "run_list",
    "RunList",
    "run_record",
    "run_reports",
    "RunComparison",
    "RunDetails",
    "RunHandle",
    "RunPlan",
    "RunRecord",
    "RunReports",
    "RunRequest",
    "RunSummary",
    "save_edited_template",
    "save_persona",
    "save_review",
    "save_search_record",
    "save_winner",
    "SavedTemplate",
    "score_columns",
    "SearchHandle",
    "SearchEntry",
    "SearchSpace",
    "Session",
    "start_run",
    "stop_rule_for",
    "StopRequest",
    "stored_preference_report",
    "trial_judgment",
    "trial_request",
    "TuningReport",
    "usage_of_run",
    "versus",
    "write_judgments_file",
]
