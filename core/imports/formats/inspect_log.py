"""Inspect AI evaluation logs: a ``.json`` log, or a ``.eval`` log (a zip archive of the same JSON).

Read from the documented log layout (``inspect_ai.log.EvalLog``), without inspect_ai: the header's
``eval.model`` and ``eval.task``; per sample its ``id`` (the item id), ``epoch`` (repeat = epoch - 1),
``scores`` (one judge per scorer: ``value``, ``answer``, ``explanation``) and ``output``
(``choices[0].message.content``, ``usage.input_tokens``/``output_tokens``, ``time``). A scorer's
letter values read as Inspect's own ``value_to_float`` does: C = 1, I = 0, P = 0.5, N = 0.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from ...errors import DataError
from ..records import ImportedRow, ParsedFile

NAME = "inspect"
DESCRIPTION = "an Inspect AI evaluation log (.json, or .eval)"

_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


def sniff(path: Path, text: str) -> bool:
    if path.suffix.lower() == ".eval":
        return True
    head = text.lstrip()[:4000]
    return head.startswith("{") and '"eval"' in head and ('"samples"' in text) and '"version"' in head


def read_bytes_as_text(path: Path) -> str | None:
    """A ``.eval`` archive is binary: the importer reads it here rather than as text."""
    return None if path.suffix.lower() == ".eval" else path.read_text(encoding="utf-8")


def read(path: Path, text: str) -> ParsedFile:
    header, samples = _eval_archive(path) if path.suffix.lower() == ".eval" else _json_log(path, text)
    spec = header.get("eval") or {}
    model = str(spec.get("model") or "inspect")
    rows: list[ImportedRow] = []
    scorers: list[str] = []
    for _, sample in samples:
        scores = sample.get("scores") or {}
        for name in scores:
            if name not in scorers:
                scorers.append(name)
    for index, sample in samples:
        place = f"sample {index + 1}"
        if sample.get("id") is None:
            raise DataError(f"{path}: {place}: no id")
        output = sample.get("output") or {}
        usage = output.get("usage") or {}
        scores = sample.get("scores") or {}
        for name in scorers:
            judge = model if len(scorers) == 1 else f"{model}:{name}"
            score, error, explanation, answer = _score(scores.get(name))
            rows.append(ImportedRow(
                where=place, judge=judge, item_id=str(sample["id"]), score=score, error=error,
                repeat=max(int(sample.get("epoch") or 1) - 1, 0),
                raw_output=_completion(output) or (answer or ""), reasoning=explanation,
                latency_s=float(output.get("time") or sample.get("total_time") or 0.0),
                prompt_tokens=int(usage.get("input_tokens") or 0),
                completion_tokens=int(usage.get("output_tokens") or 0),
            ))
    if not rows:
        raise DataError(f"{path}: no scored samples (an Inspect log whose samples carry scores)")
    fields = {"item id": "samples[].id", "repeat": "samples[].epoch - 1",
              "score": ", ".join(f"samples[].scores.{s}.value" for s in scorers),
              "raw answer": "samples[].output.choices[0].message.content",
              "reasoning": "samples[].scores.*.explanation", "latency": "samples[].output.time",
              "tokens": "samples[].output.usage.input_tokens, output_tokens"}
    return ParsedFile(NAME, tuple(rows), fields,
                      source={"task": spec.get("task"), "model": model, "status": header.get("status")})


def _json_log(path: Path, text: str) -> tuple[Mapping[str, Any], list[tuple[int, Mapping[str, Any]]]]:
    try:
        log = json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataError(f"{path}: not JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(log, dict) or not isinstance(log.get("samples"), list):
        raise DataError(f"{path}: not an Inspect log with samples")
    return log, list(enumerate(log["samples"]))


def _eval_archive(path: Path) -> tuple[Mapping[str, Any], list[tuple[int, Mapping[str, Any]]]]:
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            header_name = "header.json" if "header.json" in names else "_journal/start.json"
            if header_name not in names:
                raise DataError(f"{path}: an .eval archive without header.json")
            header = json.loads(archive.read(header_name))
            sample_names = sorted(n for n in names if n.startswith("samples/") and n.endswith(".json"))
            samples = [json.loads(archive.read(n)) for n in sample_names]
    except (zipfile.BadZipFile, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable .eval log: {exc}") from None
    return header, list(enumerate(samples))


def _score(entry: Any) -> tuple[float | None, str | None, str | None, str | None]:
    """(score, why there is none, explanation, answer) of one scorer's Score."""
    if entry is None:
        return None, "the scorer gave this sample no score", None, None
    value = entry.get("value") if isinstance(entry, Mapping) else entry
    explanation = entry.get("explanation") if isinstance(entry, Mapping) else None
    answer = entry.get("answer") if isinstance(entry, Mapping) else None
    if isinstance(value, bool):
        return float(value), None, explanation, answer
    if isinstance(value, (int, float)):
        return float(value), None, explanation, answer
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value], None, explanation, answer
        try:
            return float(value), None, explanation, answer
        except ValueError:
            return None, f"the score {value!r} is not a number", explanation, answer
    return None, f"the score is a {type(value).__name__}, not a number", explanation, answer


def _completion(output: Mapping[str, Any]) -> str:
    if output.get("completion"):
        return str(output["completion"])
    choices = output.get("choices") or []
    if not choices:
        return ""
    content = (choices[0].get("message") or {}).get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in _parts(content))


def _parts(content: Any) -> Iterator[Mapping[str, Any]]:
    for part in content or []:
        if isinstance(part, Mapping) and part.get("type") == "text":
            yield part
