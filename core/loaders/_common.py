"""Pieces every loader shares: reading a JSON file, turning dialogue text into
turns, and checking one annotator's value against its scale.

Every problem becomes a :class:`DataError` that names the file and, where known,
the line or record and the field, so a user never sees a traceback.
"""

from __future__ import annotations

import itertools
import json
import math
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import orjson

from ..errors import DataError
from ..model import RatingValue, Scale, ScaleKind, Turn

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: Unlabelled turns are labelled A/B so that the candidate's speaker is always B:
#: judge prompts can then speak of "B's reply" whatever the context length.
RESPONDER = "B"
OTHER_SPEAKER = "A"

# "User: hi", "LAMDA: ...", "Speaker 2: ...", "用户：你好": one to three words, a
# colon (ASCII or full-width), then the text. A colon followed by no space
# ("3:00") is not a speaker prefix.
_SPEAKER_PREFIX = re.compile(r"^([^\W\d_][\w'.\-]*(?: [\w'.\-]+){0,2})\s*(?::\s+|：\s*)(.*)$", re.S)


#: Files are decoded this many characters at a time: decoding a 150 MB file in one call holds the
#: interpreter lock for half a second or more, which the app's UI thread would wait out.
_READ_CHUNK = 1 << 22
#: Characters read at a time by :func:`iter_file_line_blocks`: a millisecond of decoding and splitting.
_LINES_CHUNK = 1 << 20


def leading_lines(text: str, count: int) -> list[str]:
    """The first ``count`` non-blank lines of ``text``, each without its leading white space, cut
    out one at a time: splitting or partitioning a 150 MB text copies the rest of it, which holds
    the interpreter lock (the app's UI thread waits) for tens of milliseconds a copy."""
    lines: list[str] = []
    start, end = 0, len(text)
    while len(lines) < count and start < end:
        stop = text.find("\n", start)
        if stop < 0:
            stop = end
        line = text[start:stop]
        if line.strip():
            lines.append(line.lstrip())
        start = stop + 1
    return lines


def iter_records(text: str) -> Iterator[str]:
    """The file's lines one at a time (as ``text.split("\\n")``), so that a 100,000-line file is
    never held twice, once whole and once as a list of lines."""
    start, end = 0, len(text)
    while start <= end:
        stop = text.find("\n", start)
        if stop < 0:
            stop = end
        yield text[start:stop]
        start = stop + 1


def read_leading_lines(path: Path, count: int) -> list[str]:
    """The file's first ``count`` non-blank lines (as :func:`leading_lines`), read without reading
    the rest; empty where the file cannot be read or decoded there (reading it whole says why)."""
    lines: list[str] = []
    try:
        with path.open(encoding="utf-8-sig") as handle:
            for line in handle:
                if line.strip():
                    lines.append(line.lstrip().rstrip("\n"))
                    if len(lines) == count:
                        break
    except (OSError, UnicodeDecodeError):
        return []
    return lines


def iter_file_line_blocks(path: Path) -> Iterator[list[str]]:
    """The file's lines, as ``read_text_file(path).split("\\n")`` gives them (universal newlines, the
    UTF-8 BOM dropped; a final empty line where the file ends with one), a block at a time (the lines
    of about a megabyte of text each), without holding the whole file: a 150 MB text is never built,
    and no single call decodes or copies more than a buffer. A problem reading it is the DataError
    :func:`read_text_file` gives."""
    try:
        with path.open(encoding="utf-8-sig") as handle:
            # A chunk at a time, not a line at a time: each read lets go of the interpreter for its
            # system call and takes it back at once, and a line-by-line reader doing that thousands of
            # times a second kept the app's UI thread from the interpreter for 100-500 ms at a time.
            rest = ""
            while chunk := handle.read(_LINES_CHUNK):
                lines = (rest + chunk).split("\n")
                rest = lines.pop()
                yield lines
            yield [rest]
    except (OSError, UnicodeDecodeError):
        read_text_file(path)  # raises the DataError that names the problem (the byte's offset in the file)
        raise


def line_blocks(lines: Iterable[str], size: int = 1024) -> Iterator[list[str]]:
    """``lines`` in blocks of ``size``."""
    lines = iter(lines)
    while block := list(itertools.islice(lines, size)):
        yield block


def read_text_file(path: Path) -> str:
    """The file's text; a missing, unreadable or non-UTF-8 file is a DataError."""
    try:
        with path.open(encoding="utf-8-sig") as handle:  # as read_text: universal newlines
            parts: list[str] = []
            while chunk := handle.read(_READ_CHUNK):
                parts.append(chunk)
        return "".join(parts)
    except UnicodeDecodeError:
        # A chunk's error offset is the chunk's; decoding the whole file names the file's.
        try:
            path.read_bytes().decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DataError(f"not UTF-8 text (bad byte at offset {exc.start})", path=str(path)) from None
        except OSError as exc:
            raise DataError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None
        raise
    except FileNotFoundError:
        raise DataError("file not found", path=str(path)) from None
    except IsADirectoryError:
        raise DataError("is a folder, not a dataset file", path=str(path)) from None
    except OSError as exc:
        raise DataError(f"cannot read: {exc.strerror or exc}", path=str(path)) from None


def parse_json_text(text: str, path: Path) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        ends_early = exc.msg.startswith("Unterminated") or exc.pos >= len(text.rstrip())
        raise DataError(f"not valid JSON: {exc.msg} (column {exc.colno})"
                        + ("; the file ends before its JSON does (truncated?)" if ends_early else ""),
                        path=str(path), line=exc.lineno) from None
    except RecursionError:
        raise DataError("not valid JSON: nested too deeply", path=str(path)) from None


def json_lines(text: str, where: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) for each non-blank line; a line that is not JSON is a DataError."""
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as exc:
            raise DataError(f"not valid JSON: {exc.msg} (column {exc.colno})", path=where, line=number) from None
        except RecursionError:
            raise DataError("not valid JSON: nested too deeply", path=where, line=number) from None


#: What a JSON integer of 19 digits or more becomes under :data:`_DIGITS_AS_ZERO`.
_LONG_NUMBER = "0" * 19
_DIGITS_AS_ZERO = str.maketrans("123456789", "000000000")


def json_line_parser(lines: Sequence[str]) -> Callable[[str], Any]:
    """A ``json.loads`` for each of ``lines``: one that gives exactly ``json.loads``'s value, or its
    JSONDecodeError or RecursionError, at about twice the speed where it can (orjson: 0.31 s instead
    of 0.70 s for the 100,000 records of a 150 MB file).

    orjson gives json's value for every text it parses except integers outside 64 bits, which it
    turns into floats. So where any of ``lines`` holds a run of 19 digits or more (such an integer,
    or a long number inside a text), they are parsed by the standard library; and a line orjson
    refuses (NaN, 1e400, a lone surrogate, nesting deeper than 1,024) is parsed again by it, so that
    it keeps json's value or error. The check joins and translates the lines at C speed (0.11 s for
    the 150 MB file's 144 blocks)."""
    if _LONG_NUMBER in "\n".join(lines).translate(_DIGITS_AS_ZERO):
        return json.loads
    return _loads_fast


def _loads_fast(line: str) -> Any:
    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def first_json_object(text: str) -> dict[str, Any] | None:
    """The text's first line as a JSON object, or None where it is not one (format detection:
    which reader a JSON Lines file is for). ``text`` may be the whole file or only its first lines."""
    lines = leading_lines(text, 1)
    first = lines[0] if lines else ""
    if not first.startswith("{"):
        return None
    try:
        record = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        return None
    return record if isinstance(record, dict) else None


def read_toml_file(path: Path) -> dict[str, Any]:
    """A TOML file (a column mapping), or DataError naming the file: a syntax error, or arrays or tables
    nested so deep that tomllib recurses past the interpreter's limit."""
    try:
        return tomllib.loads(read_text_file(path))
    except tomllib.TOMLDecodeError as exc:
        raise DataError(f"not valid TOML: {exc}", path=str(path)) from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise DataError("not valid TOML: arrays or tables nested too deeply", path=str(path)) from None


def read_json_file(path: Path) -> Any:
    return parse_json_text(read_text_file(path), path)


def json_type(value: Any) -> str:
    """The JSON name of a value's type, for messages ("a string", "an array", ...)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


_TYPE_NAMES = {str: "a string", list: "an array", dict: "an object", bool: "a boolean"}


def type_name(kind: type) -> str:
    """The JSON name of a Python type ("an array" for list), for "expected ..." messages."""
    return _TYPE_NAMES.get(kind, kind.__name__)


def split_lines(text: str) -> list[str]:
    """Non-empty, stripped lines: blank lines (USR ends contexts with them) are not turns."""
    return [line.strip() for line in text.split("\n") if line.strip()]


def alternating_turns(texts: Sequence[str], responder: str = RESPONDER,
                      other: str = OTHER_SPEAKER) -> tuple[Turn, ...]:
    """Label speakerless turns alternately, counting back from the end, so the last
    context turn belongs to ``other`` and the candidate's speaker follows it."""
    n = len(texts)
    return tuple(Turn(other if (n - 1 - i) % 2 == 0 else responder, text)
                 for i, text in enumerate(texts))


def split_speaker(line: str) -> tuple[str, str] | None:
    """("User", "hi") for "User: hi"; None when the line has no speaker prefix."""
    match = _SPEAKER_PREFIX.match(line)
    if match is None:
        return None
    return match.group(1).strip(), match.group(2).strip()


def speaker_turns(lines: Sequence[str]) -> tuple[Turn, ...] | None:
    """Turns from "Speaker: text" lines, or None when the lines do not look prefixed.

    They look prefixed when the first line is and at least half of them are; an
    unprefixed line after that continues the turn before it (a reply spanning lines).
    """
    if not lines:
        return ()
    parsed = [split_speaker(line) for line in lines]
    if parsed[0] is None or sum(p is not None for p in parsed) * 2 < len(parsed):
        return None
    turns: list[list[str]] = []
    for line, p in zip(lines, parsed):
        if p is None:
            turns[-1][1] += "\n" + line
        else:
            turns.append([p[0], p[1]])
    return tuple(Turn(speaker, text) for speaker, text in turns)


def turns_from_text(text: str, separator: str = "\n") -> tuple[Turn, ...]:
    """Dialogue text to turns: "Speaker: text" turns keep their speakers; plain
    turns are labelled A/B with the candidate's speaker (B) next."""
    pieces = [p.strip() for p in text.split(separator) if p.strip()]
    labelled = speaker_turns(pieces)
    return labelled if labelled is not None else alternating_turns(pieces)


def check_value(value: Any, scale: Scale, *, path: str, field: str, line: int | None = None,
                record: str | int | None = None) -> RatingValue:
    """One annotator's value, checked against the scale it was given on.

    None stays None (missing, never imputed). Numbers must lie on a numeric
    scale; a categorical value becomes its label string.
    """
    if value is None:
        return None
    if scale.kind is ScaleKind.CATEGORICAL:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise DataError(f"expected a label, found {json_type(value)}", path=path, line=line,
                            record=record, field=field)
        label = value if isinstance(value, str) else _label_of_number(value)
        if scale.labels and label not in scale.labels:
            raise DataError(f"{label!r} is not one of the labels {', '.join(scale.labels)}",
                            path=path, line=line, record=record, field=field)
        return label
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DataError(f"expected a number on the {describe_scale(scale)}, found {json_type(value)}"
                        f" {value!r}", path=path, line=line, record=record, field=field)
    if not math.isfinite(value) or not scale.contains(value):
        raise DataError(f"value {value!r} is outside the {describe_scale(scale)}", path=path,
                        line=line, record=record, field=field)
    return value


def _label_of_number(value: int | float) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def describe_scale(scale: Scale) -> str:
    if scale.kind is ScaleKind.CATEGORICAL:
        return f"categorical scale ({', '.join(scale.labels)})" if scale.labels else "categorical scale"
    return f"{scale.kind.value} scale {_num(scale.min)}-{_num(scale.max)}"


def _num(x: float | None) -> str:
    if x is None:
        return "?"
    return str(int(x)) if float(x).is_integer() else str(x)
