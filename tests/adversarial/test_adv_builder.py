"""make_adversarial_set on KdConv, on a USR-style dataset and on small hand-made data."""

from __future__ import annotations

import json

import pytest

from dialjudge.core.adversarial.builder import CONTRADICTS, make_adversarial_set
from dialjudge.core.errors import ConfigError, DataError
from dialjudge.core.loaders.kdconv import load_kdconv
from dialjudge.core.model import Dataset, Example, Rating, Scale, ScaleKind, Turn
from shared_data import require_file


def _usr_dataset(shared_data) -> Dataset:
    """USR Topical-Chat as a loader would give it: six candidates per context, the
    "Original Ground Truth" one marked as the reference."""
    path = require_file(shared_data, "usr/usr_topical_chat.json")
    examples = []
    for i, item in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        turns = tuple(Turn("AB"[j % 2], t.strip()) for j, t in enumerate(item["context"].strip().split("\n")))
        truth = next(r["response"].strip() for r in item["responses"] if r["model"] == "Original Ground Truth")
        for k, response in enumerate(item["responses"]):
            examples.append(Example(
                id=f"tc-{i}-{k}", group_id=f"tc-{i}", context=turns, candidate=response["response"].strip(),
                references=(truth,), fact=item["fact"], system=response["model"],
                is_reference=response["model"] == "Original Ground Truth",
                ratings={"Overall": Rating(tuple(response["Overall"]), Scale(ScaleKind.ORDINAL, 1, 5))},
            ))
    return Dataset("usr-topical", examples)


def _check_set(adv: Dataset, per_item: int) -> None:
    """The invariants every adversarial set keeps."""
    for group in adv.groups().values():
        originals = [ex for ex in group if ex.extra["role"] == "original"]
        assert len(originals) == 1
        original = originals[0]
        assert original.human(CONTRADICTS) == 0 and original.adversarial is None
        adversarial = [ex for ex in group if ex.is_adversarial]
        assert 1 <= len(adversarial) <= per_item
        texts = [ex.candidate for ex in adversarial]
        assert len(set(texts)) == len(texts) and original.candidate not in texts
        for ex in adversarial:
            p = ex.adversarial
            assert p is not None and p.source_id == original.id
            assert ex.tags == {"adversarial", "closed"}
            assert ex.human(CONTRADICTS) == 1
            assert ex.ratings[CONTRADICTS].annotators == ("generator",)
            assert ex.ratings[CONTRADICTS].scale.kind is ScaleKind.BINARY
            assert p.original_span in original.candidate and p.replacement in ex.candidate
            assert ex.references == original.references and ex.context == original.context
        kinds = [ex.adversarial.kind for ex in adversarial]
        assert len(set(zip(kinds, texts))) == len(texts)


@pytest.fixture(scope="module")
def film(shared_data) -> Dataset:
    return load_kdconv(require_file(shared_data, "kdconv/film/test.json"))


def test_kdconv_film_set(film: Dataset) -> None:
    source = film
    adv, report = make_adversarial_set(source, n=40, per_item=3, seed=1)
    _check_set(adv, 3)
    originals = [ex for ex in adv if ex.extra["role"] == "original"]
    assert report.items_used == len(originals) == 40
    assert all(ex.is_reference and ex.references == (ex.candidate,) for ex in originals)
    assert all(ex.fact and ex.language == "zh" and "attrs" in ex.extra for ex in adv)
    adversarial = [ex for ex in adv if ex.is_adversarial]
    assert report.total_candidates == len(adversarial)
    for kind, count in report.candidates.items():
        assert count == sum(ex.adversarial.kind == kind for ex in adversarial)
    assert report.candidates["knowledge"] > 0 and report.candidates["negation"] == 0
    assert report.kind_skips["negation"]["negation flips support English only"] == \
        report.items_considered
    assert report.items_available + sum(report.skipped.values()) == report.items_considered
    assert report.short_items == sum(
        1 for g in adv.groups().values() if sum(ex.is_adversarial for ex in g) < 3)
    summary = report.summary()
    assert "40 used" in summary and "knowledge" in summary


def test_same_seed_same_set_other_seed_other_items(film: Dataset) -> None:
    source = film.subset(film.examples[:400])
    first, _ = make_adversarial_set(source, n=15, seed=4)
    again, _ = make_adversarial_set(source, n=15, seed=4)
    other, _ = make_adversarial_set(source, n=15, seed=5)
    assert [(ex.id, ex.candidate) for ex in first] == [(ex.id, ex.candidate) for ex in again]
    assert {ex.group_id for ex in first} != {ex.group_id for ex in other}


def test_usr_style_dataset(shared_data) -> None:
    source = _usr_dataset(shared_data)
    adv, report = make_adversarial_set(source, kinds=("negation", "number"), n=100, seed=1,
                                       include_other_candidates=True)
    _check_set(adv, 3)
    assert report.items_considered == 60
    assert report.items_used == report.items_available < 60  # n exceeds what qualifies
    assert report.skipped["no requested perturbation applies"] == 60 - report.items_available
    assert set(report.candidates) <= {"negation", "number"}
    originals = [ex for ex in adv if ex.extra["role"] == "original"]
    truths = {ex.candidate for ex in source if ex.is_reference}
    assert all(ex.candidate in truths and ex.is_reference for ex in originals)
    genuine = [ex for ex in adv if ex.extra["role"] == "genuine"]
    assert len(genuine) == 5 * report.items_used
    assert all("Overall" in ex.ratings and CONTRADICTS not in ex.ratings for ex in genuine)
    assert all(not ex.is_adversarial and not ex.is_reference for ex in genuine)


def _tiny(reply: str, *, references: tuple[str, ...] | None = None) -> Example:
    return Example(id="q1", group_id="q1", context=(Turn("A", "how many people are there?"),),
                   candidate=None if references else reply, references=references or (reply,),
                   fact="a man is standing around drinking from a cup",
                   is_reference=references is None)


def test_held_out_reference_makes_the_original_a_scored_candidate() -> None:
    source = Dataset("avsd", [_tiny("", references=("there is only one person", "one man is in the room"))])
    adv, report = make_adversarial_set(source, kinds=("negation", "number"), per_item=4)
    original = adv.get("q1/original")
    assert not original.is_reference and original.references == ("one man is in the room",)
    assert report.held_out_reference_items == 1
    texts = {ex.candidate for ex in adv if ex.is_adversarial}
    assert "there is not only one person" in texts
    assert any(t.startswith("there are only ") and t.endswith(" people") for t in texts)


def test_include_fact_false_drops_the_knowledge() -> None:
    adv, _ = make_adversarial_set(Dataset("d", [_tiny("there is only one person")]),
                                  kinds=("negation",), include_fact=False)
    assert all(ex.fact is None for ex in adv)


def test_bad_arguments_and_unusable_data() -> None:
    source = Dataset("d", [_tiny("there is only one person")])
    with pytest.raises(ConfigError, match="unknown adversarial kind"):
        make_adversarial_set(source, kinds=("paraphrase",))
    with pytest.raises(ConfigError):
        make_adversarial_set(source, per_item=0)
    with pytest.raises(ConfigError):
        make_adversarial_set(source, n=0)
    no_reference = Dataset("d", [Example(id="x", group_id="x", context=(), candidate="it is 5")])
    with pytest.raises(DataError, match="no reference"):
        make_adversarial_set(no_reference)
    questions_only = Dataset("d", [_tiny("do you like it ?")])
    with pytest.raises(DataError, match="question"):
        make_adversarial_set(questions_only, kinds=("negation",))
