"""The application layer: what the terminal app and the command line ask of the engine.

Front ends import from here (and the plain data modules :mod:`~dialjudge.core.model`,
:mod:`~dialjudge.core.errors` and :mod:`~dialjudge.core.format`), never from the engine's
modules: this package names every use case they share and every type those use cases hand
out, so the engine can be rearranged without touching them.
"""

from __future__ import annotations

from ..adversarial.builder import KINDS, make_adversarial_set
from ..adversarial.discernment import DiscernmentRow, DiscernmentTable, discernment_table
from ..adversarial.heldout import with_held_out_reference
from ..compare import RunComparison
from ..config import Config, JudgeConfig, load_config, user_data_dir
from ..describe import DatasetSummary
from ..describe import describe as describe_dataset
from ..judge_diagnostics import ConfusionView, JudgeDiagnostics
from ..judges.backends import make_backend
from ..judges.backends.llama import available_cores
from ..judges.constraint import AnswerConstraint
from ..judges.cost import RunUsage, money_text, usage_summary
from ..judges.events import RunFinished
from ..judges.labels import LabelReport, run_label_report
from ..judges.pairwise import PairSetting, plan_pairs
from ..judges.pairwise_report import SUMMARY_COLUMNS as PAIRWISE_SUMMARY_COLUMNS
from ..judges.pairwise_report import PairwiseReport, pairwise_report
from ..judges.pairwise_report import summary_notes as pairwise_summary_notes
from ..judges.pairwise_report import summary_rows as pairwise_summary_rows
from ..judges.personas import Persona, save_persona
from ..judges.runs import RunConfig
from ..judges.status import Part, RunState, RunStatus, problem_lines, status_line
from ..judges.store import Review, RunRecord, RunStore, StoreError
from ..judges.templates import Template
from ..judges.types import JudgeBackend, Judgment, OutputKind, RenderedPrompt, ScoringMode
from ..judging import NO_PERSONA, infer_quality, preferred_mode
from ..label_rows import HEADER as LABEL_ROWS_HEADER
from ..label_rows import confusion_rows as label_confusion_rows
from ..label_rows import summary_rows as label_summary_rows
from ..label_rows import tie_lines as label_tie_lines
from ..loaders import save_dataset
from ..metrics import MetricScores, score_examples
from ..registry import DEFAULT_DATASET, DatasetEntry, bundled_path, list_datasets, open_dataset
from ..report import sparkline
from ..review_queue import FlagKind, ReviewCase, human_unit
from ..run_export import FORMAT_LABELS
from ..stats import AgreementCell, AgreementTable, CeilingRow, HumanCeiling, Snapshot, ceiling_table
from ..stats.baselines import LENGTH_EVALUATOR
from ..stats.calibration import Calibration
from ..stats.interjudge import InterJudgeMatrix
from ..stats.label_agreement import is_label_scale
from ..stats.paired import SYMBOLS, PairedComparison, verdict_line
from ..subsets import parse_subset
from ..tuning.report import TuningReport
from ..tuning.search import (
    JudgingProgressed,
    RoundStarted,
    SearchCancelled,
    SearchEvent,
    SearchFinished,
    SearchStarted,
    TuningSearch,
    VariantScored,
    save_search_record,
)
from ..tuning.space import SearchSpace, load_space
from ..tuning.winner import save_winner as save_winner_file
from ..tuning.winner import variant_template
from ..workspace import POOL, AgreementInputs, Workspace, judge_evaluator
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
from .review import REVIEW_FORMAT_LABELS, REVIEW_FORMATS, ReviewData, check_review_formats, export_reviews, review_data
from .view import compare_columns, is_length_baseline, item_metric_scores, judges_as_labels, stored_run_of

__all__ = [
    "compare_columns",
    "is_length_baseline",
    "item_metric_scores",
    "judges_as_labels",
    "stored_run_of",
    "AgreementCell",
    "AgreementInputs",
    "AgreementTable",
    "AnswerConstraint",
    "Calibration",
    "CeilingRow",
    "Config",
    "ConfusionView",
    "DEFAULT_DATASET",
    "DatasetEntry",
    "DatasetSummary",
    "DiscernmentRow",
    "DiscernmentTable",
    "FORMAT_LABELS",
    "FewShotCache",
    "FlagKind",
    "HumanCeiling",
    "InterJudgeMatrix",
    "JudgeBackend",
    "JudgeConfig",
    "JudgeDiagnostics",
    "JudgingProgressed",
    "Judgment",
    "KINDS",
    "LABEL_ROWS_HEADER",
    "LAB_SOURCE",
    "LENGTH_EVALUATOR",
    "LabelReport",
    "MetricScores",
    "NO_PERSONA",
    "OutputKind",
    "PAIRWISE_SUMMARY_COLUMNS",
    "POOL",
    "PairSetting",
    "PairedComparison",
    "PairwiseReport",
    "Part",
    "Persona",
    "PreparedPrompt",
    "PromptSetup",
    "REVIEW_FORMATS",
    "REVIEW_FORMAT_LABELS",
    "RenderedPrompt",
    "Review",
    "ReviewCase",
    "ReviewData",
    "RoundStarted",
    "RunComparison",
    "RunConfig",
    "RunFinished",
    "RunRecord",
    "RunState",
    "RunStatus",
    "RunStore",
    "RunUsage",
    "SYMBOLS",
    "SavedTemplate",
    "ScoringMode",
    "SearchCancelled",
    "SearchEvent",
    "SearchFinished",
    "SearchSpace",
    "SearchStarted",
    "Snapshot",
    "StoreError",
    "Template",
    "TuningReport",
    "TuningSearch",
    "VariantScored",
    "Workspace",
    "ask_judge",
    "available_cores",
    "bundled_path",
    "ceiling_table",
    "check_persona_name",
    "check_review_formats",
    "describe_dataset",
    "discernment_table",
    "export_reviews",
    "human_unit",
    "infer_quality",
    "is_label_scale",
    "judge_evaluator",
    "judge_key",
    "label_confusion_rows",
    "label_summary_rows",
    "label_tie_lines",
    "list_datasets",
    "load_config",
    "load_space",
    "make_adversarial_set",
    "make_backend",
    "money_text",
    "open_dataset",
    "pairwise_report",
    "pairwise_summary_notes",
    "pairwise_summary_rows",
    "parse_subset",
    "plan_pairs",
    "preferred_mode",
    "prepare_prompt",
    "problem_lines",
    "review_data",
    "run_label_report",
    "save_dataset",
    "save_edited_template",
    "save_persona",
    "save_search_record",
    "save_winner_file",
    "score_examples",
    "sparkline",
    "status_line",
    "trial_judgment",
    "trial_request",
    "usage_summary",
    "user_data_dir",
    "variant_template",
    "verdict_line",
    "with_held_out_reference",
]
