"""The Runs screen's import of a batch engine's answer file into a run awaiting answers (core.api.batch),
on a worker; the screen is told with :class:`BatchAnswersImported`."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker

from dialjudge.core.api import run_record
from dialjudge.core.api.batch import AnswersImport, import_answers

from .base import start_thread_work
from .history import dataset_for

if TYPE_CHECKING:
    from .history import StoredRunsController

ANSWERS_GROUP = "batch-answers"


@dataclass
class BatchAnswersImported(Message):
    """Answer files were imported into a batch run (what was scored, counted and named)."""

    report: AnswersImport


def import_batch_answers(runs: StoredRunsController, run_id: int, paths: Sequence[Path],
                         reply_to: MessagePump) -> Worker[None]:
    """Import ``paths`` into batch run ``run_id`` (its dataset: the open one when it is that, else read)."""
    current = runs.datasets.workspace.dataset

    def work() -> None:
        config = run_record(runs.services.session, run_id).run_config
        dataset = dataset_for(runs.services, config, current)
        reply_to.post_message(BatchAnswersImported(import_answers(runs.services.session, run_id, paths, dataset)))

    return start_thread_work(runs.app, work, group=ANSWERS_GROUP, description="Importing batch answers")


def import_summary(report: AnswersImport) -> str:
    """One notification's text: what was scored, what was left out and why, where the run stands."""
    counts = ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts.items()))
    first = f" (first: {report.problems[0]})" if report.problems else ""
    state = ("finished: every judgment has an answer" if report.awaiting == 0 else
             f"awaiting {report.awaiting} of {report.total} answers")
    other = "".join(f"; {n} answered by model {model!r}, not the planned one" for model, n in
                    report.other_models.items())
    return (f"Run {report.run_id}: {report.scored_now} answers scored; "
            f"{'lines not scored: ' + counts + first if counts else 'every line used'}{other}; {state}.")
