"""Reading a batch engine's answer file (the OpenAI Batch API's output or error file, vLLM ``run-batch``'s
output): one JSON object a line, ``{"id", "custom_id", "response": {"status_code", "body"}, "error"}``.

Answer files are untrusted input under the data contract: a line that cannot be read is never scored;
it is counted by kind and named by file, 1-based line, custom id and field (:class:`AnswerProblem`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from ...errors import DataError

#: The error code the OpenAI Batch API gives a request the batch did not reach in its window.
EXPIRED_CODES = frozenset({"batch_expired", "expired"})


@dataclass(frozen=True)
class AnswerLine:
    """One readable line: a server's answer body (``body``) or the error that took its place."""

    line: int
    custom_id: str
    body: dict[str, Any] | None
    #: The batch engine's or the server's error, when the request got no answer.
    error: str | None
    expired: bool
    #: The batch engine's own id of the line (``batch_req_...`` at OpenAI), for the provenance.
    line_id: str


@dataclass(frozen=True)
class AnswerProblem:
    """A line left out: its kind (``truncated``, ``not JSON``, ``malformed``, ...) and where it is."""

    kind: str
    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _where(path: Path, line: int, field: str | None = None, custom_id: str | None = None) -> str:
    return str(DataError("", path=str(path), line=line, field=field, record_id=custom_id)).rstrip(": ")


def read_answers(path: Path) -> Iterator[AnswerLine | AnswerProblem]:
    """Every line of ``path``, read or named as a problem, in file order (blank lines skipped); the
    file is streamed, a line at a time."""
    try:
        handle = open(path, "rb")  # noqa: SIM115 - closed below, after the last line
    except OSError as exc:
        raise DataError(f"cannot read the answer file ({exc.strerror or exc})", path=str(path)) from None
    with handle:
        for n, raw in enumerate(handle, start=1):
            if not raw.strip():
                continue
            try:
                record = orjson.loads(raw)
            except orjson.JSONDecodeError:
                if not raw.endswith(b"\n"):  # only the last line can lack its newline: the file was cut
                    yield AnswerProblem("truncated", _where(path, n),
                                        "the file ends inside this line (cut short: download it again)")
                else:
                    yield AnswerProblem("not JSON", _where(path, n), "not a JSON object")
                continue
            yield _answer_line(path, n, record)


def _answer_line(path: Path, n: int, record: Any) -> AnswerLine | AnswerProblem:
    if not isinstance(record, dict):
        return AnswerProblem("malformed", _where(path, n), "not a JSON object")
    cid = record.get("custom_id")
    if not isinstance(cid, str) or not cid:
        return AnswerProblem("malformed", _where(path, n, "custom_id"), "no custom_id: it cannot be matched")
    raw_id = record.get("id")
    line_id = raw_id if isinstance(raw_id, str) else ""
    error = record.get("error")
    response = record.get("response")
    if error is not None:
        code, message = _error_text(error)
        expired = code in EXPIRED_CODES
        return AnswerLine(n, cid, None, f"{'expired' if expired else 'error'} {code}: {message}".strip(),
                          expired, line_id)
    if not isinstance(response, dict):
        return AnswerProblem("malformed", _where(path, n, "response", cid), "no response object and no error")
    status = response.get("status_code")
    body = response.get("body")
    if isinstance(status, int) and not 200 <= status < 300:
        code, message = _error_text(body.get("error") if isinstance(body, dict) else body)
        return AnswerLine(n, cid, None, f"HTTP {status}: {message or code}".strip(), False, line_id)
    if not isinstance(body, dict):
        return AnswerProblem("malformed", _where(path, n, "response.body", cid), "the answer body is not an object")
    return AnswerLine(n, cid, body, None, False, line_id)


def _error_text(error: Any) -> tuple[str, str]:
    if isinstance(error, dict):
        code = error.get("code")
        message = error.get("message")
        return (str(code) if code is not None else "", " ".join(str(message).split())[:300] if message else "")
    return "", " ".join(str(error).split())[:300] if error is not None else ""


def where(path: Path, line: int, field: str | None = None, custom_id: str | None = None) -> str:
    """How a problem names its place: file, line, custom id, field (the data contract's wording)."""
    return _where(path, line, field, custom_id)
