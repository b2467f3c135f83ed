"""USR loader: structural facts of the real Topical-Chat and PersonaChat files, and broken files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dialjudge.core.errors import DataError
from dialjudge.core.loaders import load_dataset, read_usr
from dialjudge.core.loaders.usr import REFERENCE_MODEL, USR_SCALES
from dialjudge.core.model import TAG_OPEN, Level, ScaleKind
from shared_data import require_file

QUALITIES = ["Understandable", "Natural", "Maintains Context", "Engaging", "Uses Knowledge", "Overall"]


@pytest.fixture(scope="module")
def topical(shared_data: Path):
    return read_usr(require_file(shared_data, "usr/usr_topical_chat.json"))


@pytest.fixture(scope="module")
def persona(shared_data: Path):
    return read_usr(require_file(shared_data, "usr/usr_persona_chat.json"))


def test_topical_chat_shape(topical) -> None:
    assert topical.name == "usr-topicalchat"
    assert len(topical) == 360
    groups = topical.groups()
    assert len(groups) == 60
    assert all(len(g) == 6 for g in groups.values())
    assert len(topical.systems) == 6
    assert REFERENCE_MODEL in topical.systems
    assert sum(ex.is_reference for ex in topical) == 60
    assert all(ex.level is Level.TURN and ex.language == "en" for ex in topical)
    assert list(topical.qualities) == QUALITIES


def test_topical_chat_is_all_open_and_persona_chat_untagged(topical, persona) -> None:
    assert all(ex.tags == frozenset({TAG_OPEN}) for ex in topical)
    assert all(ex.ended is None and not ex.tags for ex in persona)


def test_persona_chat_shape(persona) -> None:
    assert persona.name == "usr-personachat"
    assert len(persona) == 300
    assert len(persona.groups()) == 60
    assert persona.systems == ["KV-MemNN", "Language Model", "New Human Generated",
                               REFERENCE_MODEL, "Seq2Seq"]
    assert sum(ex.is_reference for ex in persona) == 60
    assert all(ex.fact.startswith("your persona:") for ex in persona)


def test_reference_is_the_ground_truth_of_every_candidate_in_its_group(topical, persona) -> None:
    for dataset in (topical, persona):
        for group in dataset.groups().values():
            truth = [ex for ex in group if ex.is_reference]
            assert len(truth) == 1 and truth[0].system == REFERENCE_MODEL
            assert all(ex.references == (truth[0].candidate,) for ex in group)
            assert len({ex.context for ex in group}) == 1


def test_ratings_keep_all_three_annotators_on_the_usr_scales(topical, persona) -> None:
    for dataset in (topical, persona):
        for ex in dataset:
            assert list(ex.ratings) == QUALITIES
            for quality, rating in ex.ratings.items():
                assert len(rating.scores) == 3 and len(rating.annotators) == 3
                assert rating.scale == USR_SCALES[quality]
                assert all(rating.scale.contains(s) and s is not None for s in rating.scores)
    assert dataset.qualities["Overall"].kind is ScaleKind.ORDINAL
    assert dataset.qualities["Understandable"].kind is ScaleKind.BINARY


def test_values_and_annotators_match_the_file(shared_data: Path, topical) -> None:
    raw = json.loads(require_file(shared_data, "usr/usr_topical_chat.json").read_text())
    for index, item in enumerate(raw):
        for j, response in enumerate(item["responses"]):
            ex = topical.get(f"tc-{index:03d}-{j}")
            assert ex.group_id == f"tc-{index:03d}"
            assert ex.system == response["model"]
            assert ex.candidate == response["response"].strip()
            assert ex.fact == item["fact"].strip()
            for quality in QUALITIES:
                assert list(ex.ratings[quality].scores) == response[quality]
                assert list(ex.ratings[quality].annotators) == item["annotators"]
    # Five annotators shared the work, three per context; "sm" rated every context.
    names = {a for ex in topical for a in ex.ratings["Overall"].annotators}
    assert names == {"sm", "me", "er", "fl", "yf"}
    assert all(ex.ratings["Overall"].annotators[0] == "sm" for ex in topical)


def test_context_turns_alternate_and_the_candidate_speaker_is_b(topical, persona) -> None:
    for dataset in (topical, persona):
        for ex in dataset:
            speakers = [t.speaker for t in ex.context]
            assert speakers[-1] == "A"
            assert all(a != b for a, b in zip(speakers, speakers[1:]))
            assert all(t.text and t.text == t.text.strip() and "\n" not in t.text for t in ex.context)
    first = topical.get("tc-000-0")
    assert len(first.context) == 5
    assert first.context[0].text.startswith("so , i 'm reading the latest film from studio ghibli")
    persona_first = persona.get("pc-000-0")
    assert len(persona_first.context) == 15
    assert persona_first.context[0].text == "hi there how are you doing this evening ?"


def test_mean_overall_per_dataset(topical, persona) -> None:
    # Means of the human Overall ratings as stored in the files (3 annotators, every response).
    assert sum(ex.human("Overall") for ex in topical) / len(topical) == pytest.approx(3.1444, abs=1e-4)
    assert sum(ex.human("Overall") for ex in persona) / len(persona) == pytest.approx(3.77, abs=1e-4)


def test_detection_and_name_override(shared_data: Path, tmp_path: Path) -> None:
    path = require_file(shared_data, "usr/usr_persona_chat.json")
    assert load_dataset(path, name="pc").name == "pc"
    # Without a telling file name the persona facts give the variant away.
    renamed = tmp_path / "some_ratings.json"
    renamed.write_text(path.read_text())
    assert load_dataset(renamed).name == "usr-personachat"
    assert read_usr(renamed, variant="topicalchat").name == "usr-topicalchat"


# ---------------------------------------------------------------- broken files

def _item(**response_overrides):
    base = {"Understandable": [1, 1, 1], "Natural": [3, 3, 2], "Maintains Context": [3, 3, 3],
            "Engaging": [2, 2, 2], "Uses Knowledge": [0, 1, 0], "Overall": [4, 5, 4]}
    other = dict(base, model="Seq2Seq", response="ok\n")
    response = dict(base, model=REFERENCE_MODEL, response="sure\n")
    response.update(response_overrides)
    return {"context": "hello\nhi there\n", "fact": "a fact", "annotators": ["x", "y", "z"],
            "responses": [other, response]}


def _write(tmp_path: Path, data) -> Path:
    path = tmp_path / "usr_topical_chat_broken.json"
    path.write_text(json.dumps(data))
    return path


def test_small_valid_file_loads(tmp_path: Path) -> None:
    dataset = load_dataset(_write(tmp_path, [_item()]))
    assert [ex.is_reference for ex in dataset] == [False, True]
    assert dataset.get("tc-000-0").references == ("sure",)
    assert [t.speaker for t in dataset.get("tc-000-0").context] == ["B", "A"]


@pytest.mark.parametrize(("data", "record", "field", "phrase"), [
    ([_item(Overall=[4, 5])], "1 (id 'tc-000')", "responses[1].Overall", "2 values but 3 annotators"),
    ([_item(), {k: v for k, v in _item().items() if k != "fact"}], "2 (id 'tc-001')", "fact",
     "missing required field"),
    ([_item(response=None)], "1 (id 'tc-000')", "responses[1].response", "expected a string"),
    ([_item(model="Seq2Seq")], None, None, None),  # no reference: loads, references empty
])
def test_broken_usr_files_name_record_and_field(tmp_path: Path, data, record, field, phrase) -> None:
    path = _write(tmp_path, data)
    if phrase is None:
        dataset = read_usr(path)
        assert all(ex.references == () and not ex.is_reference for ex in dataset)
        return
    with pytest.raises(DataError) as info:
        read_usr(path)
    message = str(info.value)
    assert str(path) in message and f"record {record}" in message
    assert f"field '{field}'" in message and phrase in message


@pytest.mark.parametrize(("data", "reason", "place"), [
    ([_item(Overall=[4, 6, 4])], "outside the scale", "field 'responses[1].Overall[1]': 6"),
    ([_item(Natural=[0, 3, 3])], "outside the scale", "field 'responses[1].Natural[0]': 0"),
    ([_item(Understandable=[1, 2, 1])], "outside the scale", "field 'responses[1].Understandable[1]': 2"),
    ([_item(Engaging=[2, "high", 2])], "not a number", "field 'responses[1].Engaging[1]': 'high'"),
    ([_item(Overall=[4, 4.5, 4])], "between the scale's points", "field 'responses[1].Overall[1]': 4.5"),
])
def test_bad_usr_values_are_counted_exclusions(tmp_path: Path, data, reason, place) -> None:
    dataset = read_usr(_write(tmp_path, data))
    assert dataset.meta["value_exclusions"] == {reason: 1}
    assert dataset.meta["warnings"] == [f"{reason}: 1 counted as missing — record 1 (id 'tc-000'), {place}"]


def test_missing_rating_and_two_ground_truths(tmp_path: Path) -> None:
    item = _item()
    del item["responses"][0]["Engaging"]
    with pytest.raises(DataError, match=r"record 1 \(id 'tc-000'\), field 'responses\[0\]\.Engaging': missing rating"):
        read_usr(_write(tmp_path, [item]))
    item = _item()
    item["responses"][0]["model"] = REFERENCE_MODEL
    with pytest.raises(DataError, match="2 responses are the 'Original Ground Truth'"):
        read_usr(_write(tmp_path, [item]))


def test_not_a_usr_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="expected a USR file"):
        read_usr(_write(tmp_path, {"instances": []}))
    bad = tmp_path / "usr_bad.json"
    bad.write_text('[{"context": "a",\n "fact": }]')
    with pytest.raises(DataError, match=r"usr_bad\.json, line 2: not valid JSON"):
        read_usr(bad)


def test_counter_of_systems_per_group(topical) -> None:
    per_group = Counter(tuple(sorted(ex.system for ex in g)) for g in topical.groups().values())
    assert len(per_group) == 1  # every context was answered by the same six systems
