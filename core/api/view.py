"""What the app computes about the view of one open dataset: one item's metrics, two evaluator
columns compared, and the judge columns read as labels.

Columns are plain ``item id -> score`` mappings copied from the workspace,
so each function here is safe to call on a worker thread. The app's view model of the
open dataset (``tui/scores_view_model.py``) computes its running and full statistics with
the functions re-exported here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from ..compare import compare_evaluators
from ..errors import TemplateError
from ..evaluation import compared_items
from ..judge_diagnostics import JudgeDiagnostics, judge_diagnostics, top_point_probabilities
from ..judges.prompts.render import resolve_output
from ..judges.prompts.templates import parse_template
from ..judges.run.config import RunConfig
from ..judges.types import OutputKind
from ..metrics import metric_info, resolve_metric_ids, score_pair
from ..model import Aggregation, Dataset, Example, Scale
from ..stats import RunningCorrelations, agreement_table, human_ceiling
from ..stats.baselines import LENGTH_EVALUATOR, length_scores
from ..stats.paired import PairedComparison
from ..subsets import ALL, Subset, default_subsets, parse_subset

Column = Mapping[str, float | None]

#: Joins a judge's name and its run id in evaluator names: ``smollm2#3``.
RUN_SEPARATOR = "#"


def judge_evaluator(judge: str, run_id: int | None = None) -> str:
    """The evaluator name of one judge's scores from one run."""
    return judge if run_id is None else f"{judge}{RUN_SEPARATOR}{run_id}"


def item_metric_scores(example: Example, metric_ids: Sequence[str] | None = None) -> dict[str, float]:
    """One item's reference-based metric scores by the metrics' labels (``metric_ids`` None: all)."""
    ids = resolve_metric_ids(metric_ids)
    raw = score_pair(example.candidate or "", example.references, example.language, ids)
    return {metric_info(m).label: raw[m] for m in ids if m in raw}


def compare_columns(dataset: Dataset, quality: str, subset: str, columns: Mapping[str, Column | None],
                    name_a: str, name_b: str, *, n_boot: int, seed: int) -> PairedComparison:
    """Column ``name_b`` against column ``name_a`` on the humans' labels of ``quality`` over ``subset``;
    a column given as None is the length baseline (:data:`LENGTH_EVALUATOR`), computed here."""
    scores = {name: (length_scores(dataset.examples) if column is None else column)
              for name, column in columns.items()}
    return compare_evaluators(dataset, scores[name_a], scores[name_b], quality, subset=subset,
                              name_a=name_a, name_b=name_b, n_boot=n_boot, seed=seed)


def is_length_baseline(name: str) -> bool:
    return name == LENGTH_EVALUATOR


def stored_run_of(column: str) -> int | None:
    """The stored run a judge column ("judge#run") came from; None for a column of no stored run."""
    _, separator, run = column.rpartition(RUN_SEPARATOR)
    return int(run) if separator and run.isdigit() else None


def judge_scale(config: RunConfig, dataset: Dataset | None = None) -> tuple[float, float] | None:
    """The range of a run's judge answers on their own scale (likert-1to5: 1-5; a template that rates on the
    quality's own points: those), so a 0-1 score reads as the judge gave it: ``low + score × (high − low)``,
    the ``score`` a judgment stores beside its 0-1 ``normalized`` (what the judgments CSV holds). None for a
    judge answering with labels or pairwise verdicts (its 0-1 value is the only number)."""
    template = parse_template(config.template_text, config.template_source or config.template)
    scale = dataset.qualities.get(config.quality) if dataset is not None and config.quality else None
    try:
        output = resolve_output(template, None, (), config.quality, scale)
    except TemplateError:
        return None
    if output.kind in (OutputKind.LABEL, OutputKind.PAIRWISE) or not output.max > output.min:
        return None
    return float(output.min), float(output.max)


def on_judge_scale(value: float, scale: tuple[float, float]) -> float:
    """A 0-1 judge score on the judge's own scale."""
    low, high = scale
    return low + value * (high - low)


def judges_as_labels(dataset: Dataset, examples: Sequence[Example], quality: str, scale: Scale,
                     columns: Mapping[str, Column], run_config_of: Callable[[str], RunConfig | None], *,
                     aggregation: Aggregation = Aggregation.MEAN) -> JudgeDiagnostics | None:
    """The judge columns' confusion views, calibration and inter-judge matrix over ``examples``; a column
    whose stored run (``run_config_of``) answered with probabilities of the quality's top point is
    calibrated from those. None when there is nothing to show."""
    scored = dict(columns)
    probability: set[str] = set()
    for name, column in columns.items():
        config = run_config_of(name)
        if config is not None and config.quality == quality:
            p = top_point_probabilities(config, dataset, column)
            if p is not None:
                scored[name] = p
                probability.add(name)
    result = judge_diagnostics(examples, quality, scale, scored, probability_judges=probability,
                               aggregation=aggregation)
    return None if result.empty else result


__all__ = ["ALL", "RUN_SEPARATOR", "RunningCorrelations", "Subset", "agreement_table", "compare_columns",
           "compared_items", "default_subsets", "human_ceiling", "is_length_baseline", "item_metric_scores",
           "judge_evaluator", "judge_scale", "judges_as_labels", "on_judge_scale", "parse_subset", "stored_run_of"]
