"""The plain types, enums and constants the use cases hand out and take, and the small lookups on them
(a judge's thread count, where the user's files live, a subset's spec, a pairwise run's pairs).

A front end annotates and compares with these (a run's status, a scoring mode, a
template, a report's rows); it never constructs an engine, a store or a backend
from them. Re-exported from deeper core so that a front end needs no deeper import.
"""

from __future__ import annotations

from ..adversarial.builder import (
    CONTRADICTS,
)
from ..adversarial.discernment import (
    DiscernmentRow,
    DiscernmentTable,
)
from ..config import (
    user_data_dir,
)
from ..dataset_catalogue import (
    bundled_path,
)
from ..errors import (
    TemplateError,
)
from ..evaluation import (
    EvaluationReport,
)
from ..judge_diagnostics import (
    ConfusionView,
    JudgeDiagnostics,
)
from ..judges.backends import (
    local_threads,
    model_file_backend,
)
from ..judges.post_run.cost import (
    RunUsage,
)
from ..judges.post_run.labels import (
    run_label_report,
)
from ..judges.post_run.pairwise_report import (
    pairwise_report,
)
from ..judges.post_run.pool import (
    PoolReport,
    Stability,
)
from ..judges.post_run.rescore import (
    RescoreSettings,
)
from ..judges.prompts.constraint import (
    AnswerConstraint,
)
from ..judges.prompts.personas import (
    Persona,
)
from ..judges.prompts.templates import (
    Template,
)
from ..judges.run.config import (
    RunConfig,
)
from ..judges.run.pairwise import (
    PairSetting,
    plan_pairs,
)
from ..judges.run.stopping import (
    StopRule,
)
from ..judges.store.run_store import (
    JudgmentPage,
    Review,
    ScoreColumns,
    StoreError,
)
from ..judges.store.status import (
    Part,
    RunState,
    RunStatus,
)
from ..judges.types import (
    JudgeBackend,
    Judgment,
    OutputKind,
    RenderedPrompt,
    ScoringMode,
)
from ..metrics import (
    MetricScores,
    score_examples,
)
from ..planning import (
    NO_PERSONA,
    Scoring,
    default_scoring,
    infer_quality,
    preferred_mode,
)
from ..review_queue import (
    FlagKind,
    ReviewCase,
)
from ..run_columns import (
    POOL,
)
from ..stats import (
    AgreementCell,
    AgreementTable,
    CeilingRow,
    HumanCeiling,
    Snapshot,
)
from ..stats.baselines import (
    LENGTH_EVALUATOR,
)
from ..stats.calibration import (
    Calibration,
)
from ..stats.interjudge import (
    InterJudgeMatrix,
)
from ..stats.judge_bench_protocol import (
    JudgeBenchMetric,
    JudgeBenchSummary,
)
from ..stats.label_agreement import (
    TieRule,
)
from ..stats.paired import (
    PairedComparison,
)
from ..subsets import (
    parse_subset,
)
from .session import BackendFactory

__all__ = [
    "Scoring",
    "default_scoring",
    "BackendFactory",
    "infer_quality",
    "preferred_mode",
    "AgreementCell",
    "AgreementTable",
    "AnswerConstraint",
    "bundled_path",
    "Calibration",
    "CeilingRow",
    "ConfusionView",
    "CONTRADICTS",
    "DiscernmentRow",
    "DiscernmentTable",
    "EvaluationReport",
    "FlagKind",
    "HumanCeiling",
    "InterJudgeMatrix",
    "JudgeBackend",
    "JudgeBenchMetric",
    "JudgeBenchSummary",
    "JudgeDiagnostics",
    "Judgment",
    "JudgmentPage",
    "LENGTH_EVALUATOR",
    "local_threads",
    "MetricScores",
    "model_file_backend",
    "NO_PERSONA",
    "OutputKind",
    "PairedComparison",
    "PairSetting",
    "pairwise_report",
    "parse_subset",
    "Part",
    "Persona",
    "plan_pairs",
    "POOL",
    "PoolReport",
    "RenderedPrompt",
    "RescoreSettings",
    "Review",
    "ReviewCase",
    "run_label_report",
    "RunConfig",
    "RunState",
    "RunStatus",
    "RunUsage",
    "score_examples",
    "ScoreColumns",
    "ScoringMode",
    "Snapshot",
    "Stability",
    "StopRule",
    "StoreError",
    "Template",
    "TemplateError",
    "TieRule",
    "user_data_dir",
]
