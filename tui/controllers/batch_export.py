"""The Run screen's "write a batch file": the form's run planned as ``judge`` would plan it and its requests
written to a file for a batch engine (core.api.batch.write_batch, the use case ``judge --batch-out`` calls), on
a worker; the screen is told with :class:`BatchWritten`. The run then awaits its answers (the Runs screen
shows how many and imports answer files)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

from dialjudge.core.api import RunRequest, plan_run, run_record
from dialjudge.core.api.batch import BatchExport, batch_state, write_batch
from dialjudge.core.model import Dataset

from ..services import Services
from .base import start_thread_work

BATCH_GROUP = "batch-export"


@dataclass
class BatchWritten(Message):
    """A run's requests were written to batch files; ``state``: where the run stands (awaiting N of M)."""

    export: BatchExport
    state: str


def write_batch_file(app: App[object], services: Services, request: RunRequest, dataset: Dataset, out: Path,
                     reply_to: MessagePump) -> Worker[None]:
    """Plan ``request`` on ``dataset`` and write its requests to ``out`` (split at the provider's limits)."""

    def work() -> None:
        plan = plan_run(request, dataset, services.config)
        exported = write_batch(services.session, plan, dataset, out)
        record = run_record(services.session, exported.run_id)
        if not get_current_worker().is_cancelled:
            reply_to.post_message(BatchWritten(exported, batch_state(record) or record.status.value))

    return start_thread_work(app, work, group=BATCH_GROUP, description="Writing the batch file")


def export_text(exported: BatchExport, state: str) -> str:
    """What the Run screen shows after writing: the files, what was written and where the run stands."""
    files = "\n".join(f"  {f.path} ({f.requests} requests)" for f in exported.files) or "  no file (nothing to ask)"
    lines = [f"Run {exported.run_id}{' (continued: its unanswered judgments)' if exported.continued else ''}: "
             f"wrote {exported.requests} of {exported.total} requests to", files, f"Run {exported.run_id}: {state}."]
    if exported.too_long:
        lines.append(f"{exported.too_long} prompts are longer than the judge's window: stored as failed, not written.")
    lines.append("Submit the file to the OpenAI Batch API or `vllm run-batch`, then import the answers on the Runs "
                 "screen (u, then i).")
    return "\n".join(lines)
