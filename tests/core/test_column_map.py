"""Column mappings given as COLUMN=FIELD (--map, the app's dialog): parsing, checking, reading CSV and
JSON Lines tables with them, the error that asks for one, and the mapping remembered with the file."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dialjudge.core.api import (
    column_choices,
    parse_column_map,
)
from dialjudge.core.api.column_maps import (
    RATING,
    column_map_from_fields,
)
from dialjudge.core.dataset_catalogue import open_dataset, remembered_column_map
from dialjudge.core.errors import ColumnMappingNeeded, DataError
from dialjudge.core.loaders import load_dataset, table_columns
from dialjudge.core.model import ScaleKind

DATA = Path(__file__).parent.parent / "data"
MAPPED_CSV = DATA / "ratings_mapped.csv"  # its TOML mapping is ratings_mapped.mapping.toml

OTHER_NAMES = """item,history,reply,gold,rater1,rater2,notes
x1,"A: hi
B: hello",how are you,fine thanks,4,5,n1
x2,A: yo,sup,hey,2,,n2
x3,A: hm,ok,okay,1,3,
"""
OTHER_NAMES_MAP = ["item=id", "history=context", "reply=candidate", "gold=reference", "rater1=Overall:r1",
                   "rater2=Overall:r2"]


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# -- parsing and checking ------------------------------------------------------------------------


def test_parse_keeps_the_order_and_reads_ratings_and_references() -> None:
    column_map = parse_column_map(["reply=candidate", "g1=reference", "g2=reference", "r1 = Overall : a1",
                                   "notes=-"])
    assert column_map.pairs == (("reply", "candidate"), ("g1", "reference"), ("g2", "reference"),
                                ("r1", "Overall : a1"), ("notes", "-"))
    assert parse_column_map(column_map.as_text()) == column_map


def test_a_column_name_may_hold_an_equals_sign() -> None:
    assert parse_column_map(["a=b=candidate"]).pairs == (("a=b", "candidate"),)


@pytest.mark.parametrize("items, phrase", [
    (["reply"], "expected COLUMN=FIELD, found 'reply'"),
    (["=candidate"], "expected COLUMN=FIELD"),
    (["reply="], "expected COLUMN=FIELD"),
    (["reply=answer"], "unknown field 'answer' for column 'reply'"),
    (["r1=Overall:"], "unknown field 'Overall:'"),
    (["reply=candidate", "reply=context"], "column 'reply' is mapped twice"),
    (["a=candidate", "b=candidate"], "field 'candidate' is given to two columns ('a' and 'b')"),
    (["a=Overall:x", "b=Overall : x"], "field 'Overall : x' is given to two columns ('a' and 'b')"),
])
def test_bad_items_are_refused_with_a_reason(items: list[str], phrase: str) -> None:
    with pytest.raises(DataError) as info:
        parse_column_map(items)
    assert phrase in str(info.value)


def test_an_unknown_field_names_the_valid_ones() -> None:
    with pytest.raises(DataError) as info:
        parse_column_map(["reply=response_text"])
    for field in ("id", "group_id", "context", "candidate", "reference", "fact", "system", "tags",
                  "QUALITY:ANNOTATOR"):
        assert field in str(info.value)


def test_a_column_the_file_lacks_is_named_with_the_files_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", OTHER_NAMES)
    with pytest.raises(DataError) as info:
        load_dataset(path, column_map=parse_column_map(["answer=candidate"]))
    message = str(info.value)
    assert "'answer'" in message and "item, history, reply, gold, rater1, rater2, notes" in message


def test_no_candidate_asks_for_a_mapping_again(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", OTHER_NAMES)
    with pytest.raises(ColumnMappingNeeded) as info:
        load_dataset(path, column_map=parse_column_map(["rater1=Overall:r1"]))
    assert "candidate" in str(info.value) and info.value.columns[:3] == ["item", "history", "reply"]


# -- the error without a mapping ------------------------------------------------------------------


@pytest.mark.parametrize("name, text, columns", [
    ("t.csv", OTHER_NAMES, "item, history, reply, gold, rater1, rater2, notes"),
    ("t.tsv", "a\tb\n1\t2\n", "a, b"),
    ("t.jsonl", '{"uid": "q1", "answer": "hi", "s1": 3}\n{"uid": "q2", "answer": "yo", "s2": 1}\n',
     "uid, answer, s1, s2"),
])
def test_the_error_says_how_to_map_and_lists_the_columns(tmp_path: Path, name: str, text: str,
                                                          columns: str) -> None:
    path = write(tmp_path / name, text)
    with pytest.raises(ColumnMappingNeeded) as info:
        load_dataset(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert "--map COLUMN=FIELD" in message and "column dialog" in message
    assert f"(the file's columns: {columns})" in message
    assert info.value.columns == columns.split(", ")
    assert table_columns(path) == columns.split(", ")


# -- reading CSV with a mapping --------------------------------------------------------------------


def test_csv_with_other_names_reads_the_right_values(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", OTHER_NAMES)
    dataset = load_dataset(path, column_map=parse_column_map(OTHER_NAMES_MAP))
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))  # the file read independently
    assert [ex.id for ex in dataset] == [r["item"] for r in rows]
    for ex, row in zip(dataset, rows):
        assert ex.candidate == row["reply"] and ex.references == (row["gold"],)
        expected = tuple(int(row[c]) if row[c] else None for c in ("rater1", "rater2"))
        assert ex.ratings["Overall"].scores == expected
        assert ex.ratings["Overall"].annotators == ("r1", "r2")
        assert ex.extra == {"notes": row["notes"]}
    assert [(t.speaker, t.text) for t in dataset.examples[0].context] == [("A", "hi"), ("B", "hello")]
    scale = dataset.examples[0].ratings["Overall"].scale
    assert (scale.kind, scale.min, scale.max) == (ScaleKind.ORDINAL, 1, 5)
    assert dataset.meta["inferred_scales"] == {"Overall": {"kind": "ordinal", "min": 1, "max": 5}}
    assert dataset.meta["column_map"] == OTHER_NAMES_MAP


def test_a_mapping_agrees_with_the_toml_mapping_of_the_same_file() -> None:
    by_toml = load_dataset(MAPPED_CSV)  # ratings_mapped.mapping.toml beside it
    by_map = load_dataset(MAPPED_CSV, column_map=parse_column_map([
        "item_id=id", "dialogue_id=group_id", "response=candidate", "gold=reference", "knowledge=fact",
        "model=system", "overall_a1=Overall:a1", "overall_a2=Overall:a2", "overall_a3=Overall:a3",
        "verdict_1=Verdict:verdict_1", "verdict_2=Verdict:verdict_2", "history=-", "tags=-"]))
    assert [ex.id for ex in by_map] == [ex.id for ex in by_toml]
    for a, b in zip(by_map, by_toml):
        assert (a.group_id, a.candidate, a.references, a.fact, a.system) == (
            b.group_id, b.candidate, b.references, b.fact, b.system)
        for quality in ("Overall", "Verdict"):
            assert a.ratings[quality].scores == b.ratings[quality].scores
            assert a.ratings[quality].annotators == b.ratings[quality].annotators
        assert a.extra["history"] and a.extra["tags"] is not None  # "-": kept as extra columns


def test_unnamed_columns_keep_their_standard_names_and_the_mapping_wins(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", "context,candidate,reply,Overall:a1,Overall:a2\n"
                                     "hi,standard one,mapped one,3,4\nyo,standard two,mapped two,1,2\n")
    dataset = load_dataset(path, column_map=parse_column_map(["reply=candidate"]))
    assert [ex.candidate for ex in dataset] == ["mapped one", "mapped two"]
    assert dataset.examples[0].extra == {"candidate": "standard one"}  # not lost: kept as an extra column
    assert dataset.examples[1].ratings["Overall"].scores == (1, 2)
    assert dataset.examples[0].context[0].text == "hi"


def test_several_reference_columns(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", "reply,g1,g2,score\nhey,one,two,1\nho,,three,0\n")
    dataset = load_dataset(path, column_map=parse_column_map(
        ["reply=candidate", "g1=reference", "g2=reference", "score=Good:r"]))
    assert [ex.references for ex in dataset] == [("one", "two"), ("three",)]
    assert dataset.examples[0].ratings["Good"].scale.kind is ScaleKind.BINARY


# -- JSON Lines tables --------------------------------------------------------------------------


def test_json_lines_of_flat_records_read_with_a_mapping(tmp_path: Path) -> None:
    records = [
        {"uid": "q1", "turns": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
         "answer": "how are you?", "refs": ["fine", "good"], "s1": 4, "s2": 5.0},
        {"uid": "q2", "turns": ["yo", "sup"], "answer": "ok", "refs": [], "s1": 2, "s2": None},
        {"uid": "q3", "turns": "A: hm", "answer": "fine", "s1": 1, "s2": 3},
    ]
    path = write(tmp_path / "t.jsonl", "".join(json.dumps(r) + "\n" for r in records))
    dataset = load_dataset(path, column_map=parse_column_map(
        ["uid=id", "turns=context", "answer=candidate", "refs=reference", "s1=Overall:a", "s2=Overall:b"]))
    assert [ex.id for ex in dataset] == ["q1", "q2", "q3"]
    assert [ex.ratings["Overall"].scores for ex in dataset] == [(4, 5), (2, None), (1, 3)]
    assert dataset.examples[0].references == ("fine", "good") and dataset.examples[1].references == ()
    assert [(t.speaker, t.text) for t in dataset.examples[0].context] == [("user", "hi"), ("assistant", "hello")]
    assert [t.text for t in dataset.examples[1].context] == ["yo", "sup"]
    assert dataset.examples[1].context[-1].speaker != dataset.examples[1].context[0].speaker
    assert dataset.meta["format"] == "jsonl-table"


def test_json_lines_with_the_standard_names_need_no_mapping(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", '{"context": "A: hi", "response": "hello", "Overall:a1": 2, "Overall:a2": 3}\n'
                                       '{"context": "A: yo", "response": "sup", "Overall:a1": 1, "Overall:a2": null}\n')
    dataset = load_dataset(path)
    assert [ex.ratings["Overall"].scores for ex in dataset] == [(2, 3), (1, None)]


def test_native_files_are_still_native(tmp_path: Path) -> None:
    dataset = load_dataset(DATA / "tiny_native.jsonl")
    assert dataset.meta.get("format") != "jsonl-table"


def test_a_nested_value_is_named(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", '{"answer": "hi", "s": 1}\n{"answer": "yo", "s": {"x": 1}}\n')
    with pytest.raises(DataError) as info:
        load_dataset(path, column_map=parse_column_map(["answer=candidate", "s=Overall:a"]))
    assert "line 2" in str(info.value) and "field 's'" in str(info.value)


def test_a_mapping_is_refused_for_a_file_that_is_no_table(tmp_path: Path) -> None:
    path = write(tmp_path / "t.json", "[]")
    with pytest.raises(DataError, match="applies to CSV/TSV and JSON Lines tables"):
        load_dataset(path, column_map=parse_column_map(["a=candidate"]))


# -- what the app's dialog proposes -----------------------------------------------------------------


def test_the_dialog_proposes_fields_from_names_and_numbers(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", OTHER_NAMES)
    choices = {c.column: c for c in column_choices(str(path)).choices}
    assert choices["history"].field == "context" and choices["reply"].field == "candidate"
    assert choices["gold"].field == "reference" and choices["notes"].field == "-"
    assert choices["item"].field == "-" and choices["item"].example == "x1"
    assert (choices["rater1"].field, choices["rater1"].quality) == (RATING, "rater")
    assert choices["rater2"].field_text() == "rater:rater2"
    fields = {c: ch.field_text() for c, ch in choices.items()}
    dataset = load_dataset(path, column_map=column_map_from_fields(fields))
    assert [ex.ratings["rater"].scores for ex in dataset] == [(4, 5), (2, None), (1, 3)]


# -- remembered with the file ----------------------------------------------------------------------


def test_the_mapping_is_remembered_and_reopens_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", OTHER_NAMES)
    first = open_dataset(str(path), column_map=parse_column_map(OTHER_NAMES_MAP))
    again = open_dataset(str(path))  # no mapping given: the remembered one
    assert [ex.ratings for ex in again] == [ex.ratings for ex in first]
    assert remembered_column_map(path) == parse_column_map(OTHER_NAMES_MAP)


def test_a_remembered_mapping_that_no_longer_fits_is_not_used(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", OTHER_NAMES)
    open_dataset(str(path), column_map=parse_column_map(OTHER_NAMES_MAP))
    write(path, OTHER_NAMES.replace("rater1", "judge1"))
    assert remembered_column_map(path) is None
    with pytest.raises(ColumnMappingNeeded):
        open_dataset(str(path))


def test_a_toml_mapping_written_since_wins_over_the_remembered_one(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", OTHER_NAMES)
    open_dataset(str(path), column_map=parse_column_map(OTHER_NAMES_MAP))
    write(tmp_path / "t.mapping.toml", 'candidate = "gold"\n[qualities.Overall]\ncolumns = ["rater1"]\n'
                                       'scale = { kind = "ordinal", min = 1, max = 5 }\n')
    dataset = open_dataset(str(path))
    assert [ex.candidate for ex in dataset] == ["fine thanks", "hey", "okay"]
    assert "column_map" not in dataset.meta


def test_not_remembered_when_asked_not_to(tmp_path: Path) -> None:
    path = write(tmp_path / "t.csv", OTHER_NAMES)
    open_dataset(str(path), column_map=parse_column_map(OTHER_NAMES_MAP), remember=False)
    assert remembered_column_map(path) is None


def test_a_mapping_is_refused_for_a_named_dataset() -> None:
    with pytest.raises(DataError, match="applies to a table file opened by its path, not to the bundled dataset 'sample'"):
        open_dataset("sample", column_map=parse_column_map(["a=candidate"]))


def test_a_broken_native_record_gets_the_native_readers_message(tmp_path: Path) -> None:
    path = write(tmp_path / "t.jsonl", '{"id": "a", "candidate": "hi"}\n')
    with pytest.raises(DataError) as info:
        load_dataset(path)
    assert not isinstance(info.value, ColumnMappingNeeded)
    assert "field 'context': missing required field" in str(info.value)


# -- whatever a user types: a mapping or a DataError, never a traceback -------------------------------

PROPERTY = settings(max_examples=60, deadline=5000, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture])
_NAMES = st.sampled_from(["item", "history", "reply", "gold", "rater1", "rater2", "notes", "nope", "a=b", " "])
_FIELDS = st.sampled_from(["id", "group_id", "context", "candidate", "reference", "fact", "system", "tags", "-",
                           "Overall:r1", "Overall:r2", "Overall : r1", "Q:", ":a", "answer", "a:b:c", ""])


@PROPERTY
@given(st.lists(st.tuples(_NAMES, _FIELDS), max_size=8))
def test_any_typed_mapping_reads_or_is_refused_with_a_data_error(tmp_path: Path,
                                                                 pairs: list[tuple[str, str]]) -> None:
    path = tmp_path / "t.csv"
    if not path.exists():
        write(path, OTHER_NAMES)
    items = [f"{column}={field}" for column, field in pairs]
    try:
        column_map = parse_column_map(items)
        assert parse_column_map(column_map.as_text()) == column_map
        dataset = load_dataset(path, column_map=column_map)
    except DataError:
        return
    candidates = [c for c, f in column_map.pairs if f == "candidate"]
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [ex.candidate for ex in dataset] == [r[candidates[0]].strip() for r in rows]
