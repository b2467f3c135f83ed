"""What the app is looking at: one dataset, every evaluator's scores, the chosen quality and subset.

The TUI and its tests reason about this one object. It holds

- the current :class:`Dataset`;
- the reference-based metric scores (one evaluator per metric, named by its label);
- LLM judge scores per (run, judge) as ``{evaluator: {example_id: score | None}}``,
  the score being the judgment's normalised 0-1 value and None a failure;
- the pool of the judges (mean of their normalised scores, as
  :func:`dialjudge.core.judges.post_run.pool.pool_scores` with ``PoolMethod.MEAN``)
  once two or more judge columns are present;
- the chosen quality (a numeric one) and subset;
- a :class:`RunningCorrelations` fed by judgments as they arrive.

Statistics that take time (bootstrap CIs) are computed from an
:class:`AgreementInputs`, a frozen copy that another thread may use while the
workspace keeps changing. Each evaluator has a version number that grows with
every change, so a caller can tell whether a computed table is still current.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Collection, Iterable, Mapping

from dialjudge.core.api.compute_worker import agreement_table_in_worker
from dialjudge.core.api.view import (
    ALL,
    RunningCorrelations,
    Subset,
    agreement_table,
    compared_items,
    default_subsets,
    human_ceiling,
    judge_evaluator,
    parse_subset,
)
from dialjudge.core.model import Aggregation, Dataset, Example, Rating, Scale

from .running_keeper import RunningKeeper

if TYPE_CHECKING:
    from dialjudge.core.api.session import Session
    from dialjudge.core.api.types import AgreementTable, HumanCeiling, Judgment, MetricScores, Snapshot

#: The evaluator name of the judges' pool.
POOL = "pool"
#: The per-item level name core/stats uses for item-level correlations.
ITEM_LEVEL = "turn"

Score = float | None


class EvaluatorKind(str, enum.Enum):
    METRIC = "metric"
    JUDGE = "judge"
    POOL = "pool"


def default_quality(dataset: Dataset) -> str | None:
    """The quality to show first: one called 'overall' if rated, else the first numeric one."""
    return _default_quality(dataset.qualities)


def _default_quality(scales: Mapping[str, Scale]) -> str | None:
    numeric = [name for name, scale in scales.items() if scale.is_numeric]
    for name in numeric:
        if name.lower() == "overall":
            return name
    return numeric[0] if numeric else None


def numeric_qualities(dataset: Dataset) -> list[str]:
    """Qualities rated on a numeric scale: the ones correlations can be computed for."""
    return [name for name, scale in dataset.qualities.items() if scale.is_numeric]


@dataclass(frozen=True)
class AgreementInputs:
    """A frozen copy of what an agreement table needs; safe to use on another thread."""

    examples: tuple[Example, ...]
    scores: Mapping[str, Mapping[str, Score]]
    quality: str
    subset: Subset
    aggregation: Aggregation
    #: Evaluator versions when the copy was taken.
    versions: Mapping[str, int]
    #: The workspace's selection version when the copy was taken.
    selection_version: int
    #: Every judge column (a copy), whose items are where the judges are compared and the human ceiling
    #: computed (:attr:`ceiling_items`); found where the table is computed, not on the UI thread that
    #: takes the copy (55-60 ms at 100,000 items, every refresh of a run's statistics).
    judge_columns: Mapping[str, Mapping[str, Score]] = field(default_factory=dict)

    @property
    def ceiling_items(self) -> frozenset[str] | None:
        """The items the judges are compared on (core.evaluation.compared_items); None: no judge, the whole view."""
        return compared_items(self.subset.select(self.examples), self.judge_columns)

    def table(self, *, n_boot: int = 1000, seed: int = 0, confidence: float = 0.95) -> "AgreementTable":

        return agreement_table(
            self.examples, self.scores, [self.quality], subset=self.subset, levels=(ITEM_LEVEL,),
            aggregation=self.aggregation, n_boot=n_boot, seed=seed, confidence=confidence,
            ceiling_items=self.ceiling_items,
        )

    def table_in_worker(self, session: Session, dataset: Dataset, *, n_boot: int = 1000, seed: int = 0,
                        confidence: float = 0.95,
                        is_cancelled: Callable[[], bool] | None = None) -> "AgreementTable":
        """:meth:`table`, computed in the session's compute process; ``dataset``: the one whose examples
        these are (the process holds a copy of it)."""
        if len(dataset.examples) != len(self.examples):
            raise ValueError("the agreement inputs are not of this dataset")
        return agreement_table_in_worker(
            session, dataset, self.scores, [self.quality], subset=self.subset, levels=(ITEM_LEVEL,),
            aggregation=self.aggregation, n_boot=n_boot, seed=seed, confidence=confidence,
            ceiling_judges=self.judge_columns, is_cancelled=is_cancelled)


def _pool_labels(examples: Iterable[Example], quality: str | None,
                 aggregation: Aggregation) -> dict[str, float | None]:
    """Every example rated on ``quality`` -> its pooled label (None: no value given). Equal ratings
    are often one shared object (the loaders share them), so each is pooled once."""
    pooled: dict[str, float | None] = {}
    if quality is None:
        return pooled
    done: dict[int, tuple[Rating, float | None]] = {}
    for ex in examples:
        rating = ex.ratings.get(quality)
        if rating is None:
            continue
        known = done.get(id(rating))
        if known is None:
            value = rating.aggregate(aggregation).value
            known = done[id(rating)] = (rating, None if value is None else float(value))
        pooled[ex.id] = known[1]
    return pooled


@dataclass(frozen=True)
class PreparedDataset:
    """A dataset with what showing it needs first, computed from it on a worker thread
    (:meth:`Workspace.prepare`): scanning 100,000 items for their scales and pooling their
    ratings takes a second, which the UI thread must not spend. :meth:`Workspace.set_dataset`
    then only swaps it in."""

    dataset: Dataset
    scales: Mapping[str, Scale]
    quality: str | None
    aggregation: Aggregation
    #: Every example rated on ``quality`` -> its pooled label (as ``Workspace.human_label``).
    pooled: Mapping[str, float | None]
    #: A fresh RunningCorrelations of the whole dataset on ``quality`` (None: no numeric quality);
    #: the workspace feeds it, so a PreparedDataset is set once.
    running: RunningCorrelations | None
    running_n_boot: int
    seed: int
    #: The items the running correlations follow (the pooled ones; none without a quality).
    in_scope: frozenset[str] = frozenset()


@dataclass
class Workspace:
    """The state behind the app's screens. Not thread-safe: change it from one thread."""

    aggregation: Aggregation = Aggregation.MEAN
    #: Bootstrap resamples of the running correlations' CIs (``running.snapshot(ci=True)``).
    running_n_boot: int = 200
    seed: int = 0

    dataset: Dataset | None = field(default=None, init=False)
    metric_scores: "MetricScores | None" = field(default=None, init=False)
    quality: str | None = field(default=None, init=False)
    subset: Subset = field(default=ALL, init=False)
    #: Grows whenever the dataset, quality or subset changes.
    selection_version: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self._metric_values: dict[str, dict[str, float]] = {}
        self._judge_scores: dict[str, dict[str, Score]] = {}
        #: Each judge column's own scale (core.api.view.judge_scale), where it has one beside 0-1.
        self._judge_scales: dict[str, tuple[float, float]] = {}
        self._pool: dict[str, Score] = {}
        self._versions: dict[str, int] = {}
        #: The running correlations, kept on a thread of their own (tui/running_keeper.py).
        self.running_keeper = RunningKeeper()
        #: The view changed: the running correlations are rebuilt when next needed (not at every
        #: switch of subset: that read every judge score, a second at 100,000 items).
        self._running_due = False
        #: The items the running correlations follow (the view's rated items).
        self._in_scope: Collection[str] = frozenset()
        #: The judge columns' versions when the running correlations were last asked for.
        self._asked_versions: dict[str, int] | None = None
        self._subsets: list[Subset] | None = None
        # The view asks for scales and labels item by item: both are kept per view (Dataset.qualities
        # returns a new dict at each call, and pooling ratings is not free).
        self._scales: dict[str, Scale] = {}
        self._pooled: dict[str, float | None] | None = None
        self._pooled_view: tuple[object, ...] | None = None
        self._human_labels: dict[str, float | None] | None = None
        self._selected: list[Example] | None = None

    # -- the dataset and the view ------------------------------------------------------

    def prepare(self, dataset: Dataset) -> PreparedDataset:
        """What :meth:`set_dataset` needs, computed from ``dataset`` alone: call it on a worker thread
        (it reads only this workspace's settings), then hand the result to :meth:`set_dataset`."""
        scales = dataset.qualities
        quality = _default_quality(scales)
        pooled = _pool_labels(dataset.examples, quality, self.aggregation)
        running = None
        if quality is not None:
            groups = {ex.id: ex.group_id for ex in dataset.examples if ex.id in pooled}
            running = RunningCorrelations(pooled, groups, n_boot=self.running_n_boot, seed=self.seed)
        return PreparedDataset(dataset, scales, quality, self.aggregation, pooled, running,
                               self.running_n_boot, self.seed,
                               frozenset(pooled) if running is not None else frozenset())

    def set_dataset(self, dataset: Dataset | PreparedDataset) -> None:
        """Start over with a new dataset: every score is dropped, the default quality chosen.
        A :class:`PreparedDataset` (from :meth:`prepare`, on a worker) makes this quick."""
        prepared = dataset if isinstance(dataset, PreparedDataset) else None
        if prepared is not None and (prepared.aggregation, prepared.running_n_boot, prepared.seed) != (
                self.aggregation, self.running_n_boot, self.seed):
            prepared = None  # the settings changed since it was prepared
        if prepared is None:
            prepared = self.prepare(dataset.dataset if isinstance(dataset, PreparedDataset) else dataset)
        self.dataset = prepared.dataset
        self._subsets = None
        self._scales = dict(prepared.scales)
        self.metric_scores = None
        self._metric_values = {}
        self._judge_scores = {}
        self._judge_scales = {}
        self._pool = {}
        self._versions = {}
        self.quality = prepared.quality
        self.subset = ALL
        # What _selection_changed would compute again on this thread is the prepared view: the whole
        # dataset, its pooled labels and a fresh RunningCorrelations.
        self.selection_version += 1
        self._selected = prepared.dataset.examples
        self._pooled = prepared.pooled  # type: ignore[assignment]  # read, never changed in place
        self._pooled_view = (prepared.quality, prepared.aggregation)
        self._human_labels = self._pooled
        running = prepared.running  # made on a worker; the keeper's thread alone uses it from here
        self.running_keeper.reset(lambda: running)
        self._asked_versions = None
        self._running_due = False
        self._in_scope = prepared.in_scope

    def qualities(self) -> list[str]:
        """The qualities the view can show (numeric ones)."""
        return [name for name, scale in self._scales.items() if scale.is_numeric]

    def subsets(self) -> list[Subset]:
        """The subsets worth offering: all, open, closed, adversarial, one per system (kept per dataset)."""
        if self._subsets is None:
            self._subsets = default_subsets(self.dataset) if self.dataset else [ALL]
        return list(self._subsets)

    def set_quality(self, quality: str) -> None:
        if quality not in self.qualities():
            known = ", ".join(self.qualities()) or "none"
            raise ValueError(f"no numeric quality {quality!r} in the dataset (have: {known})")
        if quality != self.quality:
            self.quality = quality
            self._selection_changed()

    def set_subset(self, subset: Subset | str) -> None:
        subset = Subset(subset) if isinstance(subset, str) else subset
        parse_subset(subset.spec)  # raises ValueError naming a bad spec
        if subset != self.subset:
            self.subset = subset
            self._selection_changed()

    @property
    def scale(self) -> Scale | None:
        """The scale of the chosen quality."""
        if self.quality is None:
            return None
        return self._scales.get(self.quality)

    def selected_examples(self) -> list[Example]:
        """The examples of the chosen subset, in dataset order."""
        if self._selected is None:
            self._selected = self.subset.select(self.dataset.examples) if self.dataset else []
        return list(self._selected)

    def _pooled_labels(self) -> dict[str, float | None]:
        """Every example rated on the chosen quality -> its pooled label (None: no value given).

        Kept per quality and aggregation (a new subset keeps them: pooling 100,000 items' ratings
        takes a second), and built aside before it is kept, as a table sorting on a worker reads it."""
        view = (self.quality, self.aggregation)
        if self._pooled is None or self._pooled_view != view:
            pooled = {} if self.dataset is None else _pool_labels(self.dataset.examples, self.quality,
                                                                  self.aggregation)
            self._pooled, self._pooled_view = pooled, view
        return self._pooled

    def pooled_labels(self) -> Mapping[str, float | None]:
        """Every example rated on the chosen quality (any subset) -> its pooled label; read only."""
        return self._pooled_labels()

    def human_label(self, example: Example) -> float | None:
        """The pooled human label of the chosen quality (native scale), None when unrated."""
        return self._pooled_labels().get(example.id)

    def human_labels(self) -> dict[str, float | None]:
        """Pooled labels of the chosen quality for the subset's examples rated on it."""
        # Kept until the view changes: the live panel asks for them at every redraw of a run.
        if self._human_labels is None:
            pooled = self._pooled_labels()
            self._human_labels = {ex.id: pooled[ex.id] for ex in self.selected_examples() if ex.id in pooled}
        return dict(self._human_labels)

    def n_human_labels(self) -> int:
        """How many of the subset's examples are rated on the chosen quality (no copy of the labels)."""
        if self._human_labels is None:
            self.human_labels()  # builds and keeps them
        return len(self._human_labels or ())

    def human_unit(self, example: Example) -> float | None:
        """The pooled human label mapped to 0-1 by the quality's scale."""
        label = self.human_label(example)
        scale = self.scale
        if label is None or scale is None:
            return None
        return scale.normalize(label)

    def disagreement(self, evaluator: str, example: Example) -> float | None:
        """|evaluator score - human label|, both on 0-1; None when either is missing."""
        score = self.scores_of(evaluator).get(example.id)
        human = self.human_unit(example)
        if score is None or human is None or math.isnan(score):
            return None
        return abs(score - human)

    # -- evaluators ----------------------------------------------------------------------

    def set_metric_scores(self, scores: "MetricScores") -> None:
        """The reference-based metrics' scores; each metric is an evaluator named by its label."""
        self.metric_scores = scores
        for name in self._metric_values:
            self._versions.pop(name, None)
        # Not copied (100,000 items a metric, on the UI thread): a MetricScores is not changed once scored.
        self._metric_values = {scores.info(m).label: scores[m] for m in scores.metric_ids}
        for name in self._metric_values:
            self._bump(name)

    @property
    def metric_names(self) -> list[str]:
        return list(self._metric_values)

    @property
    def judge_names(self) -> list[str]:
        return list(self._judge_scores)

    @property
    def has_pool(self) -> bool:
        return len(self._judge_scores) >= 2

    @property
    def evaluators(self) -> list[str]:
        """Metrics, then judges in arrival order, then the pool when there is one."""
        return self.metric_names + self.judge_names + ([POOL] if self.has_pool else [])

    def kind(self, evaluator: str) -> EvaluatorKind:
        if evaluator in self._metric_values:
            return EvaluatorKind.METRIC
        if evaluator in self._judge_scores:
            return EvaluatorKind.JUDGE
        if evaluator == POOL and self.has_pool:
            return EvaluatorKind.POOL
        raise KeyError(f"no evaluator {evaluator!r} (have: {', '.join(self.evaluators) or 'none'})")

    def scores_of(self, evaluator: str) -> Mapping[str, Score]:
        if evaluator in self._metric_values:
            return self._metric_values[evaluator]
        if evaluator in self._judge_scores:
            return self._judge_scores[evaluator]
        if evaluator == POOL and self.has_pool:
            return self._pool
        raise KeyError(f"no evaluator {evaluator!r} (have: {', '.join(self.evaluators) or 'none'})")

    def all_scores(self) -> dict[str, dict[str, Score]]:
        """Every evaluator's scores (copies)."""
        return {name: dict(self.scores_of(name)) for name in self.evaluators}

    @property
    def failures(self) -> dict[str, int]:
        """Per evaluator, the examples it failed on (score None) over the whole dataset."""
        return {name: sum(1 for v in self.scores_of(name).values() if v is None) for name in self.evaluators}

    def version(self, evaluator: str) -> int:
        return self._versions.get(evaluator, 0)

    def add_judgment(self, judgment: "Judgment", run_id: int | None = None) -> str:
        """Record one judgment; returns the evaluator it belongs to.

        Only the first repeat (``repeat == 0``) is a column; later repeats measure
        stability and are left to the run's own reports.
        """
        evaluator = judge_evaluator(judgment.judge, run_id)
        if judgment.repeat != 0:
            return evaluator
        score = None if judgment.failed else judgment.normalized
        self._set_judge_score(evaluator, judgment.item_id, score)
        return evaluator

    def set_judge_scale(self, evaluator: str, scale: tuple[float, float] | None) -> None:
        """The judge column's own scale (its answers' range): its cells show the score on it."""
        if scale is None:
            self._judge_scales.pop(evaluator, None)
        else:
            self._judge_scales[evaluator] = scale

    def judge_scale(self, evaluator: str) -> tuple[float, float] | None:
        """A judge column's own scale, None for a column without one (metrics, the pool, label judges)."""
        return self._judge_scales.get(evaluator)

    def add_judge_scores(self, evaluator: str, scores: Mapping[str, Score]) -> None:
        """Record many scores of one judge column at once (a finished run read from the store)."""
        for item_id, score in scores.items():
            self._set_judge_score(evaluator, item_id, score)

    def remove_evaluator(self, evaluator: str) -> None:
        """Drop a judge column (metrics go with their dataset)."""
        if evaluator not in self._judge_scores:
            raise KeyError(f"no judge column {evaluator!r}")
        del self._judge_scores[evaluator]
        self._judge_scales.pop(evaluator, None)
        self._versions.pop(evaluator, None)
        self._recompute_pool()
        self._rebuild_running()

    def _set_judge_score(self, evaluator: str, item_id: str, score: Score) -> None:
        self._ensure_running()
        new_column = evaluator not in self._judge_scores
        self._judge_scores.setdefault(evaluator, {})[item_id] = score
        self._bump(evaluator)
        keeper, in_scope = self.running_keeper, self._in_scope
        if item_id in in_scope:
            keeper.add(evaluator, item_id, score)
        if new_column and len(self._judge_scores) == 2:
            self._recompute_pool()  # the pool appears with the second judge column
            keeper.add_column(POOL, dict(self._pool), in_scope)
        elif self.has_pool:
            pooled = self._pool_value(item_id)
            self._pool[item_id] = pooled
            self._bump(POOL)
            if item_id in in_scope:
                keeper.add(POOL, item_id, pooled)

    def _pool_value(self, item_id: str) -> Score:
        values = [scores[item_id] for scores in self._judge_scores.values()
                  if scores.get(item_id) is not None]
        return math.fsum(values) / len(values) if values else None  # type: ignore[arg-type]

    def _recompute_pool(self) -> None:
        self._pool = {}
        if self.has_pool:
            # An item only the widest column scored pools to that score (the mean of one value is the value):
            # copy that column (a C loop) and work out only the items another column scored too. A second
            # judge column arrives with one score: the pool of 100,000 items took the UI thread ~50 ms item by item.
            columns = sorted(self._judge_scores.values(), key=len)
            pool = dict(columns[-1])
            for column in columns[:-1]:
                for item_id in column:
                    pool[item_id] = self._pool_value(item_id)
            self._pool = pool
            self._bump(POOL)
        else:
            self._versions.pop(POOL, None)

    def _bump(self, evaluator: str) -> None:
        self._versions[evaluator] = self._versions.get(evaluator, 0) + 1

    # -- statistics ----------------------------------------------------------------------

    def agreement_inputs(self, evaluators: Iterable[str] | None = None) -> AgreementInputs:
        """A frozen copy of the scores (of ``evaluators``; None: all) and the view, for an
        agreement table on another thread."""
        if self.dataset is None or self.quality is None:
            raise ValueError("no dataset with a numeric quality is open")
        names = self.evaluators if evaluators is None else [n for n in self.evaluators if n in set(evaluators)]
        # Judge columns change as judgments arrive, so they are copied; metric columns never change.
        scores = {name: self._metric_values[name] if name in self._metric_values else dict(self.scores_of(name))
                  for name in names}
        judges = {name: scores[name] if name in scores and name not in self._metric_values else dict(column)
                  for name, column in self._judge_scores.items()}
        return AgreementInputs(
            examples=tuple(self.dataset.examples),
            scores=scores,
            quality=self.quality,
            subset=self.subset,
            aggregation=self.aggregation,
            versions={name: self.version(name) for name in names},
            selection_version=self.selection_version,
            judge_columns=judges,
        )

    def agreement_table(self, *, n_boot: int = 1000, seed: int | None = None) -> "AgreementTable":
        """Every evaluator against the humans on the chosen quality and subset, with CIs."""
        return self.agreement_inputs().table(n_boot=n_boot, seed=self.seed if seed is None else seed)

    def agreement_records(self, *, n_boot: int = 1000, seed: int | None = None,
                          include_ceiling: bool = True) -> list[dict]:
        """The agreement table as flat records (what the exporters in core/report take)."""
        return self.agreement_table(n_boot=n_boot, seed=seed).to_records(include_ceiling=include_ceiling)

    def ceiling_items(self) -> frozenset[str] | None:
        """The items of the view that the judge columns are compared on (None: no judge column)."""
        return compared_items(self.selected_examples(), self._judge_scores)

    def ceiling(self) -> "HumanCeiling | None":
        """The human-human ceiling of the chosen quality on the items the judges are compared on
        (the whole view when no judge is shown)."""
        if self.quality is None:
            return None

        items = self.ceiling_items()
        examples = self.selected_examples()
        return human_ceiling(examples if items is None else [ex for ex in examples if ex.id in items], self.quality,
                             seed=self.seed)

    def running_snapshots(self, *, ranks: bool = True, ci: bool = False) -> dict[str, "Snapshot"]:
        """Live correlations of the judge columns (and the pool) on the chosen quality and subset, with every
        score so far. Waits for the keeper's thread: not for the UI thread (it has :meth:`live_snapshots`)."""
        if not self._judge_scores:
            return {}
        self._ensure_running()
        return self.running_keeper.now(ranks=ranks, ci=ci)

    def live_snapshots(self, *, ask: bool = True) -> dict[str, "Snapshot"]:
        """The live correlations last computed, without waiting; ``ask``: where scores changed since the
        last question, newer ones are computed in the background (``running_keeper.computed`` says when)."""
        if not self._judge_scores:
            return {}
        self._ensure_running()
        if ask and self._asked_versions != self._versions:
            self._asked_versions = dict(self._versions)
            self.running_keeper.ask()
        return self.running_keeper.latest()

    def _selection_changed(self) -> None:
        self.selection_version += 1
        self._human_labels = None
        self._selected = None
        self._rebuild_running()

    def _rebuild_running(self) -> None:
        """Rebuild the running correlations for the current view when next needed."""
        self._in_scope = frozenset()
        self._running_due = True

    def _ensure_running(self) -> None:
        if self._running_due:
            self._running_due = False
            self._build_running()

    def _build_running(self) -> None:
        """Give the keeper a fresh RunningCorrelations of the current view, fed the judge scores in it: built
        and fed on the keeper's thread, from copies of the scores (taking a copy is a C loop; feeding is not)."""
        self._asked_versions = None
        if self.dataset is None or self.quality is None:
            self._in_scope = frozenset()
            self.running_keeper.reset(lambda: None)
            return
        human = self.human_labels()
        selected = self.selected_examples()
        n_boot, seed = self.running_n_boot, self.seed
        self._in_scope = in_scope = human.keys()

        def build() -> RunningCorrelations:
            groups = {ex.id: ex.group_id for ex in selected if ex.id in human}
            return RunningCorrelations(human, groups, n_boot=n_boot, seed=seed)

        keeper = self.running_keeper
        keeper.reset(build)
        for name in self.judge_names + ([POOL] if self.has_pool else []):
            keeper.add_column(name, dict(self.scores_of(name)), in_scope)
