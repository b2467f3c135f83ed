"""The Review screen's work: a run's review queue, saving verdicts, exporting the reviewed labels.

The queue itself is core's (:mod:`dialjudge.core.review_queue`); reading it
means reading the run store and maybe a dataset, so it happens on a worker
and the screen that asked receives :class:`ReviewQueueBuilt`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import (
    ReviewData,
    export_reviews,
    review_data,
    save_review,
)
from dialjudge.core.api.align import AlignHandle, AlignReport, AlignRequest, open_align
from dialjudge.core.api.events import SearchCancelled
from dialjudge.core.api.review import check_review_formats
from dialjudge.core.api.run_worker import WorkerAlignHandle, runs_in_worker, start_align_in_worker
from dialjudge.core.api.types import Review
from dialjudge.core.model import Dataset

from .base import start_thread_work
from .history import FilesExported, dataset_for

if TYPE_CHECKING:
    from ..services import Services
    from .datasets import DatasetController

REVIEW_GROUP = "review-queue"
REVIEW_SAVE_GROUP = "review-save"
#: The Review screen's run picker lists in its own group (the Runs screen's listing is another).
REVIEW_RUNS_GROUP = "review-runs"
EXPORT_GROUP = "export"
ALIGN_GROUP = "align"


@dataclass
class ReviewQueueBuilt(Message):
    """A run's judgments were read and its items worth a review were found."""

    data: ReviewData


@dataclass
class ReviewSaved(Message):
    """A reviewer's verdict on one item was stored."""

    review: Review


@dataclass
class AlignCancelled(Message):
    """The alignment was cancelled (Esc); the variants judged so far are stored and a rerun reuses them."""

    run_id: int


@dataclass
class AlignFinished(Message):
    """The alignment of a run's judge to the user's corrections was judged and reported."""

    report: AlignReport


class ReviewController:
    """Reads review queues and stores and exports reviews."""

    def __init__(self, app: App[Any], services: Services, datasets: DatasetController) -> None:
        self.app = app
        self.services = services
        self.datasets = datasets
        #: The alignment being judged (in the judge process, followed from a worker thread; Esc cancels it).
        self._align: AlignHandle | WorkerAlignHandle | None = None

    def _review_data(self, run_id: int, current: Dataset | None) -> ReviewData:
        return review_data(self.services.session, run_id, lambda config: dataset_for(self.services, config, current))

    def load_queue(self, run_id: int, reply_to: MessagePump) -> Worker[None]:
        """Read run ``run_id`` and flag its items; ``reply_to`` receives :class:`ReviewQueueBuilt`."""
        current = self.datasets.workspace.dataset

        def load() -> None:
            data = self._review_data(run_id, current)
            if not get_current_worker().is_cancelled:
                reply_to.post_message(ReviewQueueBuilt(data))

        return start_thread_work(self.app, load, group=REVIEW_GROUP, description="Finding items to review")

    def save(self, run_id: int, item_id: str, verdict: str, reply_to: MessagePump, *, note: str = "",
             own_rating: float | None = None) -> Worker[None]:
        """Store a reviewer's verdict on one item; ``reply_to`` receives :class:`ReviewSaved`."""

        def save() -> None:
            review = save_review(self.services.session, run_id, item_id, verdict, note=note, own_rating=own_rating)
            reply_to.post_message(ReviewSaved(review))

        # Not exclusive: two quick verdicts on two items must both be stored.
        return start_thread_work(self.app, save, group=REVIEW_SAVE_GROUP, description="Saving the review",
                                 exclusive=False)

    def export(self, run_id: int, folder: Path, formats: Sequence[str], reply_to: MessagePump) -> Worker[None]:
        """Write every judged item's label (manual ones marked) with its review; ``reply_to`` receives
        :class:`FilesExported`."""
        current = self.datasets.workspace.dataset
        chosen = tuple(formats)

        def export() -> None:
            check_review_formats(chosen)  # before the run is read: a bad choice fails at once
            paths = export_reviews(self._review_data(run_id, current), folder, chosen)
            reply_to.post_message(FilesExported(f"run {run_id}'s reviewed labels", paths))

        return start_thread_work(self.app, export, group=EXPORT_GROUP, description="Exporting the reviews")

    def align(self, run_id: int, reply_to: MessagePump) -> Worker[None]:
        """Align run ``run_id``'s judge to the own ratings and notes given in Review (what `dialjudge align
        RUN` does), in the session's judge process as runs and searches are; ``reply_to`` receives
        :class:`AlignFinished`, or :class:`AlignCancelled` after :meth:`cancel_align`. A refusal (too few
        corrections), or the judge process's end, is the worker's failure, which the app shows as a
        notification."""
        current = self.datasets.workspace.dataset
        session = self.services.session

        def work() -> None:
            handle: AlignHandle | WorkerAlignHandle
            if runs_in_worker(session):
                handle = start_align_in_worker(session, AlignRequest(run_id), dataset=current)
            else:  # judges that exist only in this process (a test's)
                handle = open_align(session, AlignRequest(run_id), dataset=current)
            self._align = handle
            try:
                report = handle.run_to_end()
            except SearchCancelled:
                reply_to.post_message(AlignCancelled(run_id))
                return
            finally:
                self._align = None
            if not get_current_worker().is_cancelled:
                reply_to.post_message(AlignFinished(report))

        return start_thread_work(self.app, work, group=ALIGN_GROUP,
                                 description=f"Aligning run {run_id}'s judge to your corrections")

    @property
    def align_process_id(self) -> int | None:
        """The id of the judge process aligning (None: no alignment, or one judged in this process)."""
        handle = self._align
        return handle.pid if isinstance(handle, WorkerAlignHandle) else None

    @property
    def aligning(self) -> bool:
        """An alignment is being judged (Esc cancels it)."""
        return self._align is not None

    def cancel_align(self) -> bool:
        """Stop the alignment after the judgments in flight; False when none is running."""
        handle = self._align
        if handle is None:
            return False
        handle.cancel()
        return True
