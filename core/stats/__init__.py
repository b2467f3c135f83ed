"""Agreement statistics: how well a metric or judge agrees with human ratings.

correlation: Pearson/Spearman/Kendall with p-values and bootstrap CIs, turn and system level.
categorical: percent agreement, Cohen's kappa, Krippendorff's alpha.
ceiling: agreement among the annotators themselves (leave-one-out, alpha, kappa).
table: the evaluator x quality x level table the CLI, exporters and TUI render.
running: live correlations for a run in progress.
"""

from .categorical import (
    CategoricalResult,
    categorical_agreement,
    cohen_kappa,
    krippendorff_alpha,
    percent_agreement,
)
from .ceiling import AnnotatorAgreement, CeilingRow, HumanCeiling, ceiling_table, human_ceiling
from .correlation import Coefficient, CorrelationResult, correlate, system_level
from .human import HumanLabels, annotator_matrix, human_labels
from .running import RunningCorrelations, Snapshot
from .table import (
    AgreementCell,
    AgreementTable,
    CategoricalTable,
    Exclusions,
    agreement_table,
    categorical_table,
)

__all__ = [
    "AgreementTable", "AnnotatorAgreement", "CategoricalResult", "CeilingRow", "CategoricalTable", "AgreementCell", "Coefficient",
    "CorrelationResult", "Exclusions", "HumanCeiling", "HumanLabels", "RunningCorrelations", "Snapshot",
    "agreement_table", "annotator_matrix", "categorical_agreement", "categorical_table", "ceiling_table", "cohen_kappa",
    "correlate", "human_ceiling", "human_labels", "krippendorff_alpha", "percent_agreement", "system_level",
]
