"""Property-based tests: every loader, the config reader and the template parser, fed broken input.

Random and mutated JSON, JSON Lines, CSV and TOML — wrong types, missing
fields, empty files, BOM, CRLF, invalid UTF-8, huge fields, deep nesting —
must give a correct load or a clear error naming the place: never a
traceback (any other exception fails the test), never a hang (each example
has a deadline) and never a partial dataset. Derandomized, so a run is
reproducible and bounded.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dialjudge.core.config import load_config
from dialjudge.core.errors import ConfigError, DataError, DialjudgeError, TemplateError
from dialjudge.core.judges.prompts.templates import parse_template, shipped_template_dir
from dialjudge.core.loaders import load_dataset
from dialjudge.core.model import Dataset

DATA = Path(__file__).resolve().parents[1] / "data"
SAMPLES = Path(__file__).resolve().parents[2] / "datasets"
#: $DIALJUDGE_PROPERTY_EXAMPLES explores further (and with fresh randomness) than the default run.
EXPLORE = int(os.environ.get("DIALJUDGE_PROPERTY_EXAMPLES", "0"))
PROPERTY = settings(max_examples=EXPLORE or 40, deadline=5000, derandomize=not EXPLORE, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                           HealthCheck.function_scoped_fixture])

BASES = {
    "native.jsonl": (DATA / "tiny_native.jsonl").read_bytes(),
    "bench.json": (DATA / "judge_bench_dialogue.json").read_bytes(),
    "bench_text.json": (DATA / "judge_bench_text.json").read_bytes(),
    "ratings.csv": (DATA / "ratings_standard.csv").read_bytes(),
    "kpi.jsonl": b"".join((SAMPLES / "sample_incar_kpi.jsonl").read_bytes().splitlines(True)[:6]),
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20)


def mutate(data: bytes, draw: Any) -> bytes:
    """One or more byte-level accidents: cut, splice, BOM, CRLF, bad UTF-8, a huge or deep field."""
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["truncate", "delete", "insert", "bom", "crlf", "bad-utf8", "huge",
                                     "deep", "empty", "duplicate-line", "swap-type"]))
        n = len(data)
        at = draw(st.integers(0, max(n - 1, 0)))
        if kind == "truncate":
            data = data[:at]
        elif kind == "delete":
            data = data[:at] + data[at + draw(st.integers(1, 40)):]
        elif kind == "insert":
            data = data[:at] + draw(st.binary(min_size=1, max_size=12)) + data[at:]
        elif kind == "bom":
            data = b"\xef\xbb\xbf" + data
        elif kind == "crlf":
            data = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
        elif kind == "bad-utf8":
            data = data[:at] + b"\xff\xfe\xc3" + data[at:]
        elif kind == "huge":
            data = data[:at] + b"x" * 300_000 + data[at:]
        elif kind == "deep":
            depth = draw(st.sampled_from([50, 5000, 100_000]))
            data = data[:at] + b"[" * depth + b"]" * depth + data[at:]
        elif kind == "empty":
            data = draw(st.sampled_from([b"", b"\n", b"\xef\xbb\xbf", b"   \r\n\r\n"]))
        elif kind == "duplicate-line":
            lines = data.splitlines(True)
            if lines:
                i = draw(st.integers(0, len(lines) - 1))
                data = b"".join(lines[: i + 1] + [lines[i]] + lines[i + 1:])
        elif kind == "swap-type":
            data = _swap_a_value(data, draw)
    return data


def _swap_a_value(data: bytes, draw: Any) -> bytes:
    """In JSON (or one JSON line), replace a value or drop a key, keeping the JSON valid."""
    lines = data.splitlines(True)
    if not lines:
        return data
    whole = json_doc(data)
    if whole is not None:
        return json.dumps(_change(whole, draw)).encode()
    i = draw(st.integers(0, len(lines) - 1))
    record = json_doc(lines[i])
    if record is None:
        return data
    lines[i] = json.dumps(_change(record, draw)).encode() + b"\n"
    return b"".join(lines)


def json_doc(data: bytes) -> Any:
    try:
        return json.loads(data)
    except (ValueError, RecursionError):
        return None


def _change(value: Any, draw: Any) -> Any:
    if isinstance(value, dict) and value:
        key = draw(st.sampled_from(sorted(value)))
        if draw(st.booleans()):
            return {k: v for k, v in value.items() if k != key}  # a missing field
        return {**value, key: _change(value[key], draw) if draw(st.booleans()) else draw(json_values)}
    if isinstance(value, list) and value:
        i = draw(st.integers(0, len(value) - 1))
        return value[:i] + [_change(value[i], draw)] + value[i + 1:]
    return draw(json_values)  # a wrong type


def check_load(path: Path) -> Dataset | None:
    """A dataset, or a DataError naming the file; anything else fails the test."""
    try:
        dataset = load_dataset(path)
    except DataError as exc:
        assert exc.path and Path(exc.path).name == path.name, str(exc)
        assert str(exc).startswith(str(exc.path)) and exc.reason.strip(), str(exc)
        return None
    assert isinstance(dataset, Dataset)
    return dataset


@PROPERTY
@given(base=st.sampled_from(sorted(BASES)), data=st.data())
def test_mutated_dataset_files_load_or_fail_with_the_place(tmp_path_factory: Any, base: str, data: Any) -> None:
    path = tmp_path_factory.mktemp("mut") / base
    path.write_bytes(mutate(BASES[base], data.draw))
    check_load(path)


@PROPERTY
@given(doc=json_values, suffix=st.sampled_from([".json", ".jsonl"]))
def test_random_json_loads_or_fails_with_the_place(tmp_path_factory: Any, doc: Any, suffix: str) -> None:
    path = tmp_path_factory.mktemp("json") / f"random{suffix}"
    path.write_text(json.dumps(doc), encoding="utf-8")
    check_load(path)


@PROPERTY
@given(rows=st.lists(st.lists(st.text(max_size=15), min_size=0, max_size=8), max_size=6),
       header=st.sampled_from(["id,context,response,Overall:a1", "id,group_id,context,response,Overall:a1,Overall:a2",
                               "", "context,response"]))
def test_random_csv_loads_or_fails_with_the_place(tmp_path_factory: Any, rows: list[list[str]],
                                                  header: str) -> None:
    import csv
    import io

    buf = io.StringIO()
    if header:
        buf.write(header + "\n")
    csv.writer(buf).writerows(rows)
    path = tmp_path_factory.mktemp("csv") / "random.csv"
    path.write_text(buf.getvalue(), encoding="utf-8")
    check_load(path)


@PROPERTY
@given(data=st.data())
def test_a_broken_record_is_never_skipped(tmp_path_factory: Any, data: Any) -> None:
    """Spoiling one record of a JSON Lines file fails the whole load, naming that line: no partial dataset."""
    lines = BASES["native.jsonl"].splitlines(True)
    good = load_dataset(DATA / "tiny_native.jsonl")
    records = [i for i, line in enumerate(lines) if b'"id"' in line]
    i = data.draw(st.sampled_from(records))
    spoiled = data.draw(st.sampled_from([b"{not json\n", b"[1, 2]\n", b'{"id": 5}\n', b"null\n",
                                         lines[i][: len(lines[i]) // 2] + b"\n"]))
    path = tmp_path_factory.mktemp("spoil") / "spoiled.jsonl"
    path.write_bytes(b"".join(lines[:i] + [spoiled] + lines[i + 1:]))
    dataset = check_load(path)
    assert dataset is None, f"a dataset of {len(dataset.examples)} items (of {len(good.examples)}) came back"


TEMPLATE = (shipped_template_dir() / "likert-1to5.toml").read_bytes()


@PROPERTY
@given(data=st.data())
def test_mutated_templates_parse_or_fail_with_the_place(data: Any) -> None:
    raw = mutate(TEMPLATE, data.draw)
    text = raw.decode("utf-8", errors="replace")
    try:
        template = parse_template(text, "mutated.toml")
    except TemplateError as exc:
        assert exc.source == "mutated.toml" and exc.reason.strip(), str(exc)
    except ConfigError as exc:
        assert "mutated.toml" in str(exc), str(exc)
    else:
        assert template.name


@PROPERTY
@given(text=st.text(max_size=300))
def test_random_template_text_parses_or_fails_with_the_place(text: str) -> None:
    try:
        parse_template(text, "random.toml")
    except DialjudgeError as exc:
        assert "random.toml" in str(exc), str(exc)


@PROPERTY
@given(data=st.data())
def test_mutated_config_files_load_or_fail_with_the_place(tmp_path_factory: Any, data: Any) -> None:
    base = (b'[data]\ndirs = ["data"]\n\n[judges.api]\nbackend = "openai"\nmodel = "m"\n'
            b'base_url = "http://127.0.0.1:1/v1"\napi_key_env = "KEY"\nconcurrency = 2\n')
    path = tmp_path_factory.mktemp("cfg") / "dialjudge.toml"
    path.write_bytes(mutate(base, data.draw))
    try:
        load_config(path)
    except ConfigError as exc:
        assert "dialjudge.toml" in str(exc), str(exc)


@PROPERTY
@given(data=st.data())
def test_mutated_csv_column_mappings_load_or_fail_with_the_place(tmp_path_factory: Any, data: Any) -> None:
    folder = tmp_path_factory.mktemp("mapped")
    (folder / "ratings.csv").write_bytes((DATA / "ratings_mapped.csv").read_bytes())
    mapping = folder / "ratings.mapping.toml"
    mapping.write_bytes(mutate((DATA / "ratings_mapped.mapping.toml").read_bytes(), data.draw))
    try:
        load_dataset(folder / "ratings.csv")
    except DataError as exc:
        assert exc.path and Path(exc.path).name in ("ratings.csv", "ratings.mapping.toml"), str(exc)
        assert exc.reason.strip()


DEEP = 100_000


def test_deeply_nested_toml_is_a_clear_error_everywhere(tmp_path: Path) -> None:
    """Found by the properties above: tomllib recursed until RecursionError, a traceback."""
    nested = "x = " + "[" * DEEP + "]" * DEEP + "\n"
    config = tmp_path / "dialjudge.toml"
    config.write_text(nested, encoding="utf-8")
    try:
        load_config(config)
    except ConfigError as exc:
        assert str(exc) == f"{config}: not valid TOML: arrays or tables nested too deeply"
    else:
        raise AssertionError("a config nested 100000 deep was accepted")
    try:
        parse_template(nested, "deep.toml")
    except TemplateError as exc:
        assert str(exc) == "deep.toml: not valid TOML: arrays or tables nested too deeply"
    else:
        raise AssertionError("a template nested 100000 deep was accepted")
    (tmp_path / "t.csv").write_bytes((DATA / "ratings_mapped.csv").read_bytes())
    (tmp_path / "t.mapping.toml").write_text(nested, encoding="utf-8")
    try:
        load_dataset(tmp_path / "t.csv")
    except DataError as exc:
        assert exc.path == str(tmp_path / "t.mapping.toml") and "nested too deeply" in exc.reason
    else:
        raise AssertionError("a column mapping nested 100000 deep was accepted")
    (tmp_path / "deep.json").write_text("[" * DEEP + "]" * DEEP, encoding="utf-8")
    assert check_load(tmp_path / "deep.json") is None
