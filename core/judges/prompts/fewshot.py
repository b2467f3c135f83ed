"""Few-shot example selection (paper 003, section 3.3).

Methods: ``none``; ``random`` (seeded: one fixed order of the pool, so every
item sees the same examples except where they belong to its own group);
``bm25-context`` / ``bm25-response`` / ``bm25-both`` (the pool examples most
similar to the item's context, response, or both, by BM25); ``manual`` (a
fixed list of example ids). Specs read ``none``, ``random:3``,
``random:3@7`` (seed 7), ``bm25-both:4`` and ``manual:id1,id2,id3``.

The pool is filtered once: only examples with a numeric rating on the quality,
and at the item's level (a dialogue-level "Overall" is another quality than a
turn-level one). An item never sees itself nor another candidate of its own
group (same ``group_id``): their ratings would leak the answer. Selection is
deterministic for a seed; BM25 examples are ordered least to most similar, so
the closest example sits next to the item.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ...errors import ConfigError
from ...model import Example, Level
from .render import example_rating

METHODS = ("none", "random", "bm25-context", "bm25-response", "bm25-both", "manual")
_BM25_FIELDS = {"bm25-context": "context", "bm25-response": "response", "bm25-both": "both"}


@dataclass(frozen=True)
class FewShotSetting:
    method: str = "none"
    k: int = 0
    seed: int = 0
    manual_ids: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.method not in METHODS:
            raise ConfigError(f"few-shot method {self.method!r} is not one of {', '.join(METHODS)}")
        if self.k < 0:
            raise ConfigError(f"few-shot k must be 0 or more, not {self.k}")
        if self.method in ("random", *_BM25_FIELDS) and self.k == 0:
            raise ConfigError(f"few-shot method {self.method!r} needs k > 0 (e.g. {self.method}:3)")
        if self.method == "manual":
            if not self.manual_ids:
                raise ConfigError("few-shot method 'manual' needs example ids (manual:id1,id2)")
            if self.k == 0:
                object.__setattr__(self, "k", len(self.manual_ids))
        elif self.manual_ids:
            raise ConfigError(f"example ids are only for the manual method, not {self.method!r}")

    @classmethod
    def parse(cls, spec: str) -> "FewShotSetting":
        """``none``, ``random:3``, ``random:3@7``, ``bm25-context:4``, ``manual:id1,id2``."""
        text = spec.strip()
        method, sep, rest = text.partition(":")
        method = method.strip().lower()
        if method in ("", "none", "zero-shot", "0"):
            if rest.strip() not in ("", "0"):
                raise ConfigError(f"few-shot spec {spec!r}: 'none' takes no count")
            return cls()
        if method == "manual":
            ids = tuple(i.strip() for i in rest.split(",") if i.strip())
            return cls("manual", len(ids), 0, ids)
        if method not in METHODS:
            raise ConfigError(f"few-shot spec {spec!r}: method must be one of {', '.join(METHODS)}")
        m = re.fullmatch(r"\s*(\d+)\s*(?:@\s*(-?\d+)\s*)?", rest) if sep else None
        if m is None:
            raise ConfigError(f"few-shot spec {spec!r}: write {method}:K or {method}:K@SEED, e.g. {method}:3")
        return cls(method, int(m.group(1)), int(m.group(2) or 0))

    def __str__(self) -> str:
        if self.method == "none":
            return "none"
        if self.method == "manual":
            return "manual:" + ",".join(self.manual_ids)
        return f"{self.method}:{self.k}" + (f"@{self.seed}" if self.seed else "")

    @property
    def is_zero_shot(self) -> bool:
        return self.method == "none" or self.k == 0

    @property
    def enabled(self) -> bool:
        return not self.is_zero_shot

    @property
    def spec(self) -> str:
        """The setting as :meth:`parse` reads it (``none``, ``bm25-both:4``, ``random:3@7``)."""
        return str(self)

    def to_dict(self) -> dict[str, Any]:
        return {"method": self.method, "k": self.k, "seed": self.seed, "manual_ids": list(self.manual_ids)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "FewShotSetting":
        return cls(str(data.get("method", "none")), int(data.get("k", 0)), int(data.get("seed", 0)),
                   tuple(str(x) for x in data.get("manual_ids", ())))


def random_settings(k: int, repeats: int, seed: int = 0) -> list[FewShotSetting]:
    """Paper 003's repeated random selection: ``repeats`` settings with seeds seed, seed+1, ..."""
    if repeats < 1:
        raise ConfigError("repeats must be at least 1")
    return [FewShotSetting("random", k, seed + r) for r in range(repeats)]


_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_TOKEN_RE = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")


def tokenize(text: str) -> list[str]:
    """Lowercase words; Chinese (and Japanese) text one character per token."""
    return _TOKEN_RE.findall(text.lower())


def _document(ex: Example, field: str) -> list[str]:
    context = ex.context_text(" ")
    response = ex.candidate or ""
    if field == "context":
        return tokenize(context)
    if field == "response":
        return tokenize(response)
    return tokenize(context) + tokenize(response)


class _Partition:
    """The pool examples of one level, in pool order, with their BM25 index when needed."""

    def __init__(self, examples: list[Example], setting: FewShotSetting) -> None:
        self.examples = examples
        self.order = list(range(len(examples)))
        self.field = _BM25_FIELDS.get(setting.method)
        self.index: Any = None
        if setting.method == "random":
            random.Random(setting.seed).shuffle(self.order)
        elif self.field is not None and examples:
            corpus = [_document(ex, self.field) for ex in examples]
            if any(corpus):
                from rank_bm25 import BM25Okapi  # loads numpy: only for bm25 few-shot selection

                self.index = BM25Okapi(corpus)

    def ranked(self, item: Example) -> list[int]:
        """Pool positions, best first."""
        if self.field is None or self.index is None:
            return self.order
        query = _document(item, self.field)
        if not query:
            return self.order
        scores = self.index.get_scores(query)
        return sorted(self.order, key=lambda i: (-float(scores[i]), i))


class FewShotSelector:
    """Chooses each item's few-shot examples from a pool; build once per pool and setting."""

    def __init__(self, pool: Sequence[Example], setting: FewShotSetting, quality: str) -> None:
        self.setting = setting
        self.quality = quality
        rated = [ex for ex in pool if example_rating(ex, quality) is not None]
        self.pool_size = len(rated)
        self._manual: list[Example] = []
        self._partitions: dict[Level, _Partition] = {}
        if setting.method == "manual":
            self._manual = self._resolve_manual(pool, rated)
        elif setting.method != "none":
            by_level: dict[Level, list[Example]] = {}
            for ex in rated:
                by_level.setdefault(ex.level, []).append(ex)
            self._partitions = {level: _Partition(exs, setting) for level, exs in by_level.items()}

    def _resolve_manual(self, pool: Sequence[Example], rated: list[Example]) -> list[Example]:
        by_id = {ex.id: ex for ex in pool}
        rated_ids = {ex.id for ex in rated}
        chosen = []
        for example_id in self.setting.manual_ids:
            if example_id not in by_id:
                raise ConfigError(f"manual few-shot example {example_id!r} is not in the example pool")
            if example_id not in rated_ids:
                raise ConfigError(f"manual few-shot example {example_id!r} has no numeric rating "
                                  f"on {self.quality!r}")
            chosen.append(by_id[example_id])
        return chosen

    def select(self, item: Example) -> list[Example]:
        """The item's examples, in prompt order; fewer than k when the pool runs short."""
        if self.setting.is_zero_shot:
            return []

        def allowed(ex: Example) -> bool:
            return ex.id != item.id and ex.group_id != item.group_id

        if self.setting.method == "manual":
            return [ex for ex in self._manual if allowed(ex)][: self.setting.k]
        partition = self._partitions.get(item.level)
        if partition is None:
            return []
        chosen = []
        for i in partition.ranked(item):
            ex = partition.examples[i]
            if allowed(ex):
                chosen.append(ex)
                if len(chosen) == self.setting.k:
                    break
        if partition.field is not None:
            chosen.reverse()  # most similar last, right before the item
        return chosen
