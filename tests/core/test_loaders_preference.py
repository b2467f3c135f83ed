"""Pre-paired preference files: JUDGE-BENCH pairs, MT-Bench human judgments, generic CSV/JSONL pairs.
Every vote is kept, votes on swapped replies are turned round, and bad input names file, line and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialjudge.core.errors import DataError
from dialjudge.core.judges.post_run.preference_report import category_of, preference_quality, votes_of
from dialjudge.core.loaders import detect_format, load_dataset
from dialjudge.core.loaders.preference import PREFERENCE, winner_label

DATA = Path(__file__).parent.parent / "data"


def votes(path: Path) -> dict[str, list[str]]:
    ds = load_dataset(path)
    quality = preference_quality(ds)
    return {ex.id: votes_of(ex, quality) for ex in ds}


def test_a_judge_bench_pairwise_file_keeps_every_vote_as_a_b_or_tie() -> None:
    path = DATA / "judge_bench_pairs.json"
    assert detect_format(path) == "judge-bench"
    assert votes(path) == {"p1": ["A", "A", "A"], "p2": ["B", "B", "tie"], "p3": ["tie", "tie", "A"],
                           "p4": ["A", "B"], "p5": ["B"], "p6": ["A", "B", "B"]}
    ds = load_dataset(path)
    assert [category_of(ex) for ex in ds] == ["knowledge", "language", "knowledge", "language", "math", "language"]
    p1 = ds.get("p1")
    assert p1.pair is not None and p1.pair.response_a == "The capital of France is Paris."
    assert p1.context[0].text == "What is the capital of France?"


def test_mt_bench_votes_on_one_pair_are_merged_and_swapped_votes_turned_round() -> None:
    path = DATA / "mt_bench_human.jsonl"
    assert detect_format(path) == "mt-bench"
    ds = load_dataset(path)
    assert ds.meta["format"] == "mt-bench"
    by_id = {ex.id: ex for ex in ds}
    hawaii = by_id["q81-t1-alpaca-13b-vs-gpt-3.5-turbo"]
    # expert_1 saw gpt-3.5-turbo as model_a and chose it: that is reply B of the pair as first seen.
    assert hawaii.ratings[PREFERENCE].scores == ("B", "B", "tie")
    assert hawaii.ratings[PREFERENCE].annotators == ("expert_0", "expert_1", "author_2")
    assert hawaii.extra["votes_as_written"] == ["model_b", "model_a", "tie (bothbad)"]
    assert hawaii.pair is not None and hawaii.pair.response_a == "Go to Hawaii."
    # Two pairs of question 81 share a group, so intervals resample the question as a whole.
    assert by_id["q81-t1-alpaca-13b-vs-vicuna-13b"].group_id == hawaii.group_id == "q81"
    second_turn = by_id["q82-t2-gpt-4-vs-llama-13b"]
    assert [t.text for t in second_turn.context] == ["Name a prime number below ten.", "Now name one above ten."]
    assert second_turn.pair is not None
    assert second_turn.pair.response_a == "First answer: Seven.\n\nSecond answer: Eleven."
    assert len(ds) == 4


def test_a_generic_csv_is_recognised_by_its_column_names() -> None:
    path = DATA / "pairs_generic.csv"
    assert detect_format(path) == "pairs"
    ds = load_dataset(path)
    assert [ex.ratings[PREFERENCE].scores for ex in ds] == [("A", "A", "A"), ("B", "tie"), ("A",)]
    assert [ex.ratings[PREFERENCE].annotators for ex in ds] == [("ann", "bob", "cat"), ("ann", "bob"), ("ann",)]
    assert [category_of(ex) for ex in ds] == ["everyday", "films", "maths"]
    # The identical replies on line 7 are reported and counted, not judged.
    assert ds.meta["excluded"] == {"identical replies": 1}
    assert "line 7" in ds.meta["warnings"][0]


def test_jsonl_pairs_and_a_mapping_beside_the_file(tmp_path: Path) -> None:
    rows = [{"dialogue": "Hi!", "left": "Hello there.", "right": "Go away.", "verdict": "first", "who": "x"},
            {"dialogue": "Hi!", "left": "Hello there.", "right": "Go away.", "verdict": "draw", "who": "y"}]
    path = tmp_path / "mine.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "mine.mapping.toml").write_text(
        '[pairs]\nprompt = "dialogue"\nresponse_a = "left"\nresponse_b = "right"\nwinner = "verdict"\n'
        'annotator = "who"\n', encoding="utf-8")
    ds = load_dataset(path)
    assert detect_format(path) == "pairs"
    [pair] = ds.examples
    assert pair.ratings[PREFERENCE].scores == ("A", "tie")
    assert pair.ratings[PREFERENCE].annotators == ("x", "y")


@pytest.mark.parametrize("written, label", [
    ("A", "A"), ("model_a", "A"), (" Model_A ", "A"), ("first", "A"), (1, "A"), ("b", "B"), ("model_b", "B"),
    ("2", "B"), ("tie", "tie"), ("tie (bothbad)", "tie"), ("Tie", "tie"), ("both_bad", "tie"), ("AB", None),
    ("", None), (None, None), (True, None), ("0", None), ("better", None)])
def test_winner_spellings(written: object, label: str | None) -> None:
    assert winner_label(written) == label


def test_a_winner_may_name_one_of_the_two_models() -> None:
    assert winner_label("gpt-4", model_a="gpt-4", model_b="claude") == "A"
    assert winner_label("claude", model_a="gpt-4", model_b="claude") == "B"


def test_a_winner_outside_the_spellings_names_the_file_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.csv"
    path.write_text("prompt,response_a,response_b,winner\nq,x,y,A\nq,x,y,maybe\n", encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_dataset(path)
    assert (caught.value.path, caught.value.line, caught.value.field) == (str(path), 3, "winner")
    assert "'maybe' is not an allowed spelling" in str(caught.value)


def test_mt_bench_mistakes_name_the_line_and_field(tmp_path: Path) -> None:
    good = json.loads((DATA / "mt_bench_human.jsonl").read_text(encoding="utf-8").splitlines()[0])
    for change, field in ((("winner", "model_c"), "winner"), (("turn", 3), "turn"),
                          (("conversation_b", "text"), "conversation_b")):
        record = dict(good, **{change[0]: change[1]})
        path = tmp_path / "mt.jsonl"
        path.write_text(json.dumps(good) + "\n" + json.dumps(record) + "\n", encoding="utf-8")
        with pytest.raises(DataError) as caught:
            load_dataset(path)
        assert (caught.value.line, caught.value.field) == (2, field), str(caught.value)
    missing = {k: v for k, v in good.items() if k != "conversation_a"}
    path.write_text(json.dumps(missing) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="missing required field") as caught:
        load_dataset(path)
    assert (caught.value.line, caught.value.field) == (1, "conversation_a")


def test_a_missing_column_is_named_with_the_names_it_would_recognise(tmp_path: Path) -> None:
    path = tmp_path / "nowinner.jsonl"
    path.write_text(json.dumps({"prompt": "q", "response_a": "x", "response_b": "y", "winner": ""}) + "\n",
                    encoding="utf-8")
    with pytest.raises(DataError) as caught:
        load_dataset(path)
    assert (caught.value.line, caught.value.field) == (1, "winner")


def test_identical_replies_in_a_judge_bench_pair_are_left_out_and_reported(tmp_path: Path) -> None:
    data = json.loads((DATA / "judge_bench_pairs.json").read_text(encoding="utf-8"))
    data["instances"][1]["instance"]["output_b"] = data["instances"][1]["instance"]["output_a"]
    path = tmp_path / "jb.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    ds = load_dataset(path)
    assert [ex.id for ex in ds] == ["p1", "p3", "p4", "p5", "p6"]
    assert ds.meta["excluded"] == {"identical replies": 1}
    assert any("'p2'" in w for w in ds.meta["warnings"])


def test_a_judge_bench_label_that_names_no_reply_is_an_error_not_a_guess(tmp_path: Path) -> None:
    data = json.loads((DATA / "judge_bench_pairs.json").read_text(encoding="utf-8"))
    data["annotations"][0]["labels_list"].append("both")
    data["instances"][0]["annotations"]["preference"]["individual_human_scores"][1] = "both"
    path = tmp_path / "jb.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    ds = load_dataset(path)
    with pytest.raises(DataError) as caught:
        votes_of(ds.get("p1"), "preference")
    assert (caught.value.record, caught.value.field) == ("p1", "preference[1]")


def test_native_and_rating_csv_files_are_not_taken_for_pairs() -> None:
    assert detect_format(DATA / "tiny_native.jsonl") == "native"
    assert detect_format(DATA / "ratings_standard.csv") == "csv"


def test_a_plain_multi_line_prompt_is_one_turn_byte_for_byte(tmp_path: Path) -> None:
    """Issue 33: a multi-line prompt was split into turns with invented speakers A/B, its blank lines dropped
    and its indentation stripped."""
    prompt = "Explain this code:\n\n    for i in range(3):\n        print(i)\n\nBe brief."
    path = tmp_path / "pairs.csv"
    path.write_text('prompt,response_a,response_b,winner\n"' + prompt + '",It counts.,"  Loops\n\n twice",A\n',
                    encoding="utf-8")
    (pair,) = load_dataset(path).examples
    assert [(t.speaker, t.text) for t in pair.context] == [("", prompt)]
    assert pair.context_text() == prompt and pair.pair.response_b == "  Loops\n\n twice"


def test_a_short_row_in_a_pair_table_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text("prompt,response_a,response_b,winner\nq,a,b,A\nq,a,b\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"pairs\.csv, line 3: 3 cells but the header has 4 columns"):
        load_dataset(path)
