"""Reading a JSON Lines file without building its whole text (issue 23: a 150 MB file's open).

The native reader takes the file a block of lines at a time and parses each block's lines with
orjson where that gives exactly what ``json.loads`` gives; these tests check both against the plain
computations: ``read_text_file(path).split("\\n")`` and ``json.loads``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dialjudge.core.errors import DataError
from dialjudge.core.loaders import _common, load_dataset, save_dataset
from dialjudge.core.loaders._common import (
    iter_file_line_blocks,
    iter_records,
    json_line_parser,
    leading_lines,
    line_blocks,
    read_leading_lines,
    read_text_file,
)
from dialjudge.core.loaders.formats import DatasetFile
from dialjudge.core.loaders.native import looks_like_native, native_dataset, read_native
from dialjudge.core.model import Dataset, Example, Rating, Scale, ScaleKind, Turn

AWKWARD_TEXTS = [
    "",
    "\n",
    "one line, no newline",
    "a\nb\n",
    "a\r\nb\r\nc",
    "a\rb\rc\r",
    "\ufeff{\"bom\": 1}\nsecond",
    "line with \u2028 and \u0085 inside\nnext",
    "\n\n  \nblank lines first\n\n",
    "é" * 70 + "\n" + "中文" * 40 + "\r\n" + "x",
]


@pytest.mark.parametrize("text", AWKWARD_TEXTS)
@pytest.mark.parametrize("chunk", [1, 2, 7, 64, 1 << 20])
def test_lines_of_a_file_are_those_of_its_whole_text(text: str, chunk: int, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    # Tiny chunks put every boundary (a CR before its LF, a two-byte character) between two reads.
    monkeypatch.setattr(_common, "_LINES_CHUNK", chunk)
    path = tmp_path / "f.jsonl"
    path.write_bytes(text.encode("utf-8"))
    expected = read_text_file(path).split("\n")
    assert [line for block in iter_file_line_blocks(path) for line in block] == expected
    assert [line for block in line_blocks(iter_records(read_text_file(path)), 2) for line in block] == expected


@pytest.mark.parametrize("text", AWKWARD_TEXTS)
def test_leading_lines_from_the_file_are_those_of_its_text(text: str, tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(text.encode("utf-8"))
    whole = read_text_file(path)
    plain = [line.lstrip() for line in whole.split("\n") if line.strip()][:2]
    assert leading_lines(whole, 2) == plain
    assert read_leading_lines(path, 2) == plain


def test_a_bad_byte_is_the_data_error_of_reading_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"id": "a"}\n' * 1000 + b"\xff\n")
    with pytest.raises(DataError) as streamed:
        list(iter_file_line_blocks(path))
    with pytest.raises(DataError) as whole:
        read_text_file(path)
    assert str(streamed.value) == str(whole.value)
    assert "offset 12000" in str(streamed.value)


JSON_EDGE_CASES = [
    '{"a": 1, "a": 2}', '{"x": 1e400}', '{"x": -1e400}', '{"x": NaN}', '{"x": Infinity}',
    '{"x": 123456789012345678901234567890}', '{"x": -9223372036854775809}', '{"x": 18446744073709551616}',
    '{"x": 9223372036854775807}', '{"x": "\\ud800"}', '{"x": "\\ud83d\\ude00"}', '{"x": 0.1}',
    '{"x": 5e-324}', '{"x": 1e-400}', '{"x": -0.0}', '{"x": 12345678901234567890.5}',
    '{"x": "a\tb"}', '{"x": 01}', '{"x": [1, 2', "", "   ", '"just a string"', "[" * 1100 + "]" * 1100,
    '{"id": "0000000000000000000 in a text is only digits"}', '{"x": "\\u0000"}',
]


def _outcome(parse, line: str) -> tuple[str, object]:  # type: ignore[no-untyped-def]
    try:
        value = parse(line)
    except json.JSONDecodeError as exc:
        return "error", (exc.msg, exc.lineno, exc.colno)
    except RecursionError:
        return "recursion", None
    return "value", repr(value)


@pytest.mark.parametrize("line", JSON_EDGE_CASES)
def test_the_fast_parser_gives_what_json_gives(line: str) -> None:
    # Alone, and in a block with ordinary lines (a long number anywhere in a block sends it all to json).
    for block in ([line], [line, '{"ok": 1}'], ['{"ok": 1}', line]):
        parse = json_line_parser(block)
        assert _outcome(parse, line) == _outcome(json.loads, line)


def test_a_block_with_a_long_number_is_parsed_by_the_standard_library() -> None:
    assert json_line_parser(['{"x": 1}', '{"x": 1234567890123456789}']) is json.loads
    assert json_line_parser(['{"x": 1}', '{"x": 123456789012345678}']) is not json.loads


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(value=json_values)
def test_any_json_value_parses_as_json_parses_it(value: object) -> None:
    line = json.dumps(value)
    parse = json_line_parser([line])
    assert _outcome(parse, line) == _outcome(json.loads, line)
    assert repr(parse(line)) == repr(json.loads(line))


def _dataset(n: int) -> Dataset:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    examples = [
        Example(id=f"item-{i}", group_id=f"ctx-{i // 3}", context=(Turn("A", f"question {i // 3}"),),
                candidate=f"reply {i}", references=(f"reference {i // 3}",),
                ratings={"overall": Rating((1 + i % 5, 1 + (i * 7) % 5), scale, ("r1", "r2"))})
        for i in range(n)
    ]
    return Dataset("streamed", examples, description="a file read a block at a time")


def test_a_native_file_read_in_blocks_is_the_file_read_whole(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path = save_dataset(_dataset(500), tmp_path / "d.jsonl")
    whole = native_dataset(read_text_file(path).split("\n"), path)
    monkeypatch.setattr(_common, "_LINES_CHUNK", 997)  # blocks of a few lines, cut anywhere
    assert read_native(path) == whole
    assert load_dataset(path) == whole


def test_errors_name_the_same_line_when_read_in_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = save_dataset(_dataset(300), tmp_path / "d.jsonl")
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[200] = lines[200].replace('"scores": [', '"scores": [99, ')
    path.write_text("\n".join(lines), encoding="utf-8")
    monkeypatch.setattr(_common, "_LINES_CHUNK", 1500)
    with pytest.raises(DataError) as raised:
        load_dataset(path)
    assert raised.value.line == 201
    assert "outside" in str(raised.value)


def test_detection_reads_only_the_first_lines(tmp_path: Path) -> None:
    path = save_dataset(_dataset(50), tmp_path / "d.jsonl")
    file = DatasetFile(path)
    assert looks_like_native(file.head)
    assert "text" not in file.__dict__  # the whole text was never read
    assert file.head.split("\n") == leading_lines(read_text_file(path), 2)
