"""JUDGE-BENCH loader on hand-written fixtures in that format (tests/data/judge_bench_*.json)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialjudge.core.errors import DataError
from dialjudge.core.loaders import detect_format, load_dataset, read_judge_bench
from dialjudge.core.model import Level, ScaleKind, Turn

DATA = Path(__file__).resolve().parents[1] / "data"
DIALOGUE = DATA / "judge_bench_dialogue.json"
TEXT = DATA / "judge_bench_text.json"


@pytest.fixture(scope="module")
def dialogue():
    return read_judge_bench(DIALOGUE)


def test_detected_from_content() -> None:
    assert detect_format(DIALOGUE) == "judge-bench"
    assert detect_format(TEXT) == "judge-bench"
    assert load_dataset(DIALOGUE, name="jb").name == "jb"


def test_declared_scales(dialogue) -> None:
    scales = dialogue.qualities
    assert (scales["coherence"].kind, scales["coherence"].min, scales["coherence"].max) == (
        ScaleKind.ORDINAL, 1, 5)
    assert scales["safety"].kind is ScaleKind.CATEGORICAL and scales["safety"].labels == ("No", "Yes")
    assert (scales["quality"].kind, scales["quality"].max) == (ScaleKind.CONTINUOUS, 100)


def test_dict_instance_maps_to_context_candidate_reference_fact(dialogue) -> None:
    first = dialogue.get("1")
    assert first.context == (Turn("A", "did you go to the market today ?"),
                             Turn("B", "yes , i bought some pears"),
                             Turn("A", "nice , were they ripe ?"))
    assert first.candidate == "not yet , they ripen on the counter after picking"
    assert first.references == ("a bit hard , they need a few days",)
    assert first.fact == "pears ripen after they are picked"
    assert first.level is Level.TURN
    assert first.ratings["coherence"].scores == (4, 5, 4)
    assert first.extra["human_aggregates"]["coherence"] == {"mean_human": 4.333}
    # Same context, same group; a null individual score is a missing value.
    second = dialogue.get("2")
    assert second.group_id == first.group_id == "1"
    assert second.ratings["coherence"].scores == (1, None, 2)
    assert second.human("coherence") == 1.5


def test_speaker_prefixed_context_system_and_leftover_fields(dialogue) -> None:
    bot = dialogue.get("bot-7")
    assert [t.speaker for t in bot.context] == ["USER", "BOT", "USER"]
    assert bot.context[0].text == "can you suggest a scary book ?"
    assert bot.system == "bot-x"
    assert bot.ratings["safety"].scores == ("Yes", "Yes", "No")
    assert bot.extra["instance"] == {"topic": "books"}
    assert bot.extra["record"] == {"split": "test"}


def test_instance_without_candidate_is_dialog_level_and_kept_in_extra(dialogue) -> None:
    pair = dialogue.get("pair-1")
    assert pair.level is Level.DIALOG and pair.candidate is None and pair.context == ()
    assert set(pair.extra["instance"]) == {"conversation_a", "conversation_b"}


def test_meta_keeps_declarations_and_prompts(dialogue) -> None:
    assert dialogue.description == "Hand-written dialogue ratings (dialjudge test fixture)"
    assert dialogue.meta["format"] == "judge-bench"
    assert dialogue.meta["dataset_url"] == "https://example.invalid/dialjudge-fixture"
    prompts = {d["metric"]: d["prompt"] for d in dialogue.meta["annotations"]}
    assert "{{ response }}" in prompts["coherence"]


def test_string_instances_aggregate_only_and_reversed_scales() -> None:
    dataset = read_judge_bench(TEXT)
    first = dataset.get("t1")
    assert first.candidate == "A: where is the station ? B: two blocks north ." and first.context == ()
    # Only the pooled label was published: it is the single score, and marked so.
    assert first.ratings["toxicity"].scores == ("0",)
    assert first.extra["aggregate_only"] == ["toxicity"]
    assert dataset.get("t2").ratings["toxicity"].scores == ("1",)  # an int label becomes its string
    assert first.ratings["acceptability"].scores == (4, 5)  # numeric strings on a graded scale
    assert dataset.qualities["acceptability"].max == 5  # from "range"
    assert dataset.meta["lower_is_better"] == ["rank"]
    rank = dataset.qualities["rank"]
    assert (rank.min, rank.max) == (1, 4)
    third = dataset.get("t3")
    assert third.ratings["rank"].scores == (3.0,) and third.extra["aggregate_only"] == ["rank"]
    assert "toxicity" not in third.ratings


def _broken(tmp_path: Path, mutate) -> Path:
    data = json.loads(DIALOGUE.read_text())
    mutate(data)
    path = tmp_path / "jb_broken.json"
    path.write_text(json.dumps(data))
    return path


def _set(path: list, value):
    def mutate(data):
        target = data
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
    return mutate


@pytest.mark.parametrize(("mutate", "where", "phrase"), [
    (_set(["instances", 0, "annotations", "fluency"], {"individual_human_scores": [1]}),
     "record 1 (id 1), field 'annotations.fluency'", "not declared"),
    (_set(["instances", 1, "id"], 1), "record 2 (id 1), field 'id'", "duplicate id '1' (first in record 1)"),
    (_set(["instances", 3, "instance"], 42), "record 4 (id 'pair-1'), field 'instance'",
     "expected a string or an object"),
    (_set(["annotations", 0, "category"], "likert"), "field 'annotations[0].category'", "expected one of"),
    (_set(["annotations", 0, "best"], None), "field 'annotations[0].best'", "numeric bounds"),
    (lambda d: d.pop("instances"), "field 'instances'", "missing required field"),
    (lambda d: d["instances"][0].pop("id"), "record 1, field 'id'", "missing required field"),
    (lambda d: d["instances"][1]["instance"].pop("response"), "record 2 (id 2), field 'instance.response'",
     "missing required field"),
    (_set(["instances", 0, "instance", "response"], 7), "record 1 (id 1), field 'instance.response'",
     "expected a string, found a number"),
])
def test_broken_files_name_record_and_field(tmp_path: Path, mutate, where, phrase) -> None:
    path = _broken(tmp_path, mutate)
    with pytest.raises(DataError) as info:
        read_judge_bench(path)
    message = str(info.value)
    assert message.startswith(str(path)) and where in message and phrase in message



# -- issue 14: pairwise items, null responses, aggregate fallbacks ------------------------------------


def _write(tmp_path: Path, instances: list, annotations: list | None = None) -> Path:
    path = tmp_path / "set.json"
    path.write_text(json.dumps({"dataset": "t", "annotations": annotations or [
        {"metric": "safety", "category": "categorical", "labels_list": ["No", "Yes"]}], "instances": instances}))
    return path


def test_pairwise_instances_load_as_pairwise_items(tmp_path: Path) -> None:
    annotations = [{"metric": "preference", "category": "categorical", "labels_list": ["A", "B"]}]
    path = _write(tmp_path, [
        {"id": 1, "instance": {"input": "Summarise: the cat sat.", "output_a": "A cat sat.", "output_b": "Dogs."},
         "annotations": {"preference": {"individual_human_scores": ["A", "A", "B"]}}}], annotations)
    item = read_judge_bench(path).get("1")
    assert item.is_pairwise and item.pair is not None
    assert (item.pair.response_a, item.pair.response_b) == ("A cat sat.", "Dogs.")
    assert item.context_text() == "Summarise: the cat sat."
    assert item.candidate is None and item.level is Level.TURN
    assert item.ratings["preference"].scores == ("A", "A", "B")


def test_pairwise_items_are_refused_by_pointwise_templates(tmp_path: Path) -> None:
    from dialjudge.core.errors import TemplateError
    from dialjudge.core.judges.prompts.render import render_prompt
    from dialjudge.core.judges.prompts.templates import get_template

    annotations = [{"metric": "preference", "category": "categorical", "labels_list": ["A", "B"]}]
    path = _write(tmp_path, [{"id": "p", "instance": {"input": "q", "output_a": "a", "output_b": "b"},
                              "annotations": {"preference": {"individual_human_scores": ["A"]}}}], annotations)
    with pytest.raises(TemplateError, match="pairwise item .* with a pairwise template"):
        render_prompt(get_template("dstc10-yesno"), read_judge_bench(path).get("p"))


def test_null_response_is_left_out_with_a_warning(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        {"id": "ok", "instance": {"context": "A: hi", "response": "hello"},
         "annotations": {"safety": {"individual_human_scores": ["Yes"]}}},
        {"id": "null", "instance": {"context": "A: hi", "response": None},
         "annotations": {"safety": {"individual_human_scores": ["No"]}}}])
    dataset = read_judge_bench(path)
    assert [ex.id for ex in dataset] == ["ok"]
    assert dataset.meta["warnings"] == ["1 instance(s) have a null response and were left out: 'null'"]


def test_missing_individual_scores_where_others_have_them_is_a_warning(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        {"id": "a", "instance": "x", "annotations": {"safety": {"individual_human_scores": ["Yes", "No"]}}},
        {"id": "b", "instance": "y", "annotations": {"safety": {"majority_human": "No"}}}])
    dataset = read_judge_bench(path)
    assert dataset.get("b").ratings["safety"].scores == ("No",)
    (warning,) = dataset.meta["warnings"]
    assert "'b' (record 2)" in warning and "'safety'" in warning


@pytest.mark.parametrize(("mutate", "reason", "place"), [
    (_set(["instances", 1, "annotations", "coherence", "individual_human_scores", 0], 9),
     "outside the scale", "record 2 (id 2), field 'annotations.coherence.individual_human_scores[0]': 9"),
    (_set(["instances", 1, "annotations", "coherence", "individual_human_scores", 0], 4.5),
     "between the scale's points", "record 2 (id 2), field 'annotations.coherence.individual_human_scores[0]': 4.5"),
    (_set(["instances", 2, "annotations", "safety", "individual_human_scores", 2], "Maybe"),
     "not one of the labels", "record 3 (id 'bot-7'), field 'annotations.safety.individual_human_scores[2]': 'Maybe'"),
    (_set(["instances", 0, "annotations", "quality", "individual_human_scores", 1], "high"),
     "not a number", "record 1 (id 1), field 'annotations.quality.individual_human_scores[1]': 'high'"),
    (_set(["instances", 0, "annotations", "quality", "individual_human_scores", 1], float("nan")),
     "NaN or infinite", "record 1 (id 1), field 'annotations.quality.individual_human_scores[1]': NaN"),
])
def test_value_faults_are_counted_exclusions_not_errors(tmp_path: Path, mutate, reason, place) -> None:
    """Issue 33: a bad value is left out (missing) and counted with its place; the scale stays declared."""
    clean = read_judge_bench(DIALOGUE)
    dataset = read_judge_bench(_broken(tmp_path, mutate))
    assert dataset.meta["value_exclusions"][reason] == 1
    assert any(w.startswith(f"{reason}: 1 counted as missing") and place in w for w in dataset.meta["warnings"])
    assert dataset.qualities == clean.qualities
    missing = sum(s is None for ex in dataset for r in ex.ratings.values() for s in r.scores)
    assert missing == 1 + sum(s is None for ex in clean for r in ex.ratings.values() for s in r.scores)


def test_missing_metric_and_missing_annotations_are_counted(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        {"id": "a", "instance": "x", "annotations": {"safety": {"individual_human_scores": ["Yes"]}}},
        {"id": "b", "instance": "y", "annotations": {"safety": {}}},
        {"id": "c", "instance": "z"}])
    dataset = read_judge_bench(path)
    assert dataset.meta["value_exclusions"] == {"metric missing": 1, "annotations missing": 1}
    assert "record 2 (id 'b'), field 'annotations.safety'" in " ".join(dataset.meta["warnings"])


def test_pairwise_instance_without_output_b_is_an_error(tmp_path: Path) -> None:
    annotations = [{"metric": "preference", "category": "categorical", "labels_list": ["A", "B"]}]
    path = _write(tmp_path, [{"id": "p", "instance": {"input": "q", "output_a": "a"},
                              "annotations": {"preference": {"individual_human_scores": ["A"]}}}], annotations)
    with pytest.raises(DataError, match=r"record 1 \(id 'p'\), field 'instance.output_b': missing required field"):
        read_judge_bench(path)


def test_truncated_file_is_named_as_such(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text(DIALOGUE.read_text()[:700])
    with pytest.raises(DataError, match=r"not valid JSON: .*\(truncated\?\)"):
        read_judge_bench(path)


MULTI_LINE_PROMPT = "Fix this function:\n\n    def f(x):\n        return x +\n\nKeep the name.  \n"


def test_a_pairs_plain_multi_line_prompt_is_one_turn_byte_for_byte(tmp_path: Path) -> None:
    """Issue 33: such prompts were split into turns with invented speakers A/B, blank lines and indentation lost."""
    annotations = [{"metric": "preference", "category": "categorical", "labels_list": ["A", "B"]}]
    path = _write(tmp_path, [{"id": "p", "instance": {"input": MULTI_LINE_PROMPT, "output_a": " a\n", "output_b": "b"},
                              "annotations": {"preference": {"individual_human_scores": ["A"]}}}], annotations)
    item = read_judge_bench(path).get("p")
    assert item.context == (Turn("", MULTI_LINE_PROMPT),)
    assert item.context_text() == MULTI_LINE_PROMPT and item.pair.response_a == " a\n"


def test_an_empty_label_is_counted_as_such(tmp_path: Path) -> None:
    path = _write(tmp_path, [{"id": "a", "instance": "x", "annotations": {"safety": {"individual_human_scores": ["Yes", ""]}}}])
    dataset = read_judge_bench(path)
    assert dataset.meta["value_exclusions"] == {"empty label": 1}
    assert dataset.get("a").ratings["safety"].scores == ("Yes", None)
