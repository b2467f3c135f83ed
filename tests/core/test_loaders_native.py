"""Native JSONL: exact round trips, the JSON Schema, error messages, speed, and the bundled samples."""

from __future__ import annotations

import json
import random
from pathlib import Path

import jsonschema
import pytest

from dialjudge.core.errors import DataError
from dialjudge.core.loaders import (
    example_to_record,
    load_dataset,
    read_native,
    read_usr,
    record_to_example,
    save_dataset,
    write_native,
)
from dialjudge.core.loaders.fed import read_fed
from dialjudge.core.model import Dataset, Example, Level, Perturbation, Rating, Scale, ScaleKind, Turn
from shared_data import REPO_ROOT, require_file

DATASETS = REPO_ROOT / "datasets"
SCHEMA = json.loads((DATASETS / "schema.json").read_text(encoding="utf-8"))
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
FIXTURE = Path(__file__).resolve().parents[1] / "data" / "tiny_native.jsonl"

ORDINAL_5 = Scale(ScaleKind.ORDINAL, 1, 5)
LABELS = Scale(ScaleKind.CATEGORICAL, labels=("bad", "ok", "good"))


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def _roundtrip(dataset: Dataset, tmp_path: Path) -> Dataset:
    path = write_native(dataset, tmp_path / f"{dataset.name}.jsonl")
    for line in path.read_text(encoding="utf-8").split("\n"):  # not splitlines: U+2028 is no line end
        if line:
            VALIDATOR.validate(json.loads(line))
    return read_native(path)


def _assert_same(a: Dataset, b: Dataset) -> None:
    assert (a.name, a.description, a.meta) == (b.name, b.description, b.meta)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x == y, x.id


# ---------------------------------------------------------------- round trips


@pytest.mark.parametrize("relative", ["usr/usr_topical_chat.json", "usr/usr_persona_chat.json"])
def test_usr_roundtrip(shared_data: Path, tmp_path: Path, relative: str) -> None:
    original = read_usr(require_file(shared_data, relative))
    _assert_same(original, _roundtrip(original, tmp_path))


def test_fed_roundtrip_keeps_missing_scores_and_extra(shared_data: Path, tmp_path: Path) -> None:
    original = read_fed(require_file(shared_data, "fed/fed_data.json"))
    back = _roundtrip(original, tmp_path)
    _assert_same(original, back)
    assert sum(s is None for ex in back for r in ex.ratings.values() for s in r.scores) == 167


def _example(**fields) -> Example:
    base = dict(id="x1", group_id="g1", context=(Turn("A", "hi"), Turn("B", "hello")),
                candidate="how are you?", ratings={"Overall": Rating((3, 4, 5), ORDINAL_5)})
    base.update(fields)
    return Example(**base)


EDGE_CASES = {
    "plain": _example(),
    "defaults": Example(id="only", group_id="only", context=(), candidate=""),
    "dialog level": _example(candidate=None, level=Level.DIALOG, group_id="d"),
    "dialog level with text": _example(level=Level.DIALOG),
    "categorical labels": _example(ratings={"Verdict": Rating(("good", "bad", None), LABELS,
                                                               ("p", "q", "r"))}),
    "categorical without labels": _example(ratings={"Topic": Rating(("food", "sport"),
                                                                    Scale(ScaleKind.CATEGORICAL))}),
    "adversarial": _example(tags=frozenset({"adversarial", "closed"}), adversarial=Perturbation(
        "date", "x0", "1998", "2004")),
    "adversarial, default spans": _example(adversarial=Perturbation("negation", "x0")),
    "extra keys": _example(extra={"batch": 7, "notes": {"a": [1, None, "x"]}, "flag": False}),
    "unicode and chinese": _example(context=(Turn("用户", "你去过北京吗？"), Turn("系统", "去过，2019年去的。")),
                                    candidate="那年北京的天气怎么样？ 🙂", fact="北京 — 首都",
                                    language="zh", references=("你喜欢那里吗？", "Ça va ?")),
    "none scores": _example(ratings={"Overall": Rating((None, None, 2), ORDINAL_5),
                                     "Other": Rating((None,), Scale(ScaleKind.BINARY, 0, 1))}),
    "floats and continuous": _example(ratings={"Score": Rating((0.25, 99.5, 3.0),
                                                               Scale(ScaleKind.CONTINUOUS, 0, 100))}),
    "reference candidate": _example(is_reference=True, references=("how are you?",), system="gold"),
    "speakerless turns and newlines": _example(context=(Turn("", "line one\nline two"),),
                                               candidate="multi\nline"),
    "unicode line separators": _example(candidate="a\u2028b\x85c\x1cd\re", fact="\u2029"),
    "quotes and escapes": _example(candidate='he said "hi" \\ \t tab', fact=None, system="sys\"1"),
    "no ratings": _example(ratings={}),
    "many tags": _example(tags=frozenset({"open", "tag:with:colons", "ünïcode"})),
}


@pytest.mark.parametrize("case", list(EDGE_CASES), ids=list(EDGE_CASES))
def test_edge_case_roundtrips_exactly(case: str, tmp_path: Path) -> None:
    example = EDGE_CASES[case]
    record = example_to_record(example)
    VALIDATOR.validate(record)
    assert record_to_example(json.loads(json.dumps(record))) == example
    dataset = Dataset(f"edge-{case.replace(' ', '-')}", [example], description="é", meta={"k": [1]})
    _assert_same(dataset, _roundtrip(dataset, tmp_path))


def _random_example(rng: random.Random, index: int) -> Example:
    words = ["hi", "well", "北京", "naïve", "\"quoted\"", "tab\there", "line\nbreak", "🙂", ""]

    def text() -> str:
        return " ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))

    level = rng.choice([Level.TURN, Level.TURN, Level.DIALOG])
    ratings = {}
    for q in range(rng.randint(0, 3)):
        kind = rng.choice(list(ScaleKind))
        n = rng.randint(1, 5)
        if kind is ScaleKind.CATEGORICAL:
            scale = Scale(kind, labels=("a", "b", "c")) if rng.random() < 0.7 else Scale(kind)
            scores = [rng.choice(["a", "b", "c", None]) for _ in range(n)]
        else:
            low = rng.choice([0, 1, -1.5])
            scale = Scale(kind, low, low + rng.choice([1, 2, 4, 100]))
            scores = [rng.choice([None, scale.min, scale.max, (scale.min + scale.max) / 2]) for _ in range(n)]
        annotators = tuple(f"ann{k}" for k in range(n)) if rng.random() < 0.5 else ()
        ratings[f"q{q}"] = Rating(tuple(scores), scale, annotators)
    return Example(
        id=f"r{index}",
        group_id=f"g{index // 3}",
        context=tuple(Turn(rng.choice(["A", "B", "User", ""]), text()) for _ in range(rng.randint(0, 4))),
        candidate=text() if level is Level.TURN or rng.random() < 0.3 else None,
        references=tuple(text() for _ in range(rng.randint(0, 2))),
        fact=rng.choice([None, text()]),
        system=rng.choice([None, "s1", "s2"]),
        tags=frozenset(rng.sample(["open", "closed", "adversarial", "x"], rng.randint(0, 2))),
        ratings=ratings,
        is_reference=rng.random() < 0.1,
        level=level,
        language=rng.choice([None, "en", "zh"]),
        adversarial=rng.choice([None, Perturbation("number", "r0", text(), text())]),
        extra=rng.choice([{}, {"k": text()}, {"nested": {"n": [1, 2.5, None, True]}}]),
    )


@pytest.mark.parametrize("seed", range(5))
def test_random_datasets_roundtrip(seed: int, tmp_path: Path) -> None:
    rng = random.Random(seed)
    dataset = Dataset(f"random-{seed}", [_random_example(rng, i) for i in range(60)])
    _assert_same(dataset, _roundtrip(dataset, tmp_path))


def test_fixture_file_loads_and_rewrites_identically(tmp_path: Path) -> None:
    dataset = load_dataset(FIXTURE)
    assert dataset.name == "tiny-zh" and len(dataset) == 2
    second = dataset.get("zh-2")
    assert second.adversarial == Perturbation("date", "zh-1", "2019", "2021") and second.is_adversarial
    assert second.extra == {"batch": 3}
    assert dataset.get("zh-1").ratings["Overall"].scores == (4, 3, None)
    out = save_dataset(dataset, tmp_path / "copy.jsonl")
    assert [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()] == [
        json.loads(x) for x in FIXTURE.read_text(encoding="utf-8").splitlines()]


def test_no_header_means_name_from_file(tmp_path: Path) -> None:
    path = tmp_path / "plain.jsonl"
    path.write_text(json.dumps(example_to_record(_example())) + "\n\n", encoding="utf-8")
    dataset = read_native(path)
    assert dataset.name == "plain" and dataset.description == "" and dataset.meta == {}
    assert read_native(path, name="other").name == "other"


def test_readme_worked_example_is_valid() -> None:
    readme = (DATASETS / "README.md").read_text(encoding="utf-8")
    block = readme.split("### A worked example", 1)[1].split("```json", 1)[1].split("```", 1)[0]
    records, pending = [], ""
    for line in block.strip().splitlines():  # records are wrapped over lines for reading
        pending += line
        try:
            records.append(json.loads(pending))
            pending = ""
        except json.JSONDecodeError:
            continue
    assert pending == "" and len(records) == 3
    for record in records:
        VALIDATOR.validate(record)
    examples = [record_to_example(r) for r in records[1:]]
    assert examples[0].extra == {"annotation_batch": 7}
    assert examples[0].ratings["Overall"].scores == (4, 5, None)
    assert examples[1].level is Level.DIALOG and examples[1].candidate is None


def test_schema_rejects_what_the_reader_rejects() -> None:
    good = example_to_record(_example())
    VALIDATOR.validate(good)
    bad_records = [
        {k: v for k, v in good.items() if k != "candidate"},
        {**good, "context": "hi"},
        {**good, "level": "utterance"},
        {**good, "ratings": {"Overall": {"scores": [1], "scale": {"kind": "ordinal", "min": 1}}}},
        {**good, "adversarial": {"kind": "date"}},
        {**good, "dialjudge_dataset": 1},
    ]
    for record in bad_records:
        assert not VALIDATOR.is_valid(record), record
        with pytest.raises(DataError):
            record_to_example(record)


# ---------------------------------------------------------------- errors


def _record(**overrides) -> str:
    record = example_to_record(_example(id=overrides.pop("id", "x1")))
    record.update(overrides)
    return json.dumps(record, ensure_ascii=False)


def _lines_with(bad_line: str, at: int = 3) -> list[str]:
    lines = [json.dumps({"dialjudge_dataset": 1, "name": "t"})]
    lines += [_record(id=f"ok{i}") for i in range(at - 2)]
    lines.append(bad_line)
    return lines


NATIVE_ERRORS = [
    ("bad JSON on line 7", _lines_with('{"id": "x", "context": [', at=7), 7, None, "not valid JSON"),
    ("missing candidate", _lines_with(json.dumps({"id": "n", "context": []})), 3, "candidate",
     "missing required field"),
    ("null candidate at turn level", _lines_with(_record(candidate=None)), 3, "candidate", "needs a candidate"),
    ("score outside scale", _lines_with(_record(ratings={"Overall": {"scores": [1, 6], "scale": {
        "kind": "ordinal", "min": 1, "max": 5}}})), 3, "ratings.Overall.scores[1]",
     "value 6 is outside the ordinal scale 1-5"),
    ("duplicate id", _lines_with(_record(id="ok0")), 3, "id", "duplicate id 'ok0' (first on line 2)"),
    ("id wrong type", _lines_with(_record(id=5)), 3, "id", "expected a non-empty string, found a number"),
    ("context wrong type", _lines_with(_record(context="hello")), 3, "context", "found a string"),
    ("turn without text", _lines_with(_record(context=[{"speaker": "A"}])), 3, "context[0].text",
     "missing required field"),
    ("turn with unknown key", _lines_with(_record(context=[{"speaker": "A", "text": "x", "time": 1}])), 3,
     "context[0].time", "unknown turn key"),
    ("tags wrong type", _lines_with(_record(tags="open")), 3, "tags", "expected an array of strings"),
    ("reference not a string", _lines_with(_record(references=["a", 3])), 3, "references[1]",
     "expected a string"),
    ("bad level", _lines_with(_record(level="utterance")), 3, "level", "'utterance'"),
    ("is_reference not bool", _lines_with(_record(is_reference="yes")), 3, "is_reference", "true or false"),
    ("fact wrong type", _lines_with(_record(fact=["x"])), 3, "fact", "expected a string or null"),
    ("scale without max", _lines_with(_record(ratings={"Q": {"scores": [1], "scale": {
        "kind": "ordinal", "min": 1}}})), 3, "ratings.Q.scale.max", "needs max"),
    ("scale kind unknown", _lines_with(_record(ratings={"Q": {"scores": [1], "scale": {
        "kind": "likert", "min": 1, "max": 5}}})), 3, "ratings.Q.scale.kind", "'likert'"),
    ("scale min above max", _lines_with(_record(ratings={"Q": {"scores": [], "scale": {
        "kind": "ordinal", "min": 5, "max": 1}}})), 3, "ratings.Q.scale", "must be greater than min"),
    ("label not in list", _lines_with(_record(ratings={"V": {"scores": ["meh"], "scale": {
        "kind": "categorical", "labels": ["bad", "good"]}}})), 3, "ratings.V.scores[0]",
     "'meh' is not one of the labels bad, good"),
    ("string on numeric scale", _lines_with(_record(ratings={"Q": {"scores": ["3"], "scale": {
        "kind": "ordinal", "min": 1, "max": 5}}})), 3, "ratings.Q.scores[0]", "found the string '3'"),
    ("boolean score", _lines_with(_record(ratings={"Q": {"scores": [True], "scale": {
        "kind": "binary", "min": 0, "max": 1}}})), 3, "ratings.Q.scores[0]", "found a boolean"),
    ("annotator count", _lines_with(_record(ratings={"Q": {"scores": [1, 2], "annotators": ["a"], "scale": {
        "kind": "ordinal", "min": 1, "max": 5}}})), 3, "ratings.Q.annotators", "2 scores but 1 annotators"),
    ("rating without scale", _lines_with(_record(ratings={"Q": {"scores": [1]}})), 3, "ratings.Q.scale",
     "missing required field"),
    ("adversarial without source", _lines_with(_record(adversarial={"kind": "date"})), 3,
     "adversarial.source_id", "missing required field"),
    ("record is an array", _lines_with("[1, 2]"), 3, None, "expected a JSON object, found an array"),
    ("header not first", _lines_with(json.dumps({"dialjudge_dataset": 1})), 3, "dialjudge_dataset",
     "must be the first line"),
    ("header version", [json.dumps({"dialjudge_dataset": 2})], 1, "dialjudge_dataset",
     "unsupported format version 2"),
    ("header unknown key", [json.dumps({"dialjudge_dataset": 1, "title": "x"})], 1, "title",
     "unknown header key"),
]


@pytest.mark.parametrize(("lines", "line", "field", "phrase"), [c[1:] for c in NATIVE_ERRORS],
                         ids=[c[0] for c in NATIVE_ERRORS])
def test_errors_name_file_line_and_field(tmp_path: Path, lines, line, field, phrase) -> None:
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    for read in (read_native, load_dataset):
        with pytest.raises(DataError) as info:
            read(path)
        message = str(info.value)
        assert message.startswith(f"{path}, line {line}")
        if field is not None:
            assert f"field '{field}'" in message
        assert phrase in message
        assert info.value.line == line and info.value.path == str(path)


def _mutations(rng: random.Random, record: dict) -> dict:
    """A record with one value somewhere replaced by a random JSON value."""
    junk = [None, True, 0, -1, 3.5, 1e308, "", "x", [], [None], {}, {"kind": "ordinal"}, [1, "a"]]
    out = json.loads(json.dumps(record))
    containers = []

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                containers.append((node, k))
                walk(v)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                containers.append((node, i))
                walk(v)

    walk(out)
    parent, key = rng.choice(containers)
    if rng.random() < 0.2 and isinstance(parent, dict):
        del parent[key]
    else:
        parent[key] = rng.choice(junk)
    return out


def test_mangled_records_raise_only_data_error(tmp_path: Path) -> None:
    rng = random.Random(7)
    base = example_to_record(EDGE_CASES["adversarial"])
    base["ratings"]["Verdict"] = EDGE_CASES["categorical labels"].ratings["Verdict"].to_dict()
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(400):
        record = _mutations(rng, base)
        try:
            record_to_example(record, path="mangled.jsonl", line=1)
            outcomes["loaded"] += 1
        except DataError as exc:
            assert str(exc).startswith("mangled.jsonl, line 1")
            outcomes["refused"] += 1
    assert outcomes["loaded"] > 20 and outcomes["refused"] > 100


def test_writer_refuses_what_the_reader_would_refuse(tmp_path: Path) -> None:
    path = tmp_path / "out.jsonl"
    path.write_text("old content\n")
    bad = [_example(candidate=None),  # turn level without a candidate
           _example(ratings={"Overall": Rating((9,), ORDINAL_5)}),
           _example(extra={"system": "clash"}),
           _example(extra={"obj": object()}),
           _example(candidate="lone surrogate \ud800")]
    for example in bad:
        with pytest.raises(DataError) as info:
            write_native(Dataset("bad", [example]), path)
        assert "x1" in str(info.value) or "header" in str(info.value)
        assert path.read_text() == "old content\n"  # a refused write leaves the old file
    assert list(tmp_path.iterdir()) == [path]  # and no temporary file behind


def test_save_dataset_wants_jsonl(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"out\.json: datasets are saved as native JSONL"):
        save_dataset(Dataset("d", [_example()]), tmp_path / "out.json")


# ---------------------------------------------------------------- speed and samples


def test_ten_thousand_items_round_trip(tmp_path: Path) -> None:
    # Load speed is measured in bench/, not asserted here.
    rng = random.Random(1)
    examples = []
    for i in range(10_000):
        examples.append(_example(
            id=f"e{i}", group_id=f"g{i // 5}", system=f"s{i % 5}", fact="a fact of some length " * 3,
            context=tuple(Turn("AB"[k % 2], f"turn {k} of item {i}, with a few words") for k in range(4)),
            references=(f"reference {i}",),
            ratings={q: Rating(tuple(rng.randint(1, 5) for _ in range(3)), ORDINAL_5, ("a", "b", "c"))
                     for q in ("Overall", "Natural", "Engaging")}))
    path = write_native(Dataset("big", examples), tmp_path / "big.jsonl")
    dataset = load_dataset(path)
    assert len(dataset) == 10_000 and dataset.examples == examples


def _rating_record(scores: list, annotators: list | None = None) -> dict:
    rating: dict = {"scores": scores, "scale": {"kind": "ordinal", "min": 1, "max": 5}}
    if annotators is not None:
        rating["annotators"] = annotators
    return rating


def test_candidates_of_one_context_share_its_parts(tmp_path: Path) -> None:
    """Equal parts are read once and shared (what keeps 100,000 items small), and stay equal to the file."""
    context = [{"speaker": "A", "text": "Where is Kilimanjaro?"}, {"speaker": "B", "text": "Tanzania."}]
    records = [{"id": f"c{i}", "group_id": "g", "context": context, "candidate": f"reply {i}",
                "references": ["the reference"], "fact": "a fact", "tags": ["closed"], "topic": "travel",
                "ratings": {"overall": _rating_record([4, 5], ["a1", "a2"])}} for i in range(3)]
    path = tmp_path / "shared.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    first, *others = read_native(path).examples
    for other in others:
        assert other.context is first.context and other.references is first.references
        assert other.ratings is first.ratings and other.tags is first.tags and other.extra is first.extra
        assert other.candidate != first.candidate
    assert [t.to_dict() for t in first.context] == context
    assert first.ratings["overall"] == Rating((4, 5), ORDINAL_5, ("a1", "a2"))
    assert first.extra == {"topic": "travel"}
    assert not hasattr(first, "__dict__")  # slots: no per-item dict


@pytest.mark.parametrize(("seen", "then", "phrase"), [
    ([1, 2], [True, 2], "expected a number, a label or null, found a boolean"),
    ([1, 2], [1, 9], "outside"),
])
def test_a_rating_equal_to_a_checked_one_is_still_checked(tmp_path: Path, seen: list, then: list,
                                                           phrase: str) -> None:
    # True == 1 in Python: a rating read before must not vouch for a boolean that compares equal.
    lines = [json.dumps({"id": f"e{i}", "context": [], "candidate": "c", "ratings": {"Q": _rating_record(scores)}})
             for i, scores in enumerate([seen, then])]
    path = tmp_path / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match=phrase) as info:
        read_native(path)
    assert info.value.line == 2


def test_equal_votes_keep_their_number_types(tmp_path: Path) -> None:
    lines = [json.dumps({"id": f"e{i}", "context": [], "candidate": "c", "ratings": {"Q": _rating_record(scores)}})
             for i, scores in enumerate([[1, 2], [1.0, 2.0], [1, 2]])]
    path = tmp_path / "types.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    ints, floats, again = read_native(path).examples
    assert [type(s) for s in ints.ratings["Q"].scores] == [int, int]
    assert [type(s) for s in floats.ratings["Q"].scores] == [float, float]
    assert again.ratings["Q"] is ints.ratings["Q"]


SAMPLES = sorted(DATASETS.glob("*.jsonl"))


@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_bundled_samples_match_the_schema_and_load(path: Path, tmp_path: Path) -> None:
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), start=1):
        if line.strip():
            errors = list(VALIDATOR.iter_errors(json.loads(line)))
            assert not errors, f"{path.name} line {number}: {errors[0].message}"
    dataset = read_native(path)
    assert len(dataset) > 0
    _assert_same(dataset, _roundtrip(dataset, tmp_path))


def test_sample_dataset_names_are_unique() -> None:
    names = [read_native(p).name for p in SAMPLES]
    assert len(names) == len(set(names))
