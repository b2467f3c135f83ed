"""Load meta-evaluation datasets into :class:`~dialjudge.core.model.Dataset`.

``load_dataset(path)`` works out the format from the extension and the content,
asking the formats the loader modules registered (:mod:`.formats`), in their
detection order:

* ``.jsonl``: dialjudge's native format (:mod:`.native`), recognised by its content
  under any other name too;
* ``.json``: USR (:mod:`.usr`), FED (:mod:`.fed`), JUDGE-BENCH (:mod:`.judge_bench`)
  or a KdConv split (:mod:`.kdconv`: no ratings, the raw material of adversarial sets);
* ``.csv`` / ``.tsv``: a column mapping (given, or ``<stem>.mapping.toml`` beside
  the file), else the standard column names (:mod:`.csv_table`);
* ``.jsonl`` of flat records that are not native ones: read as a table, likewise
  (:mod:`.json_table`). A :class:`~.column_map.ColumnMap` (``--map COLUMN=FIELD``)
  reads either kind of table with the columns it names;
* preference pairs, asked before the suffix decides: MT-Bench human judgments in
  ``.jsonl`` (:mod:`.mt_bench`) and pair tables in ``.jsonl``/``.csv``/``.tsv``
  (:mod:`.pair_table`; see :mod:`.preference`).

Each loader returns a fully checked Dataset or raises DataError; nothing is
returned half-loaded.
"""

from __future__ import annotations

import csv
import io
import itertools
from pathlib import Path

from ..errors import DataError
from ..model import Dataset
from ..self_registry import SelfRegistry
from .column_map import ColumnMap
from .csv_table import default_mapping, read_csv
from .fed import read_fed
from .formats import DATASET_FORMATS, DatasetFile, DatasetFormat, register_format
from .json_table import table_rows
from .judge_bench import read_judge_bench
from .native import example_to_record, read_native, record_to_example, write_native
from .table_mapping import CsvMapping, QualityColumns
from .usr import read_usr

__all__ = [
    "ColumnMap", "CsvMapping", "QualityColumns", "table_columns", "table_preview", "default_mapping", "detect_format", "format_names",
    "DatasetFile", "DatasetFormat", "dataset_format", "dataset_formats", "register_format",
    "example_to_record", "load_dataset", "read_csv", "read_fed", "read_judge_bench", "read_native",
    "read_usr", "record_to_example", "save_dataset", "write_native",
]

MAPPING_SUFFIX = ".mapping.toml"

_FORMATS: SelfRegistry[DatasetFormat] = SelfRegistry(DATASET_FORMATS, __name__, Path(__file__).parent)


def dataset_formats() -> tuple[DatasetFormat, ...]:
    """Every registered format, in detection order."""
    return tuple(sorted(_FORMATS.entries().values(), key=lambda fmt: (fmt.priority, fmt.name)))


def format_names() -> tuple[str, ...]:
    return tuple(fmt.name for fmt in dataset_formats())


def dataset_format(name: str) -> DatasetFormat | None:
    return _FORMATS.entries().get(name)


def load_dataset(path: str | Path, *, format: str | None = None, name: str | None = None,
                 csv_mapping: CsvMapping | str | Path | None = None,
                 column_map: ColumnMap | None = None) -> Dataset:
    """Load any supported file. ``format`` (one of :func:`format_names`) skips detection;
    ``name`` renames the dataset; ``csv_mapping`` is a CsvMapping or a TOML file; ``column_map``
    (``--map COLUMN=FIELD``) reads a CSV/TSV or JSON Lines table with the columns it names."""
    path = Path(path)
    chosen = dataset_format(format) if format is not None else None
    if format is not None and chosen is None:
        raise DataError(f"unknown format {format!r} (use one of {', '.join(format_names())})", path=str(path))
    if csv_mapping is not None and column_map is not None:
        raise DataError("give a column mapping file or --map, not both", path=str(path))
    if csv_mapping is not None and chosen is not None and not chosen.takes_mapping:
        raise DataError(f"a column mapping only applies to CSV files, not to format {format!r}",
                        path=str(path))
    _check_is_file(path)
    file = DatasetFile(path, name)
    if column_map is not None:
        file.mapping = column_map
        return (chosen if chosen is not None and chosen.takes_mapping else _table_format(path, chosen)).read(file)
    fmt = (chosen or _format_from_suffix(path, None if csv_mapping is not None else file)
           or _mapping_format(csv_mapping) or _format_from_content(file))
    if fmt.takes_mapping:
        file.mapping = _mapping_for(path, csv_mapping)
    return fmt.read(file)


def table_columns(path: str | Path) -> list[str]:
    """The columns of a CSV/TSV file (its header) or the keys of a JSON Lines file's records: what a
    column mapping can name."""
    return table_preview(path, rows=0)[0]


def table_preview(path: str | Path, *, rows: int = 200) -> tuple[list[str], list[list[str]]]:
    """The columns of a CSV/TSV or JSON Lines table and the cells of its first ``rows`` rows."""
    path = Path(path)
    _check_is_file(path)
    fmt = _table_format(path, None)
    if fmt.name == "parquet":  # a binary file: its rows come from pyarrow, not from its text
        from .parquet_table import parquet_rows  # a member of this registry: loaded with the formats, asked here

        table = [cells for _, cells in parquet_rows(path)[:rows + 1]]
        return (table[0], table[1:]) if table else ([], [])
    text = DatasetFile(path).text
    if fmt.name == "csv":
        delimiter = "\t" if path.suffix.lower() == ".tsv" else ","
        reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
        try:
            table = [row for row in itertools.islice((r for r in reader if any(c.strip() for c in r)), rows + 1)]
        except csv.Error as exc:
            raise DataError(f"not valid CSV: {exc}", path=str(path)) from None
    else:
        table = [cells for _, cells in table_rows(text, str(path))[:rows + 1]]
    return (table[0], table[1:]) if table else ([], [])


def _table_format(path: Path, chosen: DatasetFormat | None) -> DatasetFormat:
    """The table format a column mapping reads this file with (by its suffix)."""
    suffix = path.suffix.lower()
    for fmt in dataset_formats():
        if fmt.takes_mapping and suffix in fmt.suffixes + fmt.shares_suffixes:
            return fmt
    where = f"format {chosen.name!r}" if chosen is not None else f"a {suffix or 'suffixless'} file"
    raise DataError(f"a column mapping applies to CSV/TSV and JSON Lines tables (.csv, .tsv, .jsonl), "
                    f"not to {where}", path=str(path))


def detect_format(path: str | Path) -> str:
    """The format load_dataset would use for this file (one of :func:`format_names`)."""
    path = Path(path)
    if path.is_dir():
        raise DataError(f"is a folder; expected {_expected()}", path=str(path))
    file = DatasetFile(path)
    return (_format_from_suffix(path, file) or _format_from_content(file)).name


def save_dataset(dataset: Dataset, path: str | Path) -> Path:
    """Write the dataset in the native JSONL format (the only format dialjudge writes)."""
    path = Path(path)
    if path.suffix.lower() != ".jsonl":
        raise DataError("datasets are saved as native JSONL: give a path ending in .jsonl",
                        path=str(path))
    return write_native(dataset, path)


def _expected() -> str:
    return "a dataset file: " + "; ".join(fmt.layout for fmt in dataset_formats())


def _check_is_file(path: Path) -> None:
    if not path.exists():
        raise DataError(f"file not found; expected {_expected()}", path=str(path))
    if path.is_dir():
        raise DataError(f"is a folder; expected {_expected()}", path=str(path))


def _format_from_suffix(path: Path, file: DatasetFile | None = None) -> DatasetFormat | None:
    """The format the suffix names; first, where ``file`` is given, a format sharing that suffix whose
    content it is (MT-Bench judgments or preference pairs in a .jsonl or .csv file)."""
    suffix = path.suffix.lower()
    if file is not None:
        for fmt in dataset_formats():
            if suffix in fmt.shares_suffixes and fmt.recognise is not None and fmt.recognise(file):
                return fmt
    return next((fmt for fmt in dataset_formats() if suffix in fmt.suffixes), None)


def _mapping_format(mapping: object) -> DatasetFormat | None:
    """A column mapping given without a format: the format that reads with one."""
    if mapping is None:
        return None
    return next(fmt for fmt in dataset_formats() if fmt.takes_mapping)


def _format_from_content(file: DatasetFile) -> DatasetFormat:
    for fmt in dataset_formats():
        if fmt.recognise is not None and fmt.recognise(file):
            return fmt
    layouts = ", ".join(fmt.layout for fmt in dataset_formats() if fmt.is_json)
    raise DataError(f"JSON in no known layout: expected {layouts} or native JSON Lines", path=str(file.path))


def _mapping_for(path: Path, mapping: CsvMapping | str | Path | None) -> CsvMapping | None:
    if isinstance(mapping, CsvMapping):
        return mapping
    if mapping is not None:
        return CsvMapping.from_toml(mapping)
    beside = path.with_name(path.stem + MAPPING_SUFFIX)
    return CsvMapping.from_toml(beside) if beside.is_file() else None
