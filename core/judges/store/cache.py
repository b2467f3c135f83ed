"""The response cache: a backend's answer kept under its request's key, so an identical request is not sent again."""

from __future__ import annotations

import json
from collections.abc import Iterable

from ..types import BackendResult
from .connection import IN_CHUNK, StoreConnection
from .judgment_rows import UPSERT_CACHE, cache_row


class ResponseCache:
    """The response cache of one store (``store.cache``)."""

    def __init__(self, connection: StoreConnection) -> None:
        self._connection = connection

    def cached_response(self, cache_key: str) -> BackendResult | None:
        return self.cached_responses([cache_key]).get(cache_key)

    def cached_responses(self, cache_keys: Iterable[str]) -> dict[str, BackendResult]:
        """The cached answers of those keys that have one."""
        keys = list(dict.fromkeys(cache_keys))
        out: dict[str, BackendResult] = {}
        for start in range(0, len(keys), IN_CHUNK):
            chunk = keys[start:start + IN_CHUNK]
            rows = self._connection.query(
                "SELECT cache_key, raw_output, choice_probs, top_logprobs, prompt_tokens, evaluated_tokens, "
                "completion_tokens, latency, valid_mass, mass_lower_bound FROM response_cache "
                f"WHERE cache_key IN ({', '.join('?' for _ in chunk)})", chunk)
            for row in rows:
                top = json.loads(row["top_logprobs"]) if row["top_logprobs"] else None
                out[row["cache_key"]] = BackendResult(
                    raw_output=row["raw_output"],
                    choice_probs=json.loads(row["choice_probs"]) if row["choice_probs"] else None,
                    top_logprobs=[(str(t), float(p)) for t, p in top] if top is not None else None,
                    prompt_tokens=row["prompt_tokens"],
                    evaluated_tokens=row["evaluated_tokens"],
                    completion_tokens=row["completion_tokens"],
                    latency_s=row["latency"],
                    valid_mass=row["valid_mass"],
                    mass_is_lower_bound=bool(row["mass_lower_bound"]),
                )
        return out

    def put_cached_response(self, cache_key: str, model_identity: str, response: BackendResult) -> None:
        with self._connection.transaction() as db:
            db.execute(UPSERT_CACHE, cache_row(cache_key, model_identity, response, self._connection.now()))

    def put_cached_responses(self, answers: Iterable[tuple[str, str, BackendResult]]) -> None:
        """Many answers (cache key, model identity, answer) in one transaction."""
        now = self._connection.now()
        rows = [cache_row(key, identity, response, now) for key, identity, response in answers]
        with self._connection.transaction() as db:
            db.executemany(UPSERT_CACHE, rows)

    def cache_size(self) -> int:
        return int(self._connection.query("SELECT COUNT(*) FROM response_cache")[0][0])

    def clear_cache(self) -> int:
        with self._connection.transaction() as db:
            return db.execute("DELETE FROM response_cache").rowcount
