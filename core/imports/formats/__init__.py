"""The import formats, registered in one place: each module reads one kind of file into a
:class:`~dialjudge.core.imports.records.ParsedFile`. Detection tries them in order; the verdicts format (a
pair id and a verdict column) comes before the table format (CSV / JSON Lines), which comes last, as
it accepts any CSV or JSON Lines file."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from ...errors import DataError
from . import inspect_log, native, promptfoo, table, verdicts

#: name -> module with ``NAME``, ``DESCRIPTION``, ``sniff(path, text)`` and ``read(path, text)``.
FORMATS: dict[str, ModuleType] = {m.NAME: m for m in (native, inspect_log, promptfoo, verdicts, table)}


def detect(path: Path, text: str) -> ModuleType:
    for module in FORMATS.values():
        if module.sniff(path, text):
            return module
    raise DataError(f"{path}: not a format dialjudge imports ({', '.join(FORMATS)}); name it with --format")


def get_format(name: str) -> ModuleType:
    try:
        return FORMATS[name]
    except KeyError:
        raise DataError(f"unknown import format {name!r} (one of {', '.join(FORMATS)})") from None
