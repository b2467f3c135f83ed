"""Load meta-evaluation datasets into :class:`~dialjudge.core.model.Dataset`.

``load_dataset(path)`` works out the format from the extension and the content:

* ``.jsonl``: dialjudge's native format (:mod:`.native`);
* ``.json``: USR (a list of items with ``responses``), FED (a list of items with
  ``annotations`` and ``system``), JUDGE-BENCH (an object with ``instances``) or a
  KdConv split (a list of dialogues with ``messages``; no ratings, the raw material
  of adversarial sets);
* ``.csv`` / ``.tsv``: a column mapping (given, or ``<stem>.mapping.toml`` beside
  the file), else the standard column names (:mod:`.csv_table`).

Each loader returns a fully checked Dataset or raises DataError; nothing is
returned half-loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import DataError
from ..model import Dataset
from ._common import parse_json_text, read_text_file
from .csv_table import CsvMapping, QualityColumns, default_mapping, read_csv
from .fed import fed_dataset, looks_like_fed, read_fed
from .judge_bench import judge_bench_dataset, looks_like_judge_bench, read_judge_bench
from .native import example_to_record, native_dataset, read_native, record_to_example, split_records, write_native
from .usr import looks_like_usr, read_usr, usr_dataset

FORMATS = ("native", "usr", "fed", "judge-bench", "kdconv", "csv", "mt-bench", "pairs")

__all__ = [
    "FORMATS", "CsvMapping", "QualityColumns", "default_mapping", "detect_format",
    "example_to_record", "load_dataset", "read_csv", "read_fed", "read_judge_bench", "read_native",
    "read_usr", "record_to_example", "save_dataset", "write_native",
]

_EXPECTED = ("a dataset file: .jsonl (dialjudge native, MT-Bench human judgments or preference pairs), .json "
             "(USR, FED, JUDGE-BENCH or KdConv) or .csv/.tsv (with a column mapping, or preference pairs)")
MAPPING_SUFFIX = ".mapping.toml"


def load_dataset(path: str | Path, *, format: str | None = None, name: str | None = None,
                 csv_mapping: CsvMapping | str | Path | None = None) -> Dataset:
    """Load any supported file. ``format`` (one of FORMATS) skips detection;
    ``name`` renames the dataset; ``csv_mapping`` is a CsvMapping or a TOML file."""
    path = Path(path)
    if format is not None and format not in FORMATS:
        raise DataError(f"unknown format {format!r} (use one of {', '.join(FORMATS)})", path=str(path))
    if csv_mapping is not None and format not in (None, "csv"):
        raise DataError(f"a column mapping only applies to CSV files, not to format {format!r}",
                        path=str(path))
    if not path.exists():
        raise DataError(f"file not found; expected {_EXPECTED}", path=str(path))
    if path.is_dir():
        raise DataError(f"is a folder; expected {_EXPECTED}", path=str(path))

    fmt = format or _format_from_suffix(path)
    if fmt in ("mt-bench", "pairs") or (format is None and csv_mapping is None and fmt is not None):
        pairs = _load_pairs(path, format, name)  # pre-paired preference data (see .preference)
        if pairs is not None:
            return pairs
    if fmt == "csv" or (fmt is None and csv_mapping is not None):
        return read_csv(path, _mapping_for(path, csv_mapping), name=name)
    text = read_text_file(path)
    if fmt == "native" or (fmt is None and _looks_like_jsonl(text)):
        return native_dataset(split_records(text), path, name=name)
    data = parse_json_text(text, path)
    fmt = fmt or _format_from_json(data, path)
    if fmt == "usr":
        return usr_dataset(data, path, name=name)
    if fmt == "fed":
        return fed_dataset(data, path, name=name)
    if fmt == "kdconv":
        from ..adversarial.kdconv import kdconv_dataset

        return kdconv_dataset(data, path, name=name)
    return judge_bench_dataset(data, path, name=name)


def detect_format(path: str | Path) -> str:
    """The format load_dataset would use for this file (one of FORMATS)."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"is a folder; expected {_EXPECTED}", path=str(path))
    fmt = _format_from_suffix(path)
    if fmt is not None:
        return _pair_format(path) or fmt
    text = read_text_file(path)
    if _looks_like_jsonl(text):
        return "native"
    return _format_from_json(parse_json_text(text, path), path)


def save_dataset(dataset: Dataset, path: str | Path) -> Path:
    """Write the dataset in the native JSONL format (the only format dialjudge writes)."""
    path = Path(path)
    if path.suffix.lower() != ".jsonl":
        raise DataError("datasets are saved as native JSONL: give a path ending in .jsonl",
                        path=str(path))
    return write_native(dataset, path)


def _pair_format(path: Path) -> str | None:
    """"mt-bench" or "pairs" for a JSON Lines or CSV file of preference pairs, else None."""
    from .mt_bench import looks_like_mt_bench
    from .pair_table import first_line, looks_like_pair_file

    if path.suffix.lower() == ".jsonl":
        try:
            first = json.loads(first_line(path) or "null")
            if looks_like_mt_bench(first):
                return "mt-bench"
        except (json.JSONDecodeError, RecursionError):
            return None
    return "pairs" if looks_like_pair_file(path) else None


def _load_pairs(path: Path, format: str | None, name: str | None) -> Dataset | None:
    from .mt_bench import read_mt_bench
    from .pair_table import read_pair_table

    fmt = format or _pair_format(path)
    if fmt == "mt-bench":
        return read_mt_bench(path, name=name)
    if fmt == "pairs":
        return read_pair_table(path, name=name)
    return None


def _format_from_suffix(path: Path) -> str | None:
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        return "native"
    if suffix in (".csv", ".tsv"):
        return "csv"
    return None


def _looks_like_jsonl(text: str) -> bool:
    """A first line that is a whole JSON object with a header or an id, followed by more lines."""
    first, _, rest = text.lstrip().partition("\n")
    if not first.startswith("{"):
        return False
    try:
        record = json.loads(first)
    except (json.JSONDecodeError, RecursionError):
        return False
    if not isinstance(record, dict):
        return False
    if "dialjudge_dataset" in record:
        return True
    return "id" in record and "context" in record and (not rest.strip() or rest.lstrip().startswith("{"))


def _format_from_json(data: Any, path: Path) -> str:
    if looks_like_usr(data):
        return "usr"
    if looks_like_fed(data):
        return "fed"
    if looks_like_judge_bench(data):
        return "judge-bench"
    from ..adversarial.kdconv import looks_like_kdconv

    if looks_like_kdconv(data):
        return "kdconv"
    raise DataError("JSON in no known layout: expected a USR list (items with 'responses'), a FED "
                    "list (items with 'annotations' and 'system'), a JUDGE-BENCH object (with "
                    "'instances'), a KdConv list (dialogues with 'messages') or native JSON Lines",
                    path=str(path))


def _mapping_for(path: Path, mapping: CsvMapping | str | Path | None) -> CsvMapping | None:
    if isinstance(mapping, CsvMapping):
        return mapping
    if mapping is not None:
        return CsvMapping.from_toml(mapping)
    beside = path.with_name(path.stem + MAPPING_SUFFIX)
    return CsvMapping.from_toml(beside) if beside.is_file() else None
