"""dialjudge's own ``runs export --format jsonl``: one stored judgment per line, every column kept.

The 0-1 score, the mode and the prompt hash are carried over as they are, so a run exported and
imported again gives the same numbers to the last digit, and can be rescored like the original.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import DataError
from ...loaders._common import json_lines
from ..records import ImportedRow, ParsedFile, number_or_none

NAME = "dialjudge"
DESCRIPTION = "dialjudge's own `runs export --format jsonl` (a round trip loses nothing)"

#: The columns that tell this export from any other JSON Lines file.
_SIGNATURE = {"run_id", "item_id", "judge", "repeat", "mode", "normalized", "prompt_hash"}


def sniff(path: Path, text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        value = json.loads(first)
    except json.JSONDecodeError:
        return False
    return isinstance(value, dict) and set(value) >= _SIGNATURE


def _json(value: Any, place: str, path: Path, column: str) -> Any:
    if value is None or not isinstance(value, str):
        return value
    try:
        return json.loads(value) if value else None
    except json.JSONDecodeError:
        raise DataError(f"{path}: {place}: {column} is not JSON") from None


def read(path: Path, text: str) -> ParsedFile:
    rows = []
    runs: set[Any] = set()
    for number, r in json_lines(text, str(path)):
        place = f"line {number}"
        if not isinstance(r, dict):
            raise DataError(f"{path}: {place}: not a dialjudge judgment (not a JSON object)")
        missing = sorted(_SIGNATURE - set(r))
        if missing:
            raise DataError(f"{path}: {place}: not a dialjudge judgment (no {', '.join(missing)})")
        runs.add(r["run_id"])
        distribution = _json(r.get("distribution"), place, path, "distribution")
        top = _json(r.get("top_logprobs"), place, path, "top_logprobs")
        try:
            score, normalized = number_or_none(r.get("score")), number_or_none(r.get("normalized"))
        except ValueError:
            raise DataError(f"{path}: {place}: score or normalized is not a number") from None
        rows.append(ImportedRow(
            where=place, judge=str(r["judge"]), item_id=str(r["item_id"]), score=score, normalized=normalized,
            repeat=int(r["repeat"]), mode=str(r["mode"]), prompt_hash=str(r.get("prompt_hash") or ""),
            raw_output=str(r.get("raw_output") or ""), reasoning=r.get("reasoning"),
            distribution={str(k): float(v) for k, v in distribution.items()} if distribution else None,
            top_logprobs=[(str(t), float(p)) for t, p in top] if top else None,
            latency_s=float(r.get("latency") or 0.0), prompt_tokens=int(r.get("prompt_tokens") or 0),
            evaluated_tokens=int(r.get("evaluated_tokens") or 0),
            completion_tokens=int(r.get("completion_tokens") or 0), error=r.get("error"),
            cached=bool(r.get("cached")), request_failed=bool(r.get("request_failed")),
            sampling=_json(r.get("sampling"), place, path, "sampling") or {},
            valid_mass=None if r.get("valid_mass") is None else float(r["valid_mass"]),
            valid_in_top=None if r.get("valid_in_top") is None else int(r["valid_in_top"]),
            mass_is_lower_bound=bool(r.get("mass_lower_bound")),
        ))
    if not rows:
        raise DataError(f"{path}: no judgments")
    fields = {"item id": "item_id", "judge": "judge", "score": "score, normalized", "raw answer": "raw_output",
              "probabilities": "distribution, top_logprobs", "reasoning": "reasoning",
              "latency": "latency", "tokens": "prompt_tokens, evaluated_tokens, completion_tokens",
              "valid mass": "valid_mass, valid_in_top, mass_lower_bound"}
    return ParsedFile(NAME, tuple(rows), fields, source={"runs": sorted(runs, key=str)})
