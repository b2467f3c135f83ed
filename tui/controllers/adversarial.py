"""Adversarial sets: building one, and the discernment table of the open dataset's evaluators.

Building reads the source (the open dataset or a KdConv split from the data
folders), perturbs it and writes a native JSONL file, then opens it; a
DataError or ConfigError from any step reaches the app's one failure handler
as a notification. The discernment table is computed from a copy of the scores
in the compute process (``core/api/decisions_in_worker.py``), so neither the UI
thread nor the app's interpreter works on it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import make_adversarial
from dialjudge.core.api.compute_worker import ComputeCancelled
from dialjudge.core.api.decisions_in_worker import discernment_in_worker
from dialjudge.core.api.types import user_data_dir
from dialjudge.core.errors import ConfigError, DataError

from .base import start_thread_work

if TYPE_CHECKING:
    from dialjudge.core.api.types import DiscernmentTable
    from dialjudge.core.model import Dataset

    from ..scores_view_model import Workspace
    from ..services import Services
    from .datasets import DatasetController

ADVERSARIAL_GROUP = "adversarial-build"
DISCERNMENT_GROUP = "discernment"
#: How the open dataset is named among the dialog's sources.
CURRENT_SOURCE = "current"
KDCONV_PREFIX = "kdconv-"
#: Lines of the build report shown in the notification (the rest says why items were skipped).
SUMMARY_LINES = 2


@dataclass(frozen=True)
class AdversarialRequest:
    """What the "make adversarial set" dialog asks for."""

    #: CURRENT_SOURCE, or kdconv-film / kdconv-music / kdconv-travel.
    source: str
    kinds: tuple[str, ...]
    per_item: int
    n: int
    seed: int
    out: Path
    #: A system of the open dataset whose replies become held-out references (None: none).
    held_out_system: str | None = None


def kdconv_sources(services: Services) -> list[str]:
    """The KdConv splits found in the configured data folders, as source names."""
    return [e.name for e in services.list_datasets() if e.name.startswith(KDCONV_PREFIX) and e.available]


def default_output(source_name: str, seed: int) -> Path:
    """``<user_data_dir>/adversarial/<source>-adv-seed<seed>.jsonl``."""
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", source_name).strip("-.") or "dataset"
    return user_data_dir() / "adversarial" / f"{stem}-adv-seed{seed}.jsonl"


def has_adversarial(dataset: Dataset | None) -> bool:
    return dataset is not None and any(ex.is_adversarial and ex.candidate is not None for ex in dataset.examples)


@dataclass(frozen=True)
class DiscernmentInputs:
    """A frozen copy of what the table needs; safe on another thread."""

    dataset: Dataset
    scores: Mapping[str, Mapping[str, float | None]]
    versions: Mapping[str, int]

    @classmethod
    def of(cls, workspace: Workspace) -> DiscernmentInputs:
        assert workspace.dataset is not None
        return cls(workspace.dataset, workspace.all_scores(),
                   {name: workspace.version(name) for name in workspace.evaluators})


@dataclass
class AdversarialSetBuilt(Message):
    """An adversarial set was built and written to ``path``."""

    path: str
    summary: str
    items: int


@dataclass
class DiscernmentComputed(Message):
    """The discernment table of the workspace's evaluators (``table`` None: no adversarial items)."""

    dataset: Dataset
    versions: dict[str, int]
    table: DiscernmentTable | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DiscernmentComputed)


class AdversarialController:
    """Builds adversarial sets and computes discernment tables."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController) -> None:
        self.app = app
        self.services = services
        self.datasets = datasets

    # -- building a set ----------------------------------------------------------------

    def make_set(self, request: AdversarialRequest) -> Worker[None]:
        """Build and save the set in the background; it is opened when written."""
        current = self.datasets.workspace.dataset

        def build() -> None:
            if request.out.suffix != ".jsonl":
                raise DataError(f"{request.out}: the adversarial set is written as native JSONL; use a .jsonl name")
            made = make_adversarial(self._source(request.source, current), request.out.expanduser(),
                                    kinds=request.kinds, per_item=request.per_item, n=request.n, seed=request.seed,
                                    held_out_reference=request.held_out_system)
            if not get_current_worker().is_cancelled:
                self.app.post_message(AdversarialSetBuilt(str(made.path), made.report.summary(), len(made.dataset)))

        return start_thread_work(self.app, build, group=ADVERSARIAL_GROUP, description="Making the adversarial set")

    def _source(self, source: str, current: Dataset | None) -> Dataset:
        if source == CURRENT_SOURCE:
            if current is None:
                raise ConfigError("open a dataset first, or choose a KdConv source")
            return current
        if not source.startswith(KDCONV_PREFIX):
            raise ConfigError(f"unknown adversarial source {source!r}")
        return self.services.open_dataset(source)

    def set_built(self, message: AdversarialSetBuilt) -> None:
        head = "\n".join(message.summary.splitlines()[:SUMMARY_LINES])
        self.app.notify(f"{head}\nWrote {message.items} items to {message.path}",
                        title="Adversarial set made", timeout=10)
        self.datasets.open(message.path)

    # -- discernment -------------------------------------------------------------------

    def compute_discernment(self, reply_to: MessagePump) -> Worker[None] | None:
        """The discernment table of every evaluator, sent to ``reply_to`` as
        :class:`DiscernmentComputed`; None (nothing started) without adversarial items."""
        workspace = self.datasets.workspace
        if not has_adversarial(workspace.dataset):
            return None
        inputs = DiscernmentInputs.of(workspace)
        session = self.services.session

        def compute() -> None:
            worker = get_current_worker()
            try:  # in the compute process, on the dataset it holds
                table = (discernment_in_worker(session, inputs.dataset, inputs.scores,
                                               is_cancelled=lambda: worker.is_cancelled)
                         if inputs.scores else None)
            except ComputeCancelled:
                return
            if not worker.is_cancelled:
                reply_to.post_message(DiscernmentComputed(inputs.dataset, dict(inputs.versions), table))

        return start_thread_work(self.app, compute, group=DISCERNMENT_GROUP, description="Computing discernment")
