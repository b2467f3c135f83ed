"""Judgments and cached answers as the run store's rows, and back: the columns, the JSON texts and the upserts."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..types import BackendResult, Judgment, ScoringMode

_JUDGMENT_COLUMNS = (
    "run_id", "item_id", "judge", "repeat", "mode", "cache_key", "prompt_hash", "raw_output", "score",
    "normalized", "distribution", "reasoning", "relevancy", "latency", "prompt_tokens",
    "evaluated_tokens", "completion_tokens", "error", "request_failed", "cached", "sampling", "created",
    "top_logprobs", "valid_mass", "valid_in_top", "mass_lower_bound",
)

#: Columns of :meth:`.judgments.Judgments.export_rows`, in order (CSV header).
EXPORT_COLUMNS = (
    "run_id", "item_id", "judge", "repeat", "mode", "score", "normalized", "error", "raw_output",
    "reasoning", "relevancy", "distribution", "latency", "prompt_tokens", "evaluated_tokens",
    "completion_tokens", "cached", "prompt_hash", "cache_key", "sampling", "created",
    "valid_mass", "valid_in_top", "mass_lower_bound",
    # Last, so that readers of older exports find every column where it was; with these two a
    # run exported and imported again (core.imports) can be rescored with another top-K.
    "top_logprobs", "request_failed",
)


# The encoders json.dumps(value, ensure_ascii=False, sort_keys=True) and json.dumps(value, sort_keys=True)
# build on every call, built once: the same text, without the cost of an encoder per value.
_ENCODE = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
_ENCODE_ASCII = json.JSONEncoder(sort_keys=True).encode


def _json_or_none(value: Any) -> str | None:
    return None if value is None else _ENCODE(value)


def _pairs_json(pairs: Sequence[tuple[str, float]] | None) -> str | None:
    # JSON writes a tuple as a list: the text of [[token, logprob], ...], without a list per pair.
    return None if pairs is None else _ENCODE(pairs if isinstance(pairs, list) else list(pairs))


def judgment_row(run_id: int, j: Judgment, cache_key: str | None, request_failed: bool, now: str
                 ) -> tuple[Any, ...]:
    return (
        run_id, j.item_id, j.judge, j.repeat, j.mode.value, cache_key, j.prompt_hash, j.raw_output,
        j.score, j.normalized, _json_or_none(j.distribution), j.reasoning, j.relevancy, j.latency_s,
        j.prompt_tokens, j.evaluated_tokens, j.completion_tokens, j.error, int(request_failed),
        int(j.cached), _ENCODE_ASCII(dict(j.sampling)), now, _pairs_json(j.top_logprobs),
        j.valid_mass, j.valid_in_top, int(j.mass_is_lower_bound),
    )


#: The columns a Judgment is read from, in the order :class:`JudgmentParser` takes them.
READ_COLUMNS = (
    "item_id", "judge", "mode", "prompt_hash", "raw_output", "score", "normalized", "error", "reasoning",
    "relevancy", "distribution", "latency", "prompt_tokens", "evaluated_tokens", "completion_tokens", "repeat",
    "cached", "sampling", "top_logprobs", "valid_mass", "valid_in_top", "mass_lower_bound",
)
READ_SELECT = ", ".join(READ_COLUMNS)

_BOOLEAN_EXPORT_INDEXES = tuple(EXPORT_COLUMNS.index(c) for c in ("cached", "mass_lower_bound", "request_failed"))


def with_booleans(row: tuple[Any, ...]) -> tuple[Any, ...]:
    out = list(row)
    for i in _BOOLEAN_EXPORT_INDEXES:
        out[i] = bool(out[i])
    return tuple(out)


class JudgmentParser:
    """Rows of :data:`READ_COLUMNS` as Judgments, a chunk at a time. The JSON columns of a chunk are
    parsed in one ``json.loads`` each (one array of the stored texts, every one of them written by
    ``json.dumps``); a run's sampling, the same in every judgment, is parsed once. Every Judgment
    gets its own dicts and lists (values nested deeper, as a sampling's stop strings, are shared:
    Judgments are never changed in place)."""

    def __init__(self) -> None:
        self._samplings: dict[str, Any] = {}
        self._modes = {m.value: m for m in ScoringMode}

    def _sampling(self, text: str) -> dict[str, Any]:
        value = self._samplings.get(text)
        if value is None:
            if len(self._samplings) >= 1000:  # a run whose every sampling differs: keep memory bounded
                self._samplings.clear()
            value = self._samplings[text] = json.loads(text)
        return dict(value)

    def __call__(self, rows: Sequence[tuple[Any, ...]]) -> list[Judgment]:
        modes, sampling = self._modes, self._sampling
        distributions = _json_column([row[10] for row in rows])
        tops = _json_column([row[18] for row in rows])
        # Positional, in the dataclass's field order (READ_COLUMNS follows it; a test holds them together).
        return [
            Judgment(row[0], row[1], modes[row[2]], row[3], row[4], row[5], row[6], row[7], row[8], row[9],
                     distribution, row[11], row[12], row[13], row[14], row[15], bool(row[16]), sampling(row[17]),
                     [(str(t), float(p)) for t, p in top] if top is not None else None,
                     row[19], row[20], bool(row[21]))
            for row, distribution, top in zip(rows, distributions, tops)
        ]


def _json_column(texts: list[str | None]) -> list[Any]:
    """Each stored JSON text parsed (None for none), with one ``json.loads`` for all of them."""
    present = [text for text in texts if text]
    if not present:
        return [None] * len(texts)
    values = json.loads("[" + ",".join(present) + "]")
    if len(values) != len(present):  # not one value per text after all: parse them one by one
        values = [json.loads(text) for text in present]
    parsed = iter(values)
    return [next(parsed) if text else None for text in texts]


def cache_row(cache_key: str, model_identity: str, r: BackendResult, now: str, j: Judgment | None = None,
              j_row: tuple[Any, ...] = ()) -> tuple[Any, ...]:
    # A judgment usually holds copies of its response's probabilities: their JSON, just made for the
    # judgment's row (j_row), is the same text (the same float objects: no 0.0 against -0.0), made once.
    choice_probs = (j_row[_DISTRIBUTION] if j is not None and _same_values(r.choice_probs, j.distribution)
                    else _json_or_none(r.choice_probs))
    top = (j_row[_TOP_LOGPROBS] if j is not None and _same_items(r.top_logprobs, j.top_logprobs)
           else _pairs_json(r.top_logprobs))
    return (cache_key, model_identity, r.raw_output, choice_probs, top, r.prompt_tokens, r.evaluated_tokens,
            r.completion_tokens, r.latency_s, now, r.valid_mass, int(r.mass_is_lower_bound))


_DISTRIBUTION = _JUDGMENT_COLUMNS.index("distribution")
_TOP_LOGPROBS = _JUDGMENT_COLUMNS.index("top_logprobs")


def _same_values(a: Mapping[str, float] | None, b: Mapping[str, float] | None) -> bool:
    if a is None or b is None:
        return a is b
    return a.keys() == b.keys() and all(a[k] is b[k] for k in a)


def _same_items(a: Sequence[Any] | None, b: Sequence[Any] | None) -> bool:
    if a is None or b is None:
        return a is b
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


#: A row that already exists is only replaced when it records a failed request.
UPSERT_JUDGMENT = (
    f"INSERT INTO judgments ({', '.join(_JUDGMENT_COLUMNS)}) VALUES ({', '.join('?' for _ in _JUDGMENT_COLUMNS)}) "
    "ON CONFLICT (run_id, item_id, judge, repeat) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _JUDGMENT_COLUMNS[4:])
    # A retried request's answer takes a new id, as a new row would: ids are the order judgments were
    # written in, and a reader following a run (Judgments.judgments_after) finds the retry among the new.
    + ", id = (SELECT MAX(id) FROM judgments) + 1"
    + " WHERE judgments.request_failed = 1"
)

UPSERT_CACHE = (
    "INSERT OR REPLACE INTO response_cache (cache_key, model_identity, raw_output, choice_probs, "
    "top_logprobs, prompt_tokens, evaluated_tokens, completion_tokens, latency, created, valid_mass, "
    "mass_lower_bound) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
