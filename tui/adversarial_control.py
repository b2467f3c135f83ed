"""Background work for adversarial sets (a mixin of the App): building one, and the discernment table.

Building reads the source (the open dataset or a KdConv split from the data
folders), perturbs it and writes a native JSONL file, then opens it; a
DataError or ConfigError from any step reaches the app's one failure handler
as a notification. The discernment table is cheap, but it is computed from a
copy of the scores on a worker so the UI thread never waits for it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Mapping

from textual import work
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

from . import messages as msg

if TYPE_CHECKING:
    from dialjudge.core.model import Dataset
    from dialjudge.core.workspace import Workspace

    from .services import Services

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


def kdconv_sources(services: "Services") -> list[str]:
    """The KdConv splits found in the configured data folders, as source names."""
    return [e.name for e in services.list_datasets() if e.name.startswith(KDCONV_PREFIX) and e.available]


def default_output(source_name: str, seed: int) -> Path:
    """``<user_data_dir>/adversarial/<source>-adv-seed<seed>.jsonl``."""
    from dialjudge.core.config import user_data_dir

    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", source_name).strip("-.") or "dataset"
    return user_data_dir() / "adversarial" / f"{stem}-adv-seed{seed}.jsonl"


def has_adversarial(dataset: "Dataset | None") -> bool:
    return dataset is not None and any(ex.is_adversarial and ex.candidate is not None for ex in dataset.examples)


@dataclass(frozen=True)
class DiscernmentInputs:
    """A frozen copy of what the table needs; safe on another thread."""

    dataset: "Dataset"
    scores: Mapping[str, Mapping[str, float | None]]
    versions: Mapping[str, int]

    @classmethod
    def of(cls, workspace: "Workspace") -> "DiscernmentInputs":
        assert workspace.dataset is not None
        return cls(workspace.dataset, workspace.all_scores(),
                   {name: workspace.version(name) for name in workspace.evaluators})


class AdversarialControl:
    """Mixed into the App: builds adversarial sets and computes discernment tables."""

    services: "Services"
    workspace: "Workspace"

    # -- building a set ----------------------------------------------------------------

    def make_adversarial_set(self, request: AdversarialRequest) -> Worker:
        """Build and save the set in the background; it is opened when written."""
        return self._build_adversarial_set(request, self.workspace.dataset)

    @work(thread=True, exclusive=True, group=ADVERSARIAL_GROUP, exit_on_error=False,
          description="Making the adversarial set")
    def _build_adversarial_set(self, request: AdversarialRequest, current: "Dataset | None") -> None:
        from dialjudge.core.adversarial.builder import make_adversarial_set
        from dialjudge.core.errors import DataError
        from dialjudge.core.loaders import save_dataset

        if request.out.suffix != ".jsonl":
            raise DataError(f"{request.out}: the adversarial set is written as native JSONL; use a .jsonl name")
        source = self._adversarial_source(request.source, current)
        if request.held_out_system:
            from dialjudge.core.adversarial.heldout import with_held_out_reference

            source, _ = with_held_out_reference(source, request.held_out_system)
        dataset, report = make_adversarial_set(source, kinds=request.kinds, per_item=request.per_item,
                                               n=request.n, seed=request.seed)
        path = save_dataset(dataset, request.out.expanduser())
        if not get_current_worker().is_cancelled:
            self.post_message(msg.AdversarialSetBuilt(str(path), report.summary(), len(dataset)))  # type: ignore[attr-defined]

    def _adversarial_source(self, source: str, current: "Dataset | None") -> "Dataset":
        from dialjudge.core.errors import ConfigError

        if source == CURRENT_SOURCE:
            if current is None:
                raise ConfigError("open a dataset first, or choose a KdConv source")
            return current
        if not source.startswith(KDCONV_PREFIX):
            raise ConfigError(f"unknown adversarial source {source!r}")
        return self.services.open_dataset(source)

    def on_adversarial_set_built(self, message: msg.AdversarialSetBuilt) -> None:
        head = "\n".join(message.summary.splitlines()[:SUMMARY_LINES])
        self.notify(f"{head}\nWrote {message.items} items to {message.path}",  # type: ignore[attr-defined]
                    title="Adversarial set made", timeout=10)
        self.open_dataset(message.path)  # type: ignore[attr-defined]

    # -- discernment -------------------------------------------------------------------

    def compute_discernment(self, reply_to: MessagePump) -> Worker | None:
        """The discernment table of every evaluator, sent to ``reply_to`` as
        :class:`~.messages.DiscernmentComputed`; None (nothing started) without adversarial items."""
        if not has_adversarial(self.workspace.dataset):
            return None
        return self._compute_discernment(DiscernmentInputs.of(self.workspace), reply_to)

    @work(thread=True, exclusive=True, group=DISCERNMENT_GROUP, exit_on_error=False,
          description="Computing discernment")
    def _compute_discernment(self, inputs: DiscernmentInputs, reply_to: MessagePump) -> None:
        from dialjudge.core.adversarial.discernment import discernment_table

        table = discernment_table(inputs.dataset, inputs.scores) if inputs.scores else None
        if not get_current_worker().is_cancelled:
            reply_to.post_message(msg.DiscernmentComputed(inputs.dataset, dict(inputs.versions), table))
