"""The dataset formats dialjudge reads, each registered by its own loader module.

A loader module registers a :class:`DatasetFormat`: its name (``--format``), the
file suffixes that name it outright, how its content is recognised when the suffix
does not say, and how a file of it is read. :func:`dialjudge.core.loaders.load_dataset`
and :func:`~dialjudge.core.loaders.detect_format` only ask the registry, so a new
format is one new module in ``core/loaders/`` (plus its documentation).

The registry is the package (``core/loaders/__init__.py``): it finds the formats by
importing every module of the package the first time it is asked. The loader modules
import this module, never the package, so no import circle runs through the two.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from ..model import Dataset
from ..self_registry import Registrations
from ._common import (
    iter_file_line_blocks,
    iter_records,
    leading_lines,
    line_blocks,
    parse_json_text,
    read_leading_lines,
    read_text_file,
)


@dataclass
class DatasetFile:
    """A file being loaded: its text and its JSON are read once, when a format first asks."""

    path: Path
    name: str | None = None
    #: A column mapping (csv_table.CsvMapping), for the formats that take one.
    mapping: Any = None

    @cached_property
    def text(self) -> str:
        return read_text_file(self.path)

    @cached_property
    def head(self) -> str:
        """The file's first two non-blank lines (one per line, without leading white space), read
        without the rest: what detecting a JSON Lines format looks at. Empty where they cannot be
        read or decoded (reading the file says why)."""
        if "text" in self.__dict__:
            return "\n".join(leading_lines(self.text, 2))
        return "\n".join(read_leading_lines(self.path, 2))

    def line_blocks(self) -> Iterator[list[str]]:
        """The file's lines (as ``text.split("\\n")``) a block at a time: from the text where a format
        already read it, else from the file without building the whole text (a 150 MB file)."""
        if "text" in self.__dict__:
            return line_blocks(iter_records(self.text))
        return iter_file_line_blocks(self.path)

    @cached_property
    def json(self) -> Any:
        """The parsed JSON; DataError where the text is not JSON."""
        return parse_json_text(self.text, self.path)


@dataclass(frozen=True)
class DatasetFormat:
    """One file format, as load_dataset and detect_format see it."""

    name: str
    #: Detection order, lowest first: content that two formats could both claim goes to the first.
    priority: int
    #: What a file of this format looks like, for the message listing what dialjudge reads.
    layout: str
    read: Callable[[DatasetFile], Dataset]
    #: Suffixes (lower case, with the dot) that name the format without looking inside.
    suffixes: tuple[str, ...] = ()
    #: Whether its content is this format (a suffix-only format leaves it None).
    recognise: Callable[[DatasetFile], bool] | None = None
    #: Whether the content is JSON (a file in no known layout is then reported as JSON).
    is_json: bool = False
    #: Reads with a column mapping (given, or ``<stem>.mapping.toml`` beside the file).
    takes_mapping: bool = False
    #: Suffixes another format owns that this one may also come in (preference pairs in .jsonl or .csv):
    #: with such a suffix, its content is asked first (without a column mapping given).
    shares_suffixes: tuple[str, ...] = ()


DATASET_FORMATS: Registrations[DatasetFormat] = Registrations("dataset formats")


def register_format(fmt: DatasetFormat) -> None:
    """Called once by each module of the package, at its import."""
    DATASET_FORMATS.register(fmt.name, fmt)
