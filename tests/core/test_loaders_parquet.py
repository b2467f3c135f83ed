"""Issue 33: Parquet tables (pyarrow, an optional extra) read with the same contract and column mapping as
CSV, list-valued rating columns as one rating per annotator position; without pyarrow, a clear message."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dialjudge.core.errors import DataError
from dialjudge.core.loaders import detect_format, load_dataset, table_columns
from dialjudge.core.loaders.column_map import parse_column_map
from dialjudge.core.loaders.parquet_table import NEEDS_PYARROW


def _write(path: Path, columns: dict) -> Path:
    pa = pytest.importorskip("pyarrow", reason="Parquet is an optional extra (pip install 'dialjudge[parquet]')")
    import pyarrow.parquet as pq

    pq.write_table(pa.table(columns), path)
    return path


def test_list_valued_ratings_are_one_rating_per_annotator_position(tmp_path: Path) -> None:
    path = _write(tmp_path / "rated.parquet", {
        "id": ["a", "b", "c"], "context": ["User: hi", "User: yo", "User: hey"], "response": ["hello", "sup", "hi"],
        "Overall": [[4, 5, None], [2, 3, 1], [5, None, None]]})
    assert detect_format(path) == "parquet"
    dataset = load_dataset(path)
    assert [ex.ratings["Overall"].scores for ex in dataset] == [(4, 5, None), (2, 3, 1), (5, None, None)]
    assert dataset.get("a").ratings["Overall"].annotators == ("1", "2", "3")
    assert dataset.meta["inferred_scales"]["Overall"] == {"kind": "ordinal", "min": 1, "max": 5}
    assert dataset.get("b").candidate == "sup" and dataset.get("b").context_text() == "User: yo"


def test_the_same_contract_as_csv_a_bad_value_is_a_counted_exclusion(tmp_path: Path) -> None:
    path = _write(tmp_path / "values.parquet", {
        "id": ["a", "b", "c", "d"], "candidate": ["w", "x", "y", "z"], "Overall:r1": ["1", "abc", "3", "5"],
        "Overall:r2": ["2", "2", "4", "4"]})
    dataset = load_dataset(path)
    assert dataset.meta["value_exclusions"] == {"not a number": 1}
    assert dataset.meta["warnings"] == ["not a number: 1 counted as missing — line 3 (id 'b'), field 'Overall:r1': 'abc'"]


def test_a_duplicate_id_names_the_row_as_a_csv_export_would(tmp_path: Path) -> None:
    path = _write(tmp_path / "dup.parquet", {"id": ["a", "a"], "candidate": ["x", "y"], "Overall:r1": [1, 2]})
    with pytest.raises(DataError, match=r"dup\.parquet, line 3, field 'id': duplicate id 'a' \(first on line 2\)"):
        load_dataset(path)


def test_a_column_mapping_reads_other_names(tmp_path: Path) -> None:
    path = _write(tmp_path / "other.parquet", {"item": ["a", "b", "c"], "reply": ["x", "y", "z"],
                                                "votes": [[1, 2], [3, 3], [2, 1]]})
    assert table_columns(path) == ["item", "reply", "votes:1", "votes:2"]
    with pytest.raises(DataError, match="give a column mapping"):
        load_dataset(path)
    dataset = load_dataset(path, column_map=parse_column_map(
        ["item=id", "reply=candidate", "votes:1=Overall:a", "votes:2=Overall:b"]))
    assert dataset.get("b").ratings["Overall"].scores == (3, 3)


def test_without_pyarrow_the_message_says_how_to_get_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "any.parquet"
    path.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)  # what an import finds where it is not installed
    with pytest.raises(DataError) as info:
        load_dataset(path)
    assert str(info.value) == f"{path}: {NEEDS_PYARROW}"
