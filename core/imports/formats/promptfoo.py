"""promptfoo's ``promptfoo eval -o results.json``.

Read from its documented output (``results.results[]``, each an ``EvaluateResult``): the item by the
test's ``vars`` (``item_id`` or ``id``, else ``context`` and ``response`` to match by text), the judge
by ``provider.label`` or ``provider.id`` (with the prompt's label when the file holds several prompts),
the score from ``score`` (promptfoo's 0-1 grading score), the raw answer from ``response.output``,
the reason from ``gradingResult.reason``, tokens from ``response.tokenUsage`` and ``latencyMs``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ...errors import DataError
from ..records import ImportedRow, ParsedFile, number_or_none

NAME = "promptfoo"
DESCRIPTION = "promptfoo's `eval -o results.json`"


def sniff(path: Path, text: str) -> bool:
    head = text.lstrip()[:20000]
    return head.startswith("{") and '"results"' in head and ('"provider"' in text or '"evalId"' in head)


def _results(path: Path, text: str) -> tuple[Mapping[str, Any], list[Any]]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not JSON: {exc.msg} (line {exc.lineno})") from None
    inner = data.get("results") if isinstance(data, dict) else None
    results = inner.get("results") if isinstance(inner, dict) else inner
    if not isinstance(results, list):
        raise DataError(f"{path}: not a promptfoo results file (no results.results list)")
    return data, results


def read(path: Path, text: str) -> ParsedFile:
    data, results = _results(path, text)
    labels = {_prompt_label(r) for r in results if isinstance(r, Mapping)}
    rows: list[ImportedRow] = []
    for index, result in enumerate(results):
        place = f"result {index + 1}"
        if not isinstance(result, Mapping):
            raise DataError(f"{path}: {place}: not an object")
        variables = result.get("vars") or (result.get("testCase") or {}).get("vars") or {}
        provider = result.get("provider")
        judge = str(provider.get("label") or provider.get("id")) if isinstance(provider, Mapping) \
            else str(provider or "promptfoo")
        if len(labels) > 1:
            judge = f"{judge}:{_prompt_label(result)}"
        response = result.get("response") or {}
        grading = result.get("gradingResult") or {}
        usage = response.get("tokenUsage") or {}
        raw = result.get("score", grading.get("score"))
        try:
            score, error = number_or_none(raw), None
        except (TypeError, ValueError):
            score, error = None, f"the score {raw!r} is not a number"
        error = result.get("error") or response.get("error") or error
        item = variables.get("item_id", variables.get("id"))
        output = response.get("output")
        rows.append(ImportedRow(
            where=place, judge=judge, item_id=None if item is None else str(item), score=score,
            error=str(error) if error else None,
            context=_maybe_text(variables.get("context")), response=_maybe_text(variables.get("response")),
            raw_output=output if isinstance(output, str) else json.dumps(output) if output is not None else "",
            reasoning=grading.get("reason"), latency_s=float(result.get("latencyMs") or 0) / 1000.0,
            prompt_tokens=int(usage.get("prompt") or 0), completion_tokens=int(usage.get("completion") or 0),
        ))
    if not rows:
        raise DataError(f"{path}: no results")
    fields = {"item id": "vars.item_id | vars.id (else vars.context + vars.response)",
              "judge": "provider.label | provider.id", "score": "score (0-1)", "raw answer": "response.output",
              "reasoning": "gradingResult.reason", "latency": "latencyMs",
              "tokens": "response.tokenUsage.prompt, completion"}
    return ParsedFile(NAME, tuple(rows), fields, native_scale=(0.0, 1.0),
                      source={"eval_id": data.get("evalId")})


def _prompt_label(result: Mapping[str, Any]) -> str:
    prompt = result.get("prompt") or {}
    return str(prompt.get("label") or prompt.get("raw") or "") if isinstance(prompt, Mapping) else str(prompt)


def _maybe_text(value: Any) -> str | None:
    return None if value is None else str(value)
