"""The dataset-format registry: each loader module registers its format, and a new one needs no other change."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialjudge.core import loaders as loaders_package
from dialjudge.core.errors import DataError
from dialjudge.core.loaders import dataset_format, detect_format, format_names, load_dataset
from dialjudge.core.loaders.formats import DatasetFile, DatasetFormat, register_format
from dialjudge.core.model import Dataset, Example


def test_every_loader_module_registered_its_format_in_detection_order() -> None:
    assert format_names() == ("native", "usr", "fed", "judge-bench", "kdconv", "csv", "mt-bench", "pairs",
                              "jsonl-table", "parquet")
    assert [name for name in format_names() if dataset_format(name).takes_mapping] == ["csv", "jsonl-table", "parquet"]  # type: ignore[union-attr]
    # The preference-pair formats and flat JSON Lines records own no suffix: they are asked by content, in this
    # order (a flat table last, so a native or pair file is never read as one), before a suffix decides.
    shared = {name: dataset_format(name).shares_suffixes for name in format_names()}  # type: ignore[union-attr]
    assert {name: suffixes for name, suffixes in shared.items() if suffixes} == {
        "mt-bench": (".jsonl",), "pairs": (".jsonl", ".csv", ".tsv"), "jsonl-table": (".jsonl",)}
    assert not any(dataset_format(name).suffixes for name in ("mt-bench", "pairs", "jsonl-table"))  # type: ignore[union-attr]


def test_a_second_format_of_the_same_name_is_refused() -> None:
    with pytest.raises(ValueError, match="two dataset formats are named 'usr'"):
        register_format(DatasetFormat(name="usr", priority=99, layout="x", read=lambda file: None))  # type: ignore[arg-type,return-value]


def _toy_dataset(file: DatasetFile) -> Dataset:
    rows = file.json["toy_rows"]
    return Dataset(name=file.name or "toy", source=str(file.path), examples=[
        Example(id=str(i), group_id=str(i), context=(), candidate=row) for i, row in enumerate(rows)])


def test_a_registered_format_is_detected_and_read_and_named_in_errors(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    loaders_package.dataset_formats()  # the real ones first, then the toy one beside them
    monkeypatch.setattr(loaders_package._FORMATS.registrations, "_entries", dict(loaders_package._FORMATS.entries()))
    register_format(DatasetFormat(
        name="toy", priority=35, is_json=True, layout="a toy object (with 'toy_rows')",
        recognise=lambda file: isinstance(file.json, dict) and "toy_rows" in file.json, read=_toy_dataset))
    path = tmp_path / "toy.json"
    path.write_text(json.dumps({"toy_rows": ["a reply", "another"]}), encoding="utf-8")
    assert detect_format(path) == "toy"
    assert [ex.candidate for ex in load_dataset(path, name="mine").examples] == ["a reply", "another"]
    assert "toy" in format_names()
    unknown = tmp_path / "other.json"
    unknown.write_text('{"rows": []}', encoding="utf-8")
    with pytest.raises(DataError, match=r"a toy object \(with 'toy_rows'\)"):
        load_dataset(unknown)
