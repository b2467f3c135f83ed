"""The column mapping of a table (CSV, TSV, or JSON Lines of flat records): :class:`CsvMapping` says
which column holds which field, and :class:`QualityColumns` which columns hold one quality's
ratings. Written in Python or read from TOML (the layout is in datasets/README.md).

Plain types, below both the table reader (:mod:`.csv_table`) and the ``COLUMN=FIELD`` mapping
(:mod:`.column_map`) that builds them, so neither needs the other to name them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from ..errors import DataError
from ..model import Scale
from ._common import json_type, read_toml_file

RATING_COLUMN_SEPARATOR = ":"


@dataclass(frozen=True)
class QualityColumns:
    """The columns holding one quality's ratings, one column per annotator."""

    columns: tuple[str, ...]
    scale: Scale
    #: Annotator names, in column order; empty means "use the column names".
    annotators: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.columns:
            raise ValueError("a quality needs at least one column")
        if self.annotators and len(self.annotators) != len(self.columns):
            raise ValueError(f"{len(self.columns)} columns but {len(self.annotators)} annotator names")

    @property
    def annotator_names(self) -> tuple[str, ...]:
        return self.annotators or self.columns


@dataclass(frozen=True)
class CsvMapping:
    """Which column holds what. Every column field is a header name, or None when absent."""

    id: str | None = None  # None: ids are "row-1", "row-2", ... (data rows, 1-based)
    group: str | None = None  # None: each example is its own group
    context: str | None = None
    turn_separator: str = "\n"
    #: True: every turn is "Speaker: text"; False: turns are labelled A/B, the
    #: candidate's speaker (B) last; None: decide per cell from how the turns look.
    parse_speakers: bool | None = None
    candidate: str | None = None
    references: tuple[str, ...] = ()
    #: Splits one reference cell into several references (None: one per cell).
    reference_separator: str | None = None
    fact: str | None = None
    system: str | None = None
    tags: str | None = None
    tag_separator: str = ","
    language: str | None = None  # a language code for every row, not a column
    level: str = "turn"  # turn | dialog, for every row
    delimiter: str = ","
    qualities: Mapping[str, QualityColumns] = field(default_factory=dict)
    #: Keep columns the mapping does not name in Example.extra.
    keep_other_columns: bool = True
    #: Set by default_mapping: the qualities' scales are guesses from the values seen.
    infer_scales: bool = False

    def __post_init__(self) -> None:
        if self.level not in ("turn", "dialog"):
            raise ValueError(f"level must be turn or dialog, not {self.level!r}")
        if self.level == "turn" and self.candidate is None:
            raise ValueError("a turn-level mapping needs a candidate column")
        if len(self.delimiter) != 1:
            raise ValueError(f"the delimiter must be one character, not {self.delimiter!r}")
        if not self.turn_separator:
            raise ValueError("the turn separator cannot be empty")

    def named_columns(self) -> list[str]:
        names = [self.id, self.group, self.context, self.candidate, self.fact, self.system, self.tags]
        out = [n for n in names if n is not None]
        out.extend(self.references)
        for quality in self.qualities.values():
            out.extend(quality.columns)
        return out

    @classmethod
    def from_toml(cls, path: str | Path) -> "CsvMapping":
        path = Path(path)
        return cls.from_dict(read_toml_file(path), source=str(path))

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], *, source: str = "column mapping") -> "CsvMapping":
        """Build a mapping from its TOML/dict form; unknown keys and wrong types are DataErrors."""
        def fail(message: str, key: str) -> DataError:
            return DataError(message, path=source, field=key)

        unknown = sorted(set(raw) - _MAPPING_KEYS)
        if unknown:
            raise fail(f"unknown key (allowed: {', '.join(sorted(_MAPPING_KEYS))})", unknown[0])
        kwargs: dict[str, Any] = {}
        for key in ("id", "group", "context", "candidate", "fact", "system", "tags", "language",
                    "turn_separator", "reference_separator", "tag_separator", "level", "delimiter"):
            if key in raw:
                if not isinstance(raw[key], str):
                    raise fail(f"expected a string, found {json_type(raw[key])}", key)
                kwargs[key] = raw[key]
        for key in ("parse_speakers", "keep_other_columns"):
            if key in raw:
                if not isinstance(raw[key], bool):
                    raise fail(f"expected true or false, found {json_type(raw[key])}", key)
                kwargs[key] = raw[key]
        if "reference" in raw and "references" in raw:
            raise fail("give either reference or references, not both", "reference")
        refs = raw.get("references", raw.get("reference"))
        if refs is not None:
            refs = [refs] if isinstance(refs, str) else refs
            if not isinstance(refs, list) or not all(isinstance(r, str) for r in refs):
                raise fail("expected a column name or a list of them",
                           "references" if "references" in raw else "reference")
            kwargs["references"] = tuple(refs)
        qualities = raw.get("qualities", {})
        if not isinstance(qualities, dict):
            raise fail(f"expected a table, found {json_type(qualities)}", "qualities")
        kwargs["qualities"] = {q: _quality_from_dict(q, t, fail) for q, t in qualities.items()}
        try:
            return cls(**kwargs)
        except ValueError as exc:
            raise DataError(str(exc), path=source) from None


_MAPPING_KEYS = frozenset({
    "id", "group", "context", "turn_separator", "parse_speakers", "candidate", "reference",
    "references", "reference_separator", "fact", "system", "tags", "tag_separator", "language",
    "level", "delimiter", "qualities", "keep_other_columns",
})


def _quality_from_dict(quality: str, table: Any, fail: Any) -> QualityColumns:
    key = f"qualities.{quality}"
    if not isinstance(table, dict):
        raise fail(f"expected a table with columns and scale, found {json_type(table)}", key)
    unknown = sorted(set(table) - {"columns", "annotators", "scale"})
    if unknown:
        raise fail("unknown key (allowed: columns, annotators, scale)", f"{key}.{unknown[0]}")
    columns = table.get("columns")
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise fail("expected a non-empty list of column names", f"{key}.columns")
    annotators = table.get("annotators", [])
    if not isinstance(annotators, list) or not all(isinstance(a, str) for a in annotators):
        raise fail("expected a list of annotator names", f"{key}.annotators")
    scale_raw = table.get("scale")
    if not isinstance(scale_raw, dict):
        raise fail("missing scale: give {kind, min, max} or {kind = \"categorical\", labels}",
                   f"{key}.scale")
    try:
        scale = Scale.from_dict(scale_raw)
    except (KeyError, ValueError, TypeError) as exc:
        raise fail(f"bad scale: {exc}", f"{key}.scale") from None
    try:
        return QualityColumns(tuple(columns), scale, tuple(annotators))
    except ValueError as exc:
        raise fail(str(exc), key) from None
