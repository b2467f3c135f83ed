"""Writing a run's requests as a batch file (the OpenAI Batch API's input format, which vLLM's
``run-batch`` reads too): one line per judgment, ``{"custom_id", "method", "url", "body"}``.

The run is planned exactly as the engine plans a live one (.run.work_plan: the same judgments in the
same order, rendered by the same renderer, keyed by the same cache keys) and each body is the one the
judge's OpenAI-compatible backend would send (``OpenAIBackend.request_body``). The run is stored with
status ``awaiting`` until its answers are imported. A custom id names the run, the judgment's place in
the plan and the start of its cache key, so an answer is matched to exactly the request it answers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import orjson

from ...errors import BackendError, ConfigError
from ...model import Dataset, Example
from ..run.config import RunConfig
from ..run.engine import TemplateRenderer
from ..run.events import RunStatus
from ..run.work_plan import Work, make_work, wanted_judgments
from ..store.provenance import run_environment
from ..store.run_store import JudgmentKey, RunRecord, RunStore
from ..types import BackendResult, JudgeBackend, JudgeRequest, Judgment, ScoringMode

#: The OpenAI Batch API's limits on one input file.
MAX_REQUESTS_PER_FILE = 50_000
MAX_BYTES_PER_FILE = 200 * 1024 * 1024
#: Characters of the cache key a custom id carries: enough to tell a changed request from the planned one.
KEY_CHARS = 12
CUSTOM_ID_PREFIX = "dj"


class BatchBackend(Protocol):
    """What a judge's backend must offer for its requests to be written to a batch file (OpenAIBackend)."""

    name: str
    identity: str
    model: str

    def request_body(self, request: JudgeRequest) -> tuple[str, dict[str, Any]]: ...

    def result_from_body(self, request: JudgeRequest, body: Any, *, path: str) -> BackendResult: ...

    def settle_without_server(self, mode: ScoringMode) -> None: ...


def custom_id(run_id: int, index: int, cache_key: str) -> str:
    return f"{CUSTOM_ID_PREFIX}{run_id}-{index}-{cache_key[:KEY_CHARS]}"


def parse_custom_id(text: str) -> tuple[int, int, str] | None:
    """(run id, the judgment's place in the plan, the start of its cache key), or None: not one of ours."""
    if not text.startswith(CUSTOM_ID_PREFIX):
        return None
    parts = text[len(CUSTOM_ID_PREFIX):].split("-")
    if len(parts) != 3 or not parts[0].isdigit() or not parts[1].isdigit():
        return None
    return int(parts[0]), int(parts[1]), parts[2]


def batch_backends(config: RunConfig, backends: Mapping[str, JudgeBackend]) -> dict[str, BatchBackend]:
    """Every judge's backend, checked to write batch requests, with its probability way settled
    from its options (BackendError or ConfigError says why a judge cannot be batched)."""
    out: dict[str, BatchBackend] = {}
    for spec in config.judges:
        backend = backends[spec.name]
        if not callable(getattr(backend, "request_body", None)):
            raise ConfigError(
                f"judge {spec.name!r} runs on backend {spec.config.backend!r}: a batch file is for a judge "
                "behind an OpenAI-compatible API (backend \"openai\" with base_url and model: the OpenAI "
                "Batch API, vLLM's run-batch)")
        batch: BatchBackend = backend  # type: ignore[assignment]
        batch.settle_without_server(config.mode)
        out[spec.name] = batch
    return out


@dataclass
class BatchPlan:
    """A batch run's judgments as the engine plans them: each wanted judgment's place, its work."""

    config: RunConfig
    wanted: list[JudgmentKey]
    works: list[Work]
    #: Judgments whose prompt does not fit the judge's window: failures, as in a live run.
    too_long: list[Judgment]
    backends: dict[str, BatchBackend]
    index: dict[JudgmentKey, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.index = {key: n for n, key in enumerate(self.wanted)}

    def place(self, work: Work) -> int:
        return self.index[JudgmentKey(work.request.item_id, work.variant.label, work.request.repeat)]


def plan_batch(config: RunConfig, dataset: Dataset, backends: Mapping[str, JudgeBackend], *,
               pending: Callable[[list[JudgmentKey]], Sequence[JudgmentKey]] | None = None,
               context_order_seed: int | None, fewshot_pool: Sequence[Example] | None = None) -> BatchPlan:
    """The run's judgments as the engine would do them (``pending``: of the wanted ones, those still to do)."""
    batch = batch_backends(config, backends)
    variants = config.variants()
    items, wanted = wanted_judgments(config, variants, dataset, context_order_seed)
    renderer = TemplateRenderer(config, list(fewshot_pool) if fewshot_pool is not None else list(dataset.examples))
    works, too_long = make_work(config, variants, items, wanted if pending is None else pending(wanted), renderer,
                                dict(backends))
    return BatchPlan(config, wanted, works, too_long, batch)


@dataclass(frozen=True)
class BatchFile:
    path: str
    requests: int
    sha256: str


def write_requests(plan: BatchPlan, run_id: int, out: Path, *, max_requests: int = MAX_REQUESTS_PER_FILE,
                   max_bytes: int = MAX_BYTES_PER_FILE) -> list[BatchFile]:
    """Write one request line per work, split at the provider's limits: ``out`` when one file holds
    them all, else ``out``'s stem with -1, -2, ... A line carries no API key (the provider takes it
    when the file is uploaded)."""
    out = Path(out)
    files: list[BatchFile] = []
    parts: list[Path] = []
    handle: Any = None
    digest = hashlib.sha256()
    count = size = 0

    def close() -> None:
        if handle is not None:
            handle.close()
            files.append(BatchFile(str(parts[-1]), count, digest.hexdigest()))

    try:
        for work in plan.works:
            backend = plan.backends[work.variant.judge.name]
            try:
                path, body = backend.request_body(work.request)
            except BackendError as exc:  # a constraint this API cannot hold: before any file is kept
                raise ConfigError(str(exc)) from None
            line = orjson.dumps({"custom_id": custom_id(run_id, plan.place(work), work.cache_key),
                                 "method": "POST", "url": "/v1" + path, "body": body}) + b"\n"
            if handle is None or count >= max_requests or size + len(line) > max_bytes:
                close()
                parts.append(out.with_name(f"{out.stem}-{len(parts) + 1}{out.suffix}"))
                handle = open(parts[-1], "wb")  # noqa: SIM115 - closed by close()
                digest, count, size = hashlib.sha256(), 0, 0
            handle.write(line)
            digest.update(line)
            count += 1
            size += len(line)
        close()
        handle = None
    except BaseException:
        if handle is not None:
            handle.close()
        for part in parts:
            part.unlink(missing_ok=True)
        raise
    if len(files) == 1:  # one file: the name asked for
        Path(files[0].path).replace(out)
        files = [BatchFile(str(out), files[0].requests, files[0].sha256)]
    return files


def start_batch_run(store: RunStore, plan: BatchPlan, *, context_order_seed: int | None) -> int:
    """Store the run, awaiting its answers, with what a live run records and how it is batched."""
    config = plan.config
    snapshot = {**config.to_dict(), "environment": run_environment(plan.backends),
                "batch": {"context_order_seed": context_order_seed, "files": [], "imports": []}}
    run_id = store.runs.create_run(snapshot, config.fingerprint, name=config.name, total=len(plan.wanted))
    store.runs.set_status(run_id, RunStatus.AWAITING_ANSWERS)
    for judgment in plan.too_long:
        store.judgments.add_judgment(run_id, judgment)
    return run_id


def batch_info(record: RunRecord) -> dict[str, Any] | None:
    """What a batch run recorded (its files, imports, order seed); None for a run not batched."""
    info = record.config.get("batch")
    return info if isinstance(info, dict) else None


def record_files(store: RunStore, record: RunRecord, files: Sequence[BatchFile]) -> None:
    info = dict(batch_info(record) or {})
    info["files"] = [*info.get("files", []), *({"path": f.path, "requests": f.requests, "sha256": f.sha256}
                                                for f in files)]
    store.runs.set_config_entry(record.id, "batch", info)
