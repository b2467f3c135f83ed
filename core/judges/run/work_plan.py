"""The engine's work plan: which judgments a run asks for, in which order, and what each is still to do.

Every judge variant x item x repeat of a :class:`RunConfig` is one judgment. Contexts come
in a seeded random order (a partial run is a random sample of contexts, see .stopping),
every candidate of one context together and repeats back to back, so consecutive prompts
share the longest prefix and a local backend reuses its KV cache. Of those, a resumed run
does only the ones its store lacks; each is rendered into a request, and split into those
the response cache answers and those queued for their judge's backend.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ...errors import ConfigError
from ...model import Dataset, Example
from ..prompts.truncation import PromptTooLong
from ..store.run_store import JudgmentKey
from ..types import BackendResult, JudgeBackend, JudgeRequest, Judgment, RenderedPrompt, ScoringMode
from .config import JudgeVariant, RunConfig
from .probability import judge_request
from .stopping import seeded_context_order


class PromptRenderer(Protocol):
    def __call__(self, variant: JudgeVariant, example: Example) -> RenderedPrompt: ...


@dataclass
class Work:
    """One judgment to make: its request, the key of its answer in the response cache, its backend."""

    variant: JudgeVariant
    example: Example
    request: JudgeRequest
    cache_key: str
    backend: JudgeBackend


@dataclass(frozen=True)
class PreparedWork:
    """A run's work made already, with the answers in hand for part of it (a batch import makes the work
    to key an answer file's lines, and puts the answers in the response cache as well): the engine takes
    the pending part of it instead of rendering every prompt again and reading the answers back."""

    works: Sequence[Work]
    #: Answers by cache key (the same as the response cache holds for them).
    answers: Mapping[str, BackendResult]

    def pending(self, pending: Sequence[JudgmentKey]) -> list[Work]:
        keys = set(pending)
        return [w for w in self.works if JudgmentKey(w.request.item_id, w.variant.label, w.request.repeat) in keys]


def order_for_prefix_reuse(items: Iterable[Example]) -> list[Example]:
    """All candidates of one context consecutively, contexts in first-seen order,
    candidates in their original order."""
    groups: dict[str, list[Example]] = {}
    for ex in items:
        groups.setdefault(ex.group_id, []).append(ex)
    return [ex for group in groups.values() for ex in group]


def wanted_judgments(config: RunConfig, variants: Sequence[JudgeVariant], dataset: Dataset,
                     context_order_seed: int | None) -> tuple[list[Example], list[JudgmentKey]]:
    """The run's items in the order they are judged, and every judgment of the run in that order."""
    items = seeded_context_order(config.select_items(dataset), context_order_seed)
    if not items:
        raise ConfigError(f"subset {config.subset!r} of dataset {dataset.name!r} selects no items")
    return items, [JudgmentKey(ex.id, v.label, r) for v in variants for ex in items for r in range(config.repeats)]


def make_work(config: RunConfig, variants: Sequence[JudgeVariant], items: Sequence[Example],
              pending: Sequence[JudgmentKey], renderer: PromptRenderer, backends: Mapping[str, JudgeBackend]
              ) -> tuple[list[Work], list[Judgment]]:
    """Each pending judgment as work for its backend, with its prompt rendered once per judge and item;
    a prompt too long for its judge's window is a failed judgment instead (the run goes on)."""
    by_label = {v.label: v for v in variants}
    by_id = {ex.id: ex for ex in items}
    prompts: dict[tuple[str, str], RenderedPrompt] = {}
    too_long: list[Judgment] = []
    works: list[Work] = []
    for key in pending:
        variant, example = by_label[key.judge], by_id[key.item_id]
        prompt = prompts.get((variant.label, example.id))
        if prompt is None:
            try:
                prompt = prompts[(variant.label, example.id)] = renderer(variant, example)
            except PromptTooLong as exc:  # this item fails; the run goes on
                too_long.append(Judgment(
                    item_id=example.id, judge=variant.label, mode=config.mode, prompt_hash="",
                    raw_output="", score=None, normalized=None, error=str(exc), repeat=key.repeat))
                continue
        backend = backends[variant.judge.name]
        request = judge_request(example.id, prompt, variant.judge.config, mode=config.mode, top_k=config.top_k,
                                constrain=config.constrain, repeat=key.repeat)
        works.append(Work(variant, example, request, request.cache_key(backend.identity), backend))
    return works, too_long


def split_by_cache(works: Sequence[Work], hits: Mapping[str, BackendResult]
                   ) -> tuple[list[tuple[Work, BackendResult]], dict[str, deque[Work]]]:
    """The work the response cache answers (``hits``, by cache key), with its answer, and the rest
    queued per judge."""
    cached_work: list[tuple[Work, BackendResult]] = []
    queues: dict[str, deque[Work]] = {}
    for work in works:
        hit = hits.get(work.cache_key)
        if hit is not None and work.request.mode is not ScoringMode.GENERATE and hit.valid_mass is None:
            hit = None  # cached before the valid mass was measured: ask again rather than guess it
        if hit is not None:
            cached_work.append((work, hit))
        else:
            queues.setdefault(work.variant.judge.name, deque()).append(work)
    return cached_work, queues
