"""load_dataset: format detection from extension and content, and unreadable or unknown files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialjudge.core.errors import DataError
from dialjudge.core.loaders import detect_format, format_names, load_dataset, save_dataset
from shared_data import require_file

DATA = Path(__file__).resolve().parents[1] / "data"


def test_formats() -> None:
    assert format_names() == ("native", "usr", "fed", "judge-bench", "kdconv", "csv", "mt-bench", "pairs",
                              "jsonl-table", "parquet")


@pytest.mark.parametrize(("relative", "fmt", "name", "size"), [
    ("usr/usr_topical_chat.json", "usr", "usr-topicalchat", 360),
    ("usr/usr_persona_chat.json", "usr", "usr-personachat", 300),
    ("fed/fed_data.json", "fed", "fed", 500),
    # KdConv: one item per knowledge-grounded reply (the raw material of adversarial sets)
    ("kdconv/film/test.json", "kdconv", "kdconv-film-test", 2851),
])
def test_real_files_are_detected(shared_data: Path, relative: str, fmt: str, name: str, size: int) -> None:
    path = require_file(shared_data, relative)
    assert detect_format(path) == fmt
    dataset = load_dataset(path)
    assert (dataset.name, len(dataset), dataset.source) == (name, size, str(path))


@pytest.mark.parametrize(("filename", "fmt"), [
    ("tiny_native.jsonl", "native"),
    ("judge_bench_dialogue.json", "judge-bench"),
    ("ratings_mapped.csv", "csv"),
    ("ratings_standard.csv", "csv"),
])
def test_fixtures_are_detected(filename: str, fmt: str) -> None:
    assert detect_format(DATA / filename) == fmt
    assert len(load_dataset(DATA / filename)) > 0


def test_native_content_is_recognised_whatever_the_extension(tmp_path: Path) -> None:
    for suffix in (".json", ".txt", ""):
        path = tmp_path / f"copy{suffix}"
        path.write_text((DATA / "tiny_native.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
        assert detect_format(path) == "native"
        assert load_dataset(path).name == "tiny-zh"


def test_explicit_format_skips_detection(shared_data: Path, tmp_path: Path) -> None:
    path = require_file(shared_data, "fed/fed_data.json")
    with pytest.raises(DataError, match=r"record 1 \(id 'tc-000'\), field 'fact': missing required field"):
        load_dataset(path, format="usr")
    with pytest.raises(DataError, match="unknown format 'xml'"):
        load_dataset(path, format="xml")
    with pytest.raises(DataError, match="a column mapping only applies to CSV"):
        load_dataset(path, format="fed", csv_mapping=DATA / "ratings_mapped.mapping.toml")


@pytest.mark.parametrize(("content", "phrase"), [
    ('{"rows": []}', "JSON in no known layout"),
    ("[1, 2, 3]", "JSON in no known layout"),
    ('[{"context": "x"}]', "JSON in no known layout"),
    ("this is not json", "not valid JSON"),
    ('{"a": 1,\n\n "b": }', "line 3: not valid JSON"),
])
def test_unknown_json_names_file_and_what_was_expected(tmp_path: Path, content: str, phrase: str) -> None:
    path = tmp_path / "mystery.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_dataset(path)
    message = str(info.value)
    assert message.startswith(str(path)) and phrase in message
    if "no known layout" in phrase:
        assert "USR" in message and "FED" in message and "JUDGE-BENCH" in message


def test_missing_folder_binary_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"nothing\.jsonl: file not found; expected a dataset file"):
        load_dataset(tmp_path / "nothing.jsonl")
    with pytest.raises(DataError, match="is a folder"):
        load_dataset(tmp_path)
    binary = tmp_path / "blob.json"
    binary.write_bytes(b"\xff\xfe\x00garbage\x80")
    with pytest.raises(DataError, match=r"blob\.json: not UTF-8 text"):
        load_dataset(binary)
    empty = tmp_path / "empty.json"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(DataError, match=r"empty\.json, line 1: not valid JSON"):
        load_dataset(empty)


def test_empty_jsonl_is_an_empty_dataset(tmp_path: Path) -> None:
    path = tmp_path / "nothing_yet.jsonl"
    path.write_text("", encoding="utf-8")
    dataset = load_dataset(path)
    assert dataset.name == "nothing_yet" and len(dataset) == 0


def test_save_then_load(tmp_path: Path) -> None:
    dataset = load_dataset(DATA / "judge_bench_text.json")
    out = save_dataset(dataset, tmp_path / "nested" / "jb.jsonl")
    back = load_dataset(out)
    assert back.examples == dataset.examples and back.meta == dataset.meta
    assert json.loads(out.read_text(encoding="utf-8").splitlines()[0])["dialjudge_dataset"] == 1
