"""CSV with a column mapping (Python or TOML), the standard column names, and broken files."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialjudge.core.errors import DataError
from dialjudge.core.loaders import CsvMapping, QualityColumns, load_dataset, read_csv
from dialjudge.core.loaders.csv_table import infer_scale
from dialjudge.core.model import Level, Scale, ScaleKind, Turn

DATA = Path(__file__).resolve().parents[1] / "data"
MAPPED = DATA / "ratings_mapped.csv"
MAPPING = DATA / "ratings_mapped.mapping.toml"
STANDARD = DATA / "ratings_standard.csv"
ORDINAL_5 = Scale(ScaleKind.ORDINAL, 1, 5)


def test_mapping_from_toml() -> None:
    mapping = CsvMapping.from_toml(MAPPING)
    assert mapping.id == "item_id" and mapping.references == ("gold",)
    assert mapping.parse_speakers is True and mapping.turn_separator == "||"
    assert mapping.qualities["Overall"] == QualityColumns(
        ("overall_a1", "overall_a2", "overall_a3"), ORDINAL_5, ("a1", "a2", "a3"))
    assert mapping.qualities["Verdict"].scale.labels == ("bad", "good")


def test_mapped_file() -> None:
    dataset = read_csv(MAPPED, CsvMapping.from_toml(MAPPING))
    assert [ex.id for ex in dataset] == ["d1-r1", "d1-r2", "d2-r1"]
    first = dataset.get("d1-r1")
    assert first.group_id == "d1" and dataset.get("d1-r2").group_id == "d1"
    assert first.context == (Turn("User", "hi there"),
                             Turn("System", "hello ! what do you like to cook ?"),
                             Turn("User", "mostly soup"))
    assert first.candidate == "which soup is your favourite ?"
    assert first.references == ("tomato soup is my go-to",)
    assert first.fact == "soup is a liquid food" and first.system == "seq2seq"
    assert first.tags == frozenset({"open", "knowledge"})
    # An empty cell is a missing rating, never imputed.
    assert first.ratings["Overall"].scores == (4, 5, None)
    assert first.ratings["Overall"].annotators == ("a1", "a2", "a3")
    assert first.human("Overall") == 4.5
    assert dataset.get("d1-r2").ratings["Verdict"].scores == ("bad", None)
    assert dataset.get("d1-r2").ratings["Verdict"].annotators == ("verdict_1", "verdict_2")
    assert first.extra == {"notes": "first"}
    chinese = dataset.get("d2-r1")
    assert chinese.context[1] == Turn("System", "你好！今天想聊什么？")
    assert chinese.fact is None and chinese.tags == frozenset()
    assert chinese.extra == {"notes": "quoted, with comma"}


def test_sidecar_mapping_is_found_by_load_dataset() -> None:
    assert load_dataset(MAPPED).examples == read_csv(MAPPED, CsvMapping.from_toml(MAPPING)).examples
    assert len(load_dataset(MAPPED, csv_mapping=MAPPING, name="m")) == 3


def test_python_mapping_with_alternating_speakers_and_constants(tmp_path: Path) -> None:
    path = tmp_path / "plain.tsv"
    path.write_text("ctx\tresp\tr1\tr2\tunused\n"
                    "hello ## how are you ## fine\tgreat\tgold a | gold b\tgold c\tz\n", encoding="utf-8")
    mapping = CsvMapping(context="ctx", turn_separator="##", parse_speakers=False, candidate="resp",
                         references=("r1", "r2"), reference_separator="|", language="en",
                         delimiter="\t", keep_other_columns=False)
    dataset = read_csv(path, mapping)
    example = dataset.get("row-1")
    assert [t.speaker for t in example.context] == ["A", "B", "A"]
    assert example.references == ("gold a", "gold b", "gold c")
    assert example.language == "en" and example.ratings == {} and example.extra == {}


def test_dialog_level_mapping(tmp_path: Path) -> None:
    path = tmp_path / "dialogs.csv"
    path.write_text('id,dialogue,c1,c2\nx,"User: hi\nSystem: hello",1,0\n', encoding="utf-8")
    mapping = CsvMapping(id="id", context="dialogue", level="dialog", qualities={
        "Coherent": QualityColumns(("c1", "c2"), Scale(ScaleKind.BINARY, 0, 1))})
    example = read_csv(path, mapping).get("x")
    assert example.level is Level.DIALOG and example.candidate is None
    assert example.context == (Turn("User", "hi"), Turn("System", "hello"))
    assert example.ratings["Coherent"].scores == (1, 0)


def test_standard_column_names_need_no_mapping() -> None:
    dataset = load_dataset(STANDARD)
    first = dataset.get("s1")
    assert first.group_id == "g1" and first.candidate == "fine thanks"
    assert [t.text for t in first.context] == ["hi", "hello , how are you ?"]
    assert first.context[-1].speaker == "A"  # the candidate's speaker, B, comes next
    assert first.references == ("i am well",)
    assert dataset.get("s2").tags == frozenset({"open", "odd"})
    assert first.ratings["Overall"].annotators == ("a1", "a2")
    assert dataset.get("s2").ratings["Overall"].scores == (1, None)
    assert dataset.get("s3").ratings["Verdict"].scores == (None,)
    inferred = dataset.meta["inferred_scales"]
    assert inferred["Overall"] == {"kind": "ordinal", "min": 1, "max": 5}
    assert inferred["Understandable"] == {"kind": "binary", "min": 0, "max": 1}
    assert inferred["Verdict"] == {"kind": "categorical", "labels": ["bad", "good"]}


@pytest.mark.parametrize(("values", "expected"), [
    (["0", "1", "", "1"], Scale(ScaleKind.BINARY, 0, 1)),
    (["2", "5", "3"], Scale(ScaleKind.ORDINAL, 2, 5)),
    (["0.5", "10", "3"], Scale(ScaleKind.CONTINUOUS, 0.5, 10)),
    (["yes", "no", "3"], Scale(ScaleKind.CATEGORICAL, labels=("3", "no", "yes"))),
    (["4", "4"], None),
    (["", " "], None),
])
def test_infer_scale(values, expected) -> None:
    assert infer_scale(values) == expected


# ---------------------------------------------------------------- broken files

HEADER = "item_id,dialogue_id,history,response,gold,knowledge,model,tags,overall_a1,overall_a2,overall_a3,verdict_1,verdict_2,notes"
GOOD_ROW = 'a1,d1,"User: hi || System: hello",ok,gold,,m,,3,4,5,good,bad,'


@pytest.mark.parametrize(("rows", "line", "column", "phrase"), [
    ([GOOD_ROW, GOOD_ROW], 3, "item_id", "duplicate id 'a1' (first on line 2)"),
    ([GOOD_ROW.replace("a1,", ",", 1)], 2, "item_id", "empty id"),
    ([GOOD_ROW.replace('"User: hi || System: hello"', '"User: hi || hello"')], 2, "history",
     "turn 2 has no 'Speaker: text' prefix"),
    ([GOOD_ROW + ",extra"], 2, None, "15 cells but the header has 14 columns (a long row"),
    ([GOOD_ROW, "", GOOD_ROW.replace("a1,", "a2,", 1).rsplit(",", 2)[0]], 4, None,
     "12 cells but the header has 14 columns (a short row"),
])
def test_broken_rows_name_line_and_column(tmp_path: Path, rows, line, column, phrase) -> None:
    path = tmp_path / "broken.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        read_csv(path, CsvMapping.from_toml(MAPPING))
    message = str(info.value)
    assert message.startswith(f"{path}, line {line}")
    if column:
        assert f"field '{column}'" in message
    assert phrase in message


@pytest.mark.parametrize(("rows", "reason", "place"), [
    ([GOOD_ROW.replace(",3,4,5,", ",3,x,5,")], "not a number", "line 2 (id 'a1'), field 'overall_a2': 'x'"),
    ([GOOD_ROW.replace(",3,4,5,", ",3,4,7,")], "outside the scale", "line 2 (id 'a1'), field 'overall_a3': 7"),
    ([GOOD_ROW.replace(",3,4,5,", ",3,4.5,5,")], "between the scale's points",
     "line 2 (id 'a1'), field 'overall_a2': 4.5"),
    ([GOOD_ROW.replace(",good,bad,", ",good,meh,")], "not one of the labels",
     "line 2 (id 'a1'), field 'verdict_2': 'meh'"),
    ([GOOD_ROW, "", GOOD_ROW.replace("a1,", "a2,", 1).replace(",5,", ",nan,")], "NaN or infinite",
     "line 4 (id 'a2'), field 'overall_a3': 'nan'"),
])
def test_bad_values_are_counted_exclusions(tmp_path: Path, rows, reason, place) -> None:
    """Issue 33: a value fault leaves that one value out (missing), counted with its reason and place."""
    path = tmp_path / "values.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n", encoding="utf-8")
    dataset = read_csv(path, CsvMapping.from_toml(MAPPING))
    assert dataset.meta["value_exclusions"] == {reason: 1}
    (warning,) = dataset.meta["warnings"]
    assert warning == f"{reason}: 1 counted as missing — {place}"


def test_exclusions_give_the_line_a_multi_line_row_starts_on(tmp_path: Path) -> None:
    path = tmp_path / "multi.csv"
    path.write_text("id,context,candidate,Overall:a,Overall:b\n"
                    'x1,"hi\nhello",ok,1,2\n'
                    'x2,"one\ntwo\nthree",fine,2,oops\n', encoding="utf-8")
    dataset = load_dataset(path, csv_mapping=CsvMapping(id="id", context="context", candidate="candidate",
                                                        qualities={"Overall": QualityColumns(
                                                            ("Overall:a", "Overall:b"), ORDINAL_5)}))
    assert dataset.get("x2").ratings["Overall"].scores == (2, None)
    assert "line 4 (id 'x2'), field 'Overall:b': 'oops'" in dataset.meta["warnings"][0]


def test_one_stray_text_does_not_turn_an_inferred_scale_into_labels(tmp_path: Path) -> None:
    """Issue 33: one "abc" among 1-5 ratings left the quality "categorical: 1, 2, 3, 4, 5, abc"."""
    path = tmp_path / "stray.csv"
    rows = [f"i{k},reply {k},{k % 5 + 1},{(k + 1) % 5 + 1}" for k in range(10)]
    rows[3] = "i3,reply 3,abc,5"
    path.write_text("id,candidate,Overall:a1,Overall:a2\n" + "\n".join(rows) + "\n", encoding="utf-8")
    dataset = load_dataset(path)
    assert dataset.meta["inferred_scales"]["Overall"] == {"kind": "ordinal", "min": 1, "max": 5}
    assert dataset.get("i3").ratings["Overall"].scores == (None, 5)
    assert dataset.meta["value_exclusions"] == {"not a number": 1}


def test_mapped_column_missing_from_header(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    path.write_text(HEADER.replace("knowledge", "facts") + "\n" + GOOD_ROW + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"short\.csv, line 1, field 'knowledge': column named by the mapping"):
        read_csv(path, CsvMapping.from_toml(MAPPING))


@pytest.mark.parametrize(("toml", "phrase"), [
    ('candidate = "r"\ncolour = "x"\n', "field 'colour': unknown key"),
    ('candidate = 3\n', "field 'candidate': expected a string"),
    ('candidate = "r"\nparse_speakers = "yes"\n', "field 'parse_speakers': expected true or false"),
    ('candidate = "r"\n[qualities.Q]\ncolumns = ["a"]\n', "field 'qualities.Q.scale': missing scale"),
    ('candidate = "r"\n[qualities.Q]\ncolumns = ["a"]\nscale = {kind = "ordinal", min = 1}\n',
     "field 'qualities.Q.scale': bad scale"),
    ('candidate = "r"\n[qualities.Q]\ncolumns = ["a", "b"]\nannotators = ["x"]\n'
     'scale = {kind = "binary", min = 0, max = 1}\n', "2 columns but 1 annotator names"),
    ('context = "c"\n', "needs a candidate column"),
    ('candidate = "r"\nlevel = "utterance"\n', "level must be turn or dialog"),
    ('candidate = "r\n', "not valid TOML"),
])
def test_broken_mapping_files(tmp_path: Path, toml: str, phrase: str) -> None:
    path = tmp_path / "map.toml"
    path.write_text(toml, encoding="utf-8")
    with pytest.raises(DataError) as info:
        CsvMapping.from_toml(path)
    assert str(info.value).startswith(str(path)) and phrase in str(info.value)


def test_csv_without_standard_names_or_mapping(tmp_path: Path) -> None:
    path = tmp_path / "odd.csv"
    path.write_text("a,b\n1,2\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"odd\.csv, line 1: the columns do not have the standard names"):
        load_dataset(path)
    empty = tmp_path / "empty.csv"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(DataError, match="empty file"):
        load_dataset(empty)


def test_inference_needs_more_than_one_value(tmp_path: Path) -> None:
    path = tmp_path / "flat.csv"
    path.write_text("candidate,Overall:a\nhi,3\nyo,3\n", encoding="utf-8")
    with pytest.raises(DataError, match="cannot infer a scale for 'Overall'"):
        load_dataset(path)
