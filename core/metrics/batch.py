"""Score many examples at once (the engine path), or one pair (the item view).

Only turn-level examples with a candidate and at least one non-blank reference
are scored; an example whose candidate *is* the reference (USR's "Original
Ground Truth") is skipped, since a reference scored against itself says nothing.
Every skipped example is counted under its reason.
"""

from __future__ import annotations

import enum
import math
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from ..gc_pause import gc_paused
from ..model import Example, Level
from .engine import MetricEngine
from .language import is_chinese
from .registry import DEFAULT_PROFILE, MetricInfo, families_of, metric_info, resolve_metric_ids, unavailable_reason

#: Below this many pairs a process pool costs more (start-up, WordNet per worker) than it saves.
POOL_MIN_PAIRS = 4000


class SkipReason(str, enum.Enum):
    DIALOG_LEVEL = "dialog level"
    REFERENCE_ITSELF = "reference itself"
    NO_CANDIDATE = "no candidate"
    NO_REFERENCE = "no reference"


@dataclass(frozen=True)
class ScoringPair:
    example_id: str
    candidate: str
    references: tuple[str, ...]
    chinese: bool


@dataclass
class MetricScores:
    """Per metric, example id -> score on 0-1; plus what was skipped and why."""

    metrics: tuple[MetricInfo, ...]
    values: dict[str, dict[str, float]]
    skipped: dict[SkipReason, list[str]] = field(default_factory=dict)

    @property
    def metric_ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.metrics)

    def __getitem__(self, metric_id: str) -> dict[str, float]:
        return self.values[metric_id]

    def info(self, metric_id: str) -> MetricInfo:
        for metric in self.metrics:
            if metric.id == metric_id:
                return metric
        raise KeyError(metric_id)

    @property
    def n_scored(self) -> int:
        return max((len(column) for column in self.values.values()), default=0)

    @property
    def skip_counts(self) -> dict[SkipReason, int]:
        return {reason: len(ids) for reason, ids in self.skipped.items() if ids}

    @property
    def n_skipped(self) -> int:
        return sum(len(ids) for ids in self.skipped.values())

    @property
    def notes(self) -> list[str]:
        """Caveats a report should print (e.g. METEOR without WordNet)."""
        return [f"{m.label}: {m.note}" for m in self.metrics if m.note]


def usable_references(example: Example) -> tuple[str, ...]:
    return tuple(r for r in example.references if r and r.strip())


def plan_pairs(examples: Iterable[Example]) -> tuple[list[ScoringPair], dict[SkipReason, list[str]]]:
    """The pairs to score, and the examples left out under each reason."""
    pairs: list[ScoringPair] = []
    skipped: dict[SkipReason, list[str]] = {reason: [] for reason in SkipReason}
    for ex in examples:
        if ex.level is Level.DIALOG:
            skipped[SkipReason.DIALOG_LEVEL].append(ex.id)
        elif ex.is_reference:
            skipped[SkipReason.REFERENCE_ITSELF].append(ex.id)
        elif ex.candidate is None:
            skipped[SkipReason.NO_CANDIDATE].append(ex.id)
        else:
            refs = usable_references(ex)
            if not refs:
                skipped[SkipReason.NO_REFERENCE].append(ex.id)
                continue
            chinese = is_chinese(ex.language, (ex.candidate, *refs))
            pairs.append(ScoringPair(ex.id, ex.candidate, refs, chinese))
    return pairs, skipped



def describe_metrics(metric_ids: Sequence[str]) -> tuple[MetricInfo, ...]:
    return tuple(metric_info(m) for m in metric_ids)


def score_examples(
    examples: Iterable[Example],
    metric_ids: Iterable[str] | None = None,
    *,
    workers: int | None = 1,
    progress: Callable[[int, int], None] | None = None,
    profile: str = DEFAULT_PROFILE,
) -> MetricScores:
    """Score every scorable example with the given metrics (None = all of ``profile``'s).

    A metric that cannot run on this machine (METEOR 1.5 without Java) is not computed: its
    column stays empty and its entry's note says why.

    ``workers``: processes to use; None picks one per CPU (at most 8) for inputs of
    at least POOL_MIN_PAIRS pairs, else 1. ``progress(done, total)`` is called as
    pairs finish.
    """
    wanted = resolve_metric_ids(metric_ids, profile)
    metrics = describe_metrics(wanted)
    values: dict[str, dict[str, float]] = {m: {} for m in wanted}
    ids = tuple(m for m in wanted if unavailable_reason(m) is None)
    pairs, skipped = plan_pairs(examples)
    if not ids:
        return MetricScores(metrics=metrics, values=values, skipped=skipped)
    # A pair that occurs several times (same candidate, references and language) is scored
    # once, here rather than once per worker process, and its scores given to every example.
    first_of: dict[tuple[str, tuple[str, ...], bool], ScoringPair] = {}
    same_as: dict[str, str] = {}
    for pair in pairs:
        first = first_of.setdefault((pair.candidate, pair.references, pair.chinese), pair)
        same_as[pair.example_id] = first.example_id
    distinct = list(first_of.values())
    scaled = None
    if progress is not None:
        def scaled(done: int, total: int) -> None:
            progress(len(pairs) if done == total else done * len(pairs) // total, len(pairs))
    n_workers = _worker_count(workers, len(distinct))
    if n_workers > 1:
        results = dict(_score_in_pool(distinct, ids, n_workers, scaled))
    else:
        with gc_paused():
            results = dict(_score_here(distinct, ids, scaled))
    for pair in pairs:
        for metric_id, value in results[same_as[pair.example_id]].items():
            values[metric_id][pair.example_id] = value
    return MetricScores(metrics=metrics, values=values, skipped=skipped)


def _new_engine(metric_ids: Sequence[str]) -> MetricEngine:
    return MetricEngine(metric_ids)


def _score_here(
    pairs: Sequence[ScoringPair], metric_ids: Sequence[str],
    progress: Callable[[int, int], None] | None,
) -> list[tuple[str, dict[str, float]]]:
    if not pairs:
        return []
    engine = _new_engine(metric_ids)
    out = []
    step = max(1, len(pairs) // 100)
    for done, pair in enumerate(pairs, start=1):
        out.append((pair.example_id, engine.score(pair.candidate, pair.references, pair.chinese)))
        if progress is not None and (done % step == 0 or done == len(pairs)):
            progress(done, len(pairs))
    return out


def _worker_count(workers: int | None, n_pairs: int) -> int:
    if workers is None:
        cpus = os.cpu_count() or 1
        return min(cpus, 8) if cpus > 1 and n_pairs >= POOL_MIN_PAIRS else 1
    return max(1, min(workers, n_pairs))


# One engine per worker process, kept between chunks so its caches pay off.
_worker_engine: dict[tuple[str, ...], MetricEngine] = {}


def _score_chunk(metric_ids: tuple[str, ...], chunk: list[ScoringPair]) -> list[tuple[str, dict[str, float]]]:
    engine = _worker_engine.get(metric_ids)
    if engine is None:
        engine = _worker_engine[metric_ids] = _new_engine(metric_ids)
    with gc_paused():
        return [(p.example_id, engine.score(p.candidate, p.references, p.chinese)) for p in chunk]


def _score_in_pool(
    pairs: list[ScoringPair], metric_ids: tuple[str, ...], n_workers: int,
    progress: Callable[[int, int], None] | None,
) -> list[tuple[str, dict[str, float]]]:
    for family, _ in families_of(metric_ids):
        if family.prepare is not None:  # e.g. METEOR's synonym index: built once here, not racing in every worker
            family.prepare()
    # Contiguous chunks keep the candidates of one reference together, so each
    # worker tokenizes that reference once.
    size = math.ceil(len(pairs) / (n_workers * 4))
    chunks = [pairs[i:i + size] for i in range(0, len(pairs), size)]
    out: list[tuple[str, dict[str, float]]] = []
    with ProcessPoolExecutor(max_workers=n_workers) as pool:
        for result in pool.map(_score_chunk, [metric_ids] * len(chunks), chunks):
            out.extend(result)
            if progress is not None:
                progress(len(out), len(pairs))
    return out


# score_pair serves interactive use: one engine per metric set, shared and locked.
_pair_engines: dict[tuple[tuple[str, ...], tuple[str, ...]], MetricEngine] = {}
_pair_lock = threading.Lock()
_PAIR_CACHE_LIMIT = 20_000


def score_pair(
    candidate: str,
    references: Sequence[str],
    language: str | None = None,
    metric_ids: Iterable[str] | None = None,
) -> dict[str, float]:
    """Every metric (or the given ones) for one candidate; {} when no reference is usable.

    ``language`` 'zh' (or any Chinese code) selects per-character tokenization;
    None detects Chinese from the text.
    """
    if isinstance(references, str):
        references = (references,)
    refs = tuple(r for r in references if r and r.strip())
    if not refs:
        return {}
    ids = tuple(m for m in resolve_metric_ids(metric_ids) if unavailable_reason(m) is None)
    if not ids:
        return {}
    chinese = is_chinese(language, (candidate, *refs))
    # A family's setting is part of the key: an engine whose METEOR was built with WordNet
    # must not serve after WordNet was found missing (or the other way round).
    key = (ids, tuple(family.setting() for family, _ in families_of(ids) if family.setting is not None))
    with _pair_lock:
        engine = _pair_engines.get(key)
        if engine is None or engine.cache_size() > _PAIR_CACHE_LIMIT:
            engine = _pair_engines[key] = _new_engine(ids)
        return engine.score(candidate, refs, chinese)
