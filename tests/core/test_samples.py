"""The bundled illustrative datasets: well-formed native JSONL with the properties they exist to show."""

from __future__ import annotations

import importlib
import json
import re
import statistics
from collections import Counter
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest

DIALOGUES = "sample_dialogues.jsonl"
INCAR = "sample_incar_kpi.jsonl"
SAMPLE_QUALITIES = {"coherence", "relevance", "consistency", "fluency", "overall"}
KPIS = ("follow-up", "implicit-understanding", "harmful-input")
REQUIRED_FIELDS = {
    "id": str, "group_id": str, "level": str, "context": list, "candidate": str, "references": list,
    "language": str, "tags": list, "is_reference": bool, "ratings": dict,
}
# Real manufacturers must never appear: the in-car data is about a fictional brand.
REAL_CAR_BRANDS = ("BMW", "Mercedes", "Audi", "Volkswagen", "Tesla", "Toyota", "Ford", "Volvo", "Porsche", "Honda")


def bundled(name: str) -> Path:
    return Path(str(files("dialjudge.datasets") / name))


def load(name: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    lines = bundled(name).read_text(encoding="utf-8").splitlines()
    return json.loads(lines[0]), [json.loads(line) for line in lines[1:] if line.strip()]


def words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9']+", text.lower()))


def overlap_with_reference(record: dict[str, Any]) -> float:
    """Share of the candidate's word types that also occur in the reference."""
    candidate = words(record["candidate"])
    return len(candidate & words(record["references"][0])) / len(candidate)


def mean_score(records: list[dict[str, Any]], quality: str) -> float:
    return statistics.fmean(s for r in records for s in r["ratings"][quality]["scores"])


def majority(scores: list[int]) -> int:
    return int(sum(scores) * 2 > len(scores))


@pytest.fixture(scope="module")
def dialogues() -> list[dict[str, Any]]:
    return load(DIALOGUES)[1]


@pytest.fixture(scope="module")
def incar() -> list[dict[str, Any]]:
    return load(INCAR)[1]


# --- both files ---------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "dataset_name"), [(DIALOGUES, "sample"), (INCAR, "incar-kpi")])
def test_header_names_the_dataset_and_marks_it_illustrative(name: str, dataset_name: str) -> None:
    header, _ = load(name)
    assert header["dialjudge_dataset"] == 1
    assert header["name"] == dataset_name
    assert header["meta"]["illustrative"] is True
    assert "illustrative" in header["description"].lower()


@pytest.mark.parametrize("name", [DIALOGUES, INCAR])
def test_every_record_has_the_native_fields(name: str) -> None:
    _, records = load(name)
    for record in records:
        for field, kind in REQUIRED_FIELDS.items():
            assert isinstance(record.get(field), kind), (record.get("id"), field)
        assert record["level"] == "turn" and record["language"] == "en"
        assert record["context"], record["id"]
        for turn in record["context"]:
            assert set(turn) == {"speaker", "text"} and turn["speaker"] and turn["text"], record["id"]
        assert record["candidate"].strip(), record["id"]


@pytest.mark.parametrize("name", [DIALOGUES, INCAR])
def test_ids_are_unique(name: str) -> None:
    _, records = load(name)
    counts = Counter(r["id"] for r in records)
    assert [i for i, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("name", [DIALOGUES, INCAR])
def test_every_score_is_an_integer_within_its_scale(name: str) -> None:
    _, records = load(name)
    for record in records:
        for quality, rating in record["ratings"].items():
            scale = rating["scale"]
            assert scale["kind"] in ("ordinal", "binary"), (record["id"], quality)
            assert len(rating["scores"]) == len(rating["annotators"]), (record["id"], quality)
            for score in rating["scores"]:
                assert isinstance(score, int) and not isinstance(score, bool), (record["id"], quality)
                assert scale["min"] <= score <= scale["max"], (record["id"], quality, score)


# --- sample_dialogues.jsonl ---------------------------------------------------------------


def test_sample_has_twelve_contexts_of_five_candidates_half_closed(dialogues: list[dict[str, Any]]) -> None:
    groups = Counter(r["group_id"] for r in dialogues)
    assert len(dialogues) == 60
    assert len(groups) == 12 and set(groups.values()) == {5}
    tags = Counter(t for r in dialogues for t in r["tags"])
    assert tags["closed"] == 30 and tags["open"] == 30
    assert tags["adversarial"] == 12
    assert all(("open" in r["tags"]) != ("closed" in r["tags"]) for r in dialogues)
    assert {r["system"] for r in dialogues} == {
        "reference", "retrieval-bot", "seq2seq", "llm-chat", "human-rewrite", "adversarial"}


def test_each_context_rates_its_reference_and_every_candidate_cites_it(dialogues: list[dict[str, Any]]) -> None:
    by_group: dict[str, list[dict[str, Any]]] = {}
    for record in dialogues:
        by_group.setdefault(record["group_id"], []).append(record)
    for group, records in by_group.items():
        references = [r for r in records if r["is_reference"]]
        assert len(references) == 1, group
        reference = references[0]
        assert reference["system"] == "reference"
        assert all(r["references"] == [reference["candidate"]] for r in records), group
        assert len({json.dumps(r["context"]) for r in records}) == 1, group
        assert len({r["fact"] for r in records}) == 1, group


def test_closed_contexts_have_a_fact_and_only_social_ones_lack_it(dialogues: list[dict[str, Any]]) -> None:
    for record in dialogues:
        if "closed" in record["tags"]:
            assert record["fact"], record["id"]
        assert (record["fact"] is None) == ("social" in record["tags"]), record["id"]
    assert sum(r["fact"] is None for r in dialogues) == 10


def test_adversarial_candidates_perturb_their_reference_exactly(dialogues: list[dict[str, Any]]) -> None:
    by_id = {r["id"]: r for r in dialogues}
    adversarial = [r for r in dialogues if r["adversarial"] is not None]
    assert len(adversarial) == 12
    for record in adversarial:
        perturbation = record["adversarial"]
        source = by_id[perturbation["source_id"]]
        span, replacement = perturbation["original_span"], perturbation["replacement"]
        assert source["is_reference"] and source["group_id"] == record["group_id"], record["id"]
        assert span in source["candidate"] and replacement in record["candidate"], record["id"]
        assert record["candidate"] == source["candidate"].replace(span, replacement, 1), record["id"]
        assert {"adversarial", "closed"} <= set(record["tags"]) and record["system"] == "adversarial"
    kinds = Counter(r["adversarial"]["kind"] for r in adversarial)
    assert set(kinds) == {"date", "place", "negation", "number"}
    assert all(r["adversarial"] is None for r in dialogues if "adversarial" not in r["tags"])


def test_adversarial_candidates_read_well_but_contradict_the_fact(dialogues: list[dict[str, Any]]) -> None:
    adversarial = [r for r in dialogues if r["adversarial"] is not None]
    assert mean_score(adversarial, "fluency") >= 4.5
    assert mean_score(adversarial, "consistency") <= 1.6
    assert mean_score(adversarial, "overall") <= 1.8
    references = [r for r in dialogues if r["is_reference"]]
    assert mean_score(references, "consistency") >= 4.5


def test_paraphrases_share_few_words_with_the_reference_and_traps_share_many(
    dialogues: list[dict[str, Any]],
) -> None:
    """The candidates that separate judges of meaning from word-overlap metrics."""
    paraphrases = [r for r in dialogues if "paraphrase" in r["tags"]]
    traps = [r for r in dialogues if "overlap-trap" in r["tags"]]
    assert len(paraphrases) >= 10 and len(traps) >= 4
    assert max(map(overlap_with_reference, paraphrases)) < min(map(overlap_with_reference, traps))
    assert mean_score(paraphrases, "overall") >= 4.3
    assert mean_score(traps, "overall") <= 2.0


def test_sample_ratings_disagree_realistically(dialogues: list[dict[str, Any]]) -> None:
    ratings = [rating for r in dialogues for rating in r["ratings"].values()]
    assert {q for r in dialogues for q in r["ratings"]} == SAMPLE_QUALITIES
    assert all(rating["annotators"] == ["a1", "a2", "a3"] for rating in ratings)
    assert all(rating["scale"] == {"kind": "ordinal", "min": 1, "max": 5} for rating in ratings)
    split = sum(len(set(rating["scores"])) > 1 for rating in ratings)
    assert 0.25 * len(ratings) <= split <= 0.75 * len(ratings)
    per_annotator = [statistics.fmean(rating["scores"][i] for rating in ratings) for i in range(3)]
    assert per_annotator[2] < min(per_annotator[:2]), "a3 is meant to be the harshest rater"


# --- sample_incar_kpi.jsonl ---------------------------------------------------------------


def test_incar_has_fifteen_items_per_kpi_in_native_shape(incar: list[dict[str, Any]]) -> None:
    assert len(incar) == 45
    assert Counter(r["kpi"] for r in incar) == {kpi: 15 for kpi in KPIS}
    for record in incar:
        kpi = record["kpi"]
        assert record["tags"] == [f"kpi:{kpi}"], record["id"]
        assert set(record["ratings"]) == {kpi, f"{kpi} relevancy"}, record["id"]
        assert record["references"] == [] and record["fact"] is None, record["id"]
        assert record["system"] in ("assistant-v1", "assistant-v2"), record["id"]
        assert {t["speaker"] for t in record["context"]} <= {"User", "Assistant"}, record["id"]
        assert record["context"][-1]["speaker"] == "User", record["id"]
        assert record["user_utterance"] == record["context"][-1]["text"], record["id"]
        for rating in record["ratings"].values():
            assert rating["annotators"] == ["h1", "h2", "h3", "h4", "h5"]
            assert rating["scale"] == {"kind": "binary", "min": 0, "max": 1}


def test_follow_up_items_have_a_previous_turn_to_follow(incar: list[dict[str, Any]]) -> None:
    assert all(len(r["context"]) >= 3 for r in incar if r["kpi"] == "follow-up")


@pytest.mark.parametrize("kpi", KPIS)
def test_each_kpi_is_balanced_by_majority_vote(incar: list[dict[str, Any]], kpi: str) -> None:
    votes = [majority(r["ratings"][kpi]["scores"]) for r in incar if r["kpi"] == kpi]
    assert 0.35 <= sum(votes) / len(votes) <= 0.65


def test_incar_annotators_mostly_agree_with_a_few_close_votes(incar: list[dict[str, Any]]) -> None:
    kpi_votes = [r["ratings"][r["kpi"]]["scores"] for r in incar]
    unanimous = sum(len(set(v)) == 1 for v in kpi_votes)
    close = sum(sum(v) in (2, 3) for v in kpi_votes)
    assert unanimous >= 0.6 * len(kpi_votes)
    assert 3 <= close <= 0.2 * len(kpi_votes)


@pytest.mark.parametrize("kpi", KPIS)
def test_relevancy_is_mostly_yes_with_an_irrelevant_item(incar: list[dict[str, Any]], kpi: str) -> None:
    relevant = [majority(r["ratings"][f"{kpi} relevancy"]["scores"]) for r in incar if r["kpi"] == kpi]
    assert 1 <= relevant.count(0) <= 3


def test_incar_names_no_real_manufacturer() -> None:
    text = bundled(INCAR).read_text(encoding="utf-8")
    assert "Aurora Motors" in text
    assert [b for b in REAL_CAR_BRANDS if re.search(rf"\b{b}\b", text)] == []


# --- through the native reader, once it exists ----------------------------------------------


def native_reader():
    try:
        module = importlib.import_module("dialjudge.core.loaders.native")
    except ModuleNotFoundError as missing:
        if missing.name != "dialjudge.core.loaders.native":
            raise
        pytest.skip("dialjudge.core.loaders.native is not written yet; the plain-json tests cover the files")
    return module.read_native


@pytest.mark.parametrize(("name", "count"), [(DIALOGUES, 60), (INCAR, 45)])
def test_native_reader_loads_the_bundled_files(name: str, count: int) -> None:
    from dialjudge.core.model import ScaleKind

    dataset = native_reader()(bundled(name))
    header, records = load(name)
    assert len(dataset) == count
    assert dataset.name == header["name"]
    assert dataset.meta.get("illustrative") is True
    for record in records:
        example = dataset.get(record["id"])
        assert example.candidate == record["candidate"]
        assert set(example.ratings) == set(record["ratings"])
        for quality, rating in example.ratings.items():
            assert list(rating.scores) == record["ratings"][quality]["scores"]
            assert rating.scale.kind is ScaleKind(record["ratings"][quality]["scale"]["kind"])
        if record["adversarial"] is not None:
            assert example.adversarial is not None
            assert dataset.get(example.adversarial.source_id).is_reference
