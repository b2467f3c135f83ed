"""The Scores screen's decision statistics: two picked evaluator columns compared, and the judges read as labels.

* :meth:`DecisionController.compare` pairs two evaluator columns of the
  workspace (two judges, a judge and a metric, anything and the response-length
  baseline) against the humans on the view's quality and subset: Δr/Δρ/Δτ with
  the paired bootstrap over contexts, and Williams's test
  (:func:`~dialjudge.core.compare.compare_evaluators`, the numbers
  ``dialjudge runs compare`` prints). The bootstrap is the slow part, so it runs
  in the compute process (``core/api/decisions_in_worker.py``), waited for on a
  thread worker; :class:`EvaluatorsCompared` brings the answer back.
* :meth:`DecisionController.refresh_diagnostics` computes, for the judge columns
  on a binary or ordinal quality, the confusion matrices with plain and
  weighted κ, the reliability of judges that answered with probabilities, and
  with two or more judges the inter-judge matrix
  (:func:`~dialjudge.core.judge_diagnostics.judge_diagnostics`); it follows
  every statistics refresh.

Results are kept here and announced on :attr:`DecisionController.changed`, which the Scores screen follows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.signal import Signal
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import run_config_of
from dialjudge.core.api.compute_worker import ComputeCancelled, judges_as_labels_in_worker
from dialjudge.core.api.decisions_in_worker import compare_columns_in_worker
from dialjudge.core.api.types import (
    LENGTH_EVALUATOR,
    StoreError,
)
from dialjudge.core.api.view import (
    is_length_baseline,
    stored_run_of,
)
from dialjudge.core.errors import ConfigError

from ..state import column_order
from .base import start_thread_work

if TYPE_CHECKING:
    from dialjudge.core.api.types import (
        JudgeDiagnostics,
        PairedComparison,
        RunConfig,
    )

    from ..services import Services
    from .datasets import DatasetController

COMPARE_GROUP = "compare-evaluators"
DIAGNOSTICS_GROUP = "judge-diagnostics"


@dataclass
class EvaluatorsCompared(Message):
    """Two evaluator columns were compared on the view of ``selection_version``."""

    comparison: PairedComparison
    selection_version: int


@dataclass
class DiagnosticsComputed(Message):
    """The judge columns' confusion matrices, calibration and inter-judge matrix for one view."""

    diagnostics: JudgeDiagnostics | None
    selection_version: int


class DecisionController:
    """Keeps the latest paired comparison and judge diagnostics of the current view."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController, *,
                 run_active: Callable[[], bool] = lambda: False) -> None:
        """``run_active`` says whether a run is streaming judgments: the picked pair is then compared
        again only when the view changes, not at every statistics refresh (the bootstrap is not free)."""
        self.app = app
        self.services = services
        self.datasets = datasets
        self.run_active = run_active
        self.comparison: PairedComparison | None = None
        self.diagnostics: JudgeDiagnostics | None = None
        #: The pair last asked for, compared again when the view changes.
        self.pair: tuple[str, str] | None = None
        self.changed: Signal[None] = Signal(app, "decisions-changed")
        #: (selection version, column versions) the pair was last compared at.
        self._compared: tuple[int, ...] = ()
        #: run id -> its configuration (read once per run, to know whether its judges gave probabilities).
        self._run_configs: dict[int, RunConfig | None] = {}

    def choices(self) -> list[str]:
        """The evaluator columns that can be compared: judges, their pool, metrics, the length baseline."""
        ws = self.datasets.workspace
        names = column_order(ws)
        if ws.dataset is not None and any(ex.candidate is not None for ex in ws.dataset.examples):
            names.append(LENGTH_EVALUATOR)
        return names

    def view_refreshed(self) -> None:
        """The view's statistics were recomputed: follow with the diagnostics, and compare the picked
        pair again if the view or either column changed since (dropped if a column is gone)."""
        self.refresh_diagnostics()
        if self.pair is None:
            return
        if not all(name in self.choices() for name in self.pair):
            self.pair, self.comparison = None, None
            self.changed.publish(None)
        elif self._compared != self._versions(*self.pair):
            view_changed = self._compared[:1] != self._versions(*self.pair)[:1]
            if view_changed or not self.run_active():
                self.compare(*self.pair)

    def _versions(self, name_a: str, name_b: str) -> tuple[int, ...]:
        ws = self.datasets.workspace
        return ws.selection_version, ws.version(name_a), ws.version(name_b)

    # -- two columns compared ------------------------------------------------------------

    def compare(self, name_a: str, name_b: str) -> Worker[None]:
        """Compare column B with column A on the current quality and subset, in the background."""
        ws = self.datasets.workspace
        if ws.dataset is None or ws.quality is None:
            raise ConfigError("open a dataset with a numeric quality before comparing evaluators")
        if name_a == name_b:
            raise ConfigError(f"pick two different evaluators (both are {name_a!r})")
        dataset, quality, subset = ws.dataset, ws.quality, ws.subset.spec
        columns = {name: self._column(name) for name in (name_a, name_b)}
        version = ws.selection_version
        n_boot, seed = self.services.n_boot, self.services.seed
        session = self.services.session
        self.pair = (name_a, name_b)
        self._compared = self._versions(name_a, name_b)

        def work() -> None:
            worker = get_current_worker()
            try:  # in the compute process, on the dataset it holds
                result = compare_columns_in_worker(session, dataset, quality, subset, columns, name_a, name_b,
                                                   n_boot=n_boot, seed=seed, is_cancelled=lambda: worker.is_cancelled)
            except ComputeCancelled:
                return
            if not worker.is_cancelled:
                self.app.post_message(EvaluatorsCompared(result, version))

        return start_thread_work(self.app, work, group=COMPARE_GROUP,
                                 description=f"Comparing {name_b} with {name_a}")

    def compared(self, message: EvaluatorsCompared) -> None:
        if message.selection_version != self.datasets.workspace.selection_version:
            return  # computed for a view that is no longer shown
        self.comparison = message.comparison
        self.changed.publish(None)

    def _column(self, name: str) -> dict[str, float | None] | None:
        """A copy of a workspace column (safe on a worker); None for the length baseline, computed there."""
        if is_length_baseline(name):
            return None
        return dict(self.datasets.workspace.scores_of(name))

    # -- the judges as labels ------------------------------------------------------------

    def refresh_diagnostics(self) -> Worker[None] | None:
        """Recompute the judge diagnostics of the current view in the background (None: no judge column)."""
        ws = self.datasets.workspace
        scale = ws.scale
        if ws.dataset is None or ws.quality is None or scale is None or not ws.judge_names:
            if self.diagnostics is not None:
                self.diagnostics = None
                self.changed.publish(None)
            return None
        quality, examples = ws.quality, ws.selected_examples()
        columns = {name: dict(ws.scores_of(name)) for name in ws.judge_names}
        aggregation, version, dataset = ws.aggregation, ws.selection_version, ws.dataset

        item_ids = [ex.id for ex in examples]
        session = self.services.session

        def work() -> None:
            worker = get_current_worker()
            run_configs = {name: self._run_config(name) for name in columns}
            try:  # in the compute process, on the dataset it holds
                result = judges_as_labels_in_worker(session, dataset, item_ids, quality, scale, columns, run_configs,
                                                    aggregation=aggregation, is_cancelled=lambda: worker.is_cancelled)
            except ComputeCancelled:
                return
            if not worker.is_cancelled:
                self.app.post_message(DiagnosticsComputed(result, version))

        return start_thread_work(self.app, work, group=DIAGNOSTICS_GROUP, description="Reading the judges as labels")

    def diagnostics_computed(self, message: DiagnosticsComputed) -> None:
        if message.selection_version != self.datasets.workspace.selection_version:
            return
        self.diagnostics = message.diagnostics
        self.changed.publish(None)

    def _run_config(self, column: str) -> RunConfig | None:
        """The stored run a judge column ("judge#run") came from; None for a column of no stored run.
        Called on the worker; each run is read once."""
        run_id = stored_run_of(column)
        if run_id is None:
            return None
        if run_id not in self._run_configs:
            try:
                config: RunConfig | None = run_config_of(self.services.session, run_id)
            except StoreError:
                config = None
            self._run_configs[run_id] = config  # one dict item set: safe from the worker thread
        return self._run_configs[run_id]
