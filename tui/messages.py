"""Messages the app's workers post, named as what happened.

Thread workers never touch widgets: they post one of these to the app, whose
handlers change the workspace and tell the screens. Progress messages collapse
(``can_replace``), so a burst of them costs one redraw.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from dialjudge.core.adversarial.discernment import DiscernmentTable
    from dialjudge.core.describe import DatasetSummary
    from dialjudge.core.judges.events import RunProgress, RunSummary
    from dialjudge.core.judges.types import Judgment
    from dialjudge.core.metrics import MetricScores
    from dialjudge.core.model import Dataset
    from dialjudge.core.stats import AgreementTable, CeilingRow
    from dialjudge.core.workspace import AgreementInputs


class DatasetLoaded(Message):
    """A dataset was read and described."""

    def __init__(self, name: str, dataset: "Dataset", summary: "DatasetSummary",
                 ceilings: "list[CeilingRow]") -> None:
        super().__init__()
        self.name = name
        self.dataset = dataset
        self.summary = summary
        self.ceilings = ceilings


class MetricsProgressed(Message):
    """Reference-based metrics scored ``done`` of ``total`` pairs."""

    def __init__(self, dataset: "Dataset", done: int, total: int) -> None:
        super().__init__()
        self.dataset = dataset
        self.done = done
        self.total = total

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, MetricsProgressed)


class MetricsScored(Message):
    """Every reference-based metric was computed for ``dataset``."""

    def __init__(self, dataset: "Dataset", scores: "MetricScores") -> None:
        super().__init__()
        self.dataset = dataset
        self.scores = scores


class StatsRefreshed(Message):
    """An agreement table (with bootstrap CIs) was computed from ``inputs``."""

    def __init__(self, inputs: "AgreementInputs", table: "AgreementTable") -> None:
        super().__init__()
        self.inputs = inputs
        self.table = table


class ItemScored(Message):
    """The reference-based metrics of one item (for the item view)."""

    def __init__(self, example_id: str, scores: dict[str, float]) -> None:
        super().__init__()
        self.example_id = example_id
        self.scores = scores


class RunStarted(Message):
    def __init__(self, run_id: int, total: int, done: int, resumed: bool) -> None:
        super().__init__()
        self.run_id = run_id
        self.total = total
        self.done = done
        self.resumed = resumed


class JudgmentScored(Message):
    """One judgment of a running run was stored."""

    def __init__(self, run_id: int | None, judgment: "Judgment", done: int, total: int) -> None:
        super().__init__()
        self.run_id = run_id
        self.judgment = judgment
        self.done = done
        self.total = total


class RunProgressed(Message):
    def __init__(self, run_id: int | None, progress: "RunProgress") -> None:
        super().__init__()
        self.run_id = run_id
        self.progress = progress

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, RunProgressed)


class RunFinished(Message):
    """A run stopped: finished, or cancelled (resumable)."""

    def __init__(self, run_id: int, status: str, summary: "RunSummary") -> None:
        super().__init__()
        self.run_id = run_id
        self.status = status
        self.summary = summary


class RunFailed(Message):
    def __init__(self, error: str, run_id: int | None) -> None:
        super().__init__()
        self.error = error
        self.run_id = run_id


class AdversarialSetBuilt(Message):
    """An adversarial set was built and written to ``path``."""

    def __init__(self, path: str, summary: str, items: int) -> None:
        super().__init__()
        self.path = path
        self.summary = summary
        self.items = items


class DiscernmentComputed(Message):
    """The discernment table of the workspace's evaluators (``table`` None: no adversarial items)."""

    def __init__(self, dataset: "Dataset", versions: dict[str, int], table: "DiscernmentTable | None") -> None:
        super().__init__()
        self.dataset = dataset
        self.versions = versions
        self.table = table

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, DiscernmentComputed)
