"""FED loader: structural facts of the real file (levels, qualities, N/A answers) and broken files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from dialjudge.core.errors import DataError
from dialjudge.core.loaders import load_dataset, read_fed
from dialjudge.core.loaders.fed import FED_DIALOG_SCALES, FED_TURN_SCALES
from dialjudge.core.model import Level, ScaleKind
from shared_data import require_file


@pytest.fixture(scope="module")
def fed_path(shared_data: Path) -> Path:
    return require_file(shared_data, "fed/fed_data.json")


@pytest.fixture(scope="module")
def fed(fed_path: Path):
    return read_fed(fed_path)


def test_levels_qualities_and_annotators(fed) -> None:
    assert fed.name == "fed"
    levels = Counter(ex.level for ex in fed)
    assert levels == {Level.TURN: 375, Level.DIALOG: 125}
    assert {len(ex.ratings) for ex in fed if ex.level is Level.TURN} == {9}
    assert {len(ex.ratings) for ex in fed if ex.level is Level.DIALOG} == {11}
    assert len(fed.qualities_at(Level.TURN)) == 9
    assert len(fed.qualities_at(Level.DIALOG)) == 11
    assert {len(r.scores) for ex in fed for r in ex.ratings.values()} == {5}
    assert fed.systems == ["Human", "Meena", "Mitsuku"]
    assert Counter(ex.system for ex in fed if ex.level is Level.DIALOG) == {
        "Mitsuku": 44, "Human": 41, "Meena": 40}


def test_dialog_items_have_no_candidate(fed) -> None:
    assert all((ex.candidate is None) == (ex.level is Level.DIALOG) for ex in fed)
    assert all(ex.references == () and ex.fact is None for ex in fed)


def test_scales(fed) -> None:
    turn, dialog = fed.qualities_at(Level.TURN), fed.qualities_at(Level.DIALOG)
    assert (turn["Overall"].min, turn["Overall"].max) == (0, 4)
    assert dialog["Overall"] == turn["Overall"]
    assert turn["Understandable"].kind is ScaleKind.BINARY
    assert dialog["Consistent"].kind is ScaleKind.BINARY
    others = [s for q, s in {**turn, **dialog}.items() if q not in ("Overall", "Understandable", "Consistent")]
    assert others and all((s.kind, s.min, s.max) == (ScaleKind.ORDINAL, 0, 2) for s in others)
    assert turn == FED_TURN_SCALES and dialog == FED_DIALOG_SCALES


def test_not_applicable_answers_are_missing_and_kept_in_extra(fed, fed_path: Path) -> None:
    raw = json.loads(fed_path.read_text())
    expected = Counter((("turn" if "response" in item else "dialog"), q)
                       for item in raw for q, values in item["annotations"].items()
                       for v in values if isinstance(v, str))
    missing = Counter((ex.level.value, q) for ex in fed for q, r in ex.ratings.items()
                      for s in r.scores if s is None)
    assert missing == expected
    assert sum(missing.values()) == 167
    assert missing[("dialog", "Error recovery")] == 154
    kept = Counter()
    for ex, item in zip(fed, raw):
        for quality, entries in ex.extra.get("not_applicable", {}).items():
            for index, text in entries:
                assert ex.ratings[quality].scores[index] is None
                assert item["annotations"][quality][index] == text and text.startswith("N/A")
                kept[(ex.level.value, quality)] += 1
    assert kept == expected
    # Never imputed: the mean skips the missing votes.
    example = fed.get("fed-003")
    rating = example.ratings["Error recovery"]
    assert rating.scores == (None, 1, 1, None, 2)
    assert example.human("Error recovery") == pytest.approx(4 / 3)


def test_context_speakers_response_prefix_and_groups(fed, fed_path: Path) -> None:
    def tidy(line: str) -> str:  # the loader strips the space around each turn's text
        speaker, _, text = line.partition(":")
        return f"{speaker}: {text.strip()}"

    raw = json.loads(fed_path.read_text())
    for ex, item in zip(fed, raw):
        assert {t.speaker for t in ex.context} <= {"User", "System"}
        assert ex.context_text() == "\n".join(tidy(line) for line in item["context"].split("\n"))
        if ex.level is Level.TURN:
            assert tidy(item["response"]) == "System: " + ex.candidate
    first = fed.get("fed-000")
    assert first.candidate == "It's probably boring, isn't it?"
    assert first.context[-1].text == "Can't say" and first.context[-1].speaker == "User"
    groups = fed.groups()
    turn_groups = {g for g in groups if g.startswith("fed-c")}
    dialog_groups = {g for g in groups if g.startswith("fed-d")}
    assert len(turn_groups) == 374 and len(dialog_groups) == 125
    # The only two turn-level items answering one context: two Mitsuku replies.
    shared = [g for g in groups.values() if len(g) > 1]
    assert [[ex.id for ex in g] for g in shared] == [["fed-120", "fed-308"]]
    assert {ex.system for ex in shared[0]} == {"Mitsuku"}


def test_mean_turn_overall(fed) -> None:
    turn = [ex for ex in fed if ex.level is Level.TURN]
    assert sum(ex.human("Overall") for ex in turn) / len(turn) == pytest.approx(2.8245, abs=1e-4)


def test_detected_by_load_dataset(fed_path: Path) -> None:
    assert len(load_dataset(fed_path, name="fed-all")) == 500


# ---------------------------------------------------------------- broken files

def _turn_item(**annotations):
    base = {name: [1, 1, 1, 1, 1] for name in FED_TURN_SCALES}
    base.update(annotations)
    return {"context": "User: hi\nSystem: hello\nUser: how are you?", "response": "System: fine",
            "system": "Meena", "annotations": base}


def _write(tmp_path: Path, data) -> Path:
    path = tmp_path / "fed_broken.json"
    path.write_text(json.dumps(data))
    return path


def test_small_valid_file(tmp_path: Path) -> None:
    dialog = {"context": "User: hi\nSystem: hello", "system": "Human",
              "annotations": {"Coherent": [2, "N/A (n/a)", 1, 0, 2], "Overall": [4, 4, 3, 2, 1]}}
    dataset = read_fed(_write(tmp_path, [_turn_item(), dialog]))
    assert [ex.level for ex in dataset] == [Level.TURN, Level.DIALOG]
    assert dataset.examples[1].ratings["Coherent"].scores == (2, None, 1, 0, 2)
    assert dataset.examples[1].extra == {"not_applicable": {"Coherent": [[1, "N/A (n/a)"]]}}
    assert [t.speaker for t in dataset.examples[0].context] == ["User", "System", "User"]


@pytest.mark.parametrize(("item", "field", "phrase"), [
    (_turn_item(Coherent=[1, 1, 1, 1, 1]), "annotations.Coherent", "unknown turn-level FED quality"),
    (_turn_item(Relevant=3), "annotations.Relevant", "expected a list"),
    ({**_turn_item(), "context": "hi\nSystem: hello"}, "context", "does not start with 'User:'"),
    ({**_turn_item(), "response": 7}, "response", "expected a string"),
    ({k: v for k, v in _turn_item().items() if k != "system"}, "system", "missing required field"),
])
def test_broken_fed_items_name_record_and_field(tmp_path: Path, item, field, phrase) -> None:
    path = _write(tmp_path, [_turn_item(), item])
    with pytest.raises(DataError) as info:
        read_fed(path)
    message = str(info.value)
    assert str(path) in message and "record 2 (id 'fed-001')" in message
    assert f"field '{field}'" in message and phrase in message


@pytest.mark.parametrize(("item", "reason", "place"), [
    (_turn_item(Overall=[1, 5, 1, 1, 1]), "outside the scale", "field 'annotations.Overall[1]': 5"),
    (_turn_item(Understandable=[1, 1, 2, 1, 1]), "outside the scale", "field 'annotations.Understandable[2]': 2"),
    (_turn_item(Fluent=[1, 1, 1, 1, "good"]), "not a number", "field 'annotations.Fluent[4]': 'good'"),
])
def test_bad_fed_values_are_counted_exclusions(tmp_path: Path, item, reason, place) -> None:
    dataset = read_fed(_write(tmp_path, [_turn_item(), item]))
    assert dataset.meta["value_exclusions"] == {reason: 1}
    assert dataset.meta["warnings"] == [f"{reason}: 1 counted as missing — record 2 (id 'fed-001'), {place}"]


def test_not_a_fed_file(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="expected a FED file"):
        read_fed(_write(tmp_path, {"context": "User: hi"}))
