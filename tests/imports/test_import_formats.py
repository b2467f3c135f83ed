"""`core.imports`: small files of every format, with counts checked by hand against the files in
tests/data/imports (each file's comments are its rows: see the numbers in the assertions)."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest

from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError
from dialjudge.core.evaluation import evaluate
from dialjudge.core.imports import ImportOptions, ImportRefused, ScaleRule, import_run, prepare_import
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.model import Dataset
from dialjudge.core.review_queue import build_queue, review_rows
from dialjudge.core.run_columns import run_scores

FILES = Path(__file__).resolve().parents[1] / "data" / "imports"


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", remember=False)


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite3")


def _scores(store: RunStore, run_id: int) -> dict[str, dict[str, float | None]]:
    return {judge: {item: j.score for item, j in by_item.items()}
            for judge, by_item in store.judgments.load_judgments(run_id).items()}


def test_wide_csv_counts_every_problem_by_name(sample: Dataset, store: RunStore) -> None:
    # 6 data lines x 2 judge columns = 12 scores; the text column "system" is no judge.
    result = import_run(store, FILES / "wide.csv", sample)
    report = result.report
    assert (report.format, report.rows, report.judges) == ("table", 12, ["judge-a", "judge-b"])
    assert (report.matched_rows, report.items, report.dataset_items) == (8, 4, 60)
    assert report.unmatched == ["line 6 (no-such-item)"]
    assert report.duplicates == ["line 7 (sample-c01-llm, judge-a; first at line 3)",
                                 "line 7 (sample-c01-llm, judge-b; first at line 3)"]
    assert report.rows_without_score == ["line 4 (judge-b): no score in the file"]
    assert report.items_without_score == [] and report.out_of_scale == []
    assert _scores(store, result.run_id) == {
        "judge-a": {"sample-c01-ref": 5.0, "sample-c01-llm": 4.0, "sample-c01-s2s": 2.0, "sample-c01-adv1": 3.0},
        "judge-b": {"sample-c01-ref": 4.0, "sample-c01-llm": 3.5, "sample-c01-s2s": None, "sample-c01-adv1": 2.0}}
    record = store.runs.get_run(result.run_id)
    assert record.kind == "imported" and record.failures == 1 and record.total == 8
    provenance = record.run_config.imported
    assert provenance is not None
    assert provenance["format"] == "table" and provenance["file"] == "wide.csv"
    assert provenance["fields"]["score"] == "judge-a, judge-b" and provenance["fields"]["item id"] == "item_id"
    assert len(provenance["sha256"]) == 64 and provenance["importer_version"] == 1


def test_strict_refuses_and_writes_nothing(sample: Dataset, store: RunStore) -> None:
    with pytest.raises(ImportRefused, match="--strict.*no-such-item") as refused:
        import_run(store, FILES / "wide.csv", sample, ImportOptions(strict=True))
    assert len(refused.value.report.duplicates) == 2
    assert store.runs.list_runs() == []


def test_long_jsonl_with_a_judge_column_answers_and_reasons(sample: Dataset, store: RunStore) -> None:
    result = import_run(store, FILES / "long.jsonl", sample)
    assert (result.report.rows, result.report.matched_rows, result.report.items) == (6, 6, 3)
    assert result.report.problems() == []
    judgments = store.judgments.load_judgments(result.run_id)
    first = judgments["x"]["sample-c02-ref"]
    assert (first.score, first.normalized, first.reasoning, first.latency_s, first.prompt_tokens,
            first.completion_tokens, first.raw_output) == (5.0, 1.0, "because 5", 0.5, 100, 3, "Score: 5")
    # No score but an answer: the template's parser reads it, as a generate run reads its answers.
    parsed = judgments["y"]["sample-c02-ret"]
    assert (parsed.score, parsed.normalized, parsed.error) == (2.0, 0.25, None)
    # A judgment with its answer carries the prompt the template renders, so it can be rescored.
    assert first.prompt_hash


def test_rows_without_ids_match_by_context_and_response(sample: Dataset, store: RunStore) -> None:
    result = import_run(store, FILES / "by_text.csv", sample, ImportOptions(judge_name="texty"))
    assert (result.report.rows, result.report.matched_rows) == (3, 2)
    assert result.report.unmatched == ["line 4 (a response no dataset has)"]
    # The second row's response differs in case and surrounding spaces only.
    assert _scores(store, result.run_id) == {"texty": {"sample-c03-ref": 3.0, "sample-c03-llm": 4.0}}


@pytest.mark.parametrize("archive", [False, True], ids=["json", "eval-zip"])
def test_inspect_log(sample: Dataset, store: RunStore, tmp_path: Path, archive: bool) -> None:
    path = FILES / "inspect_log.json"
    if archive:  # the .eval layout: header.json and one JSON per sample, zipped
        log = json.loads(path.read_text(encoding="utf-8"))
        path = tmp_path / "log.eval"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("header.json", json.dumps({k: v for k, v in log.items() if k != "samples"}))
            for s in log["samples"]:
                z.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    result = import_run(store, path, sample)
    report = result.report
    assert (report.format, report.rows, report.matched_rows, report.judges) == (
        "inspect", 5, 4, ["openai/gpt-4o-mini"])
    # The archive holds one file per sample, read in name order: the unknown id comes first there.
    assert report.unmatched == [f"sample {1 if archive else 4} (not-in-sample)"]
    assert [name.split(": ", 1)[1] for name in report.rows_without_score] == ["the scorer gave this sample no score"]
    judgments = store.judgments.load_judgments(result.run_id)["openai/gpt-4o-mini"]
    assert {item: j.score for item, j in judgments.items()} == {
        "sample-c05-ref": 4.0, "sample-c05-llm": 2.5, "sample-c05-s2s": None, "sample-c05-adv1": 5.0}
    first = judgments["sample-c05-ref"]
    assert (first.raw_output, first.reasoning, first.prompt_tokens, first.completion_tokens, first.latency_s) == (
        "Rating: 4", "rated 4", 200, 5, 1.5)


def test_promptfoo_results_map_their_zero_to_one_scores(sample: Dataset, store: RunStore) -> None:
    result = import_run(store, FILES / "promptfoo_results.json", sample)
    assert (result.report.format, result.report.matched_rows, result.report.judges) == ("promptfoo", 3, ["gpt-judge"])
    assert result.report.scale_rule == "0-1 mapped linearly onto 1-5"
    judgments = store.judgments.load_judgments(result.run_id)["gpt-judge"]
    assert {i: (j.score, j.normalized) for i, j in judgments.items()} == {
        "sample-c07-ref": (4.0, 0.75), "sample-c07-llm": (2.0, 0.25), "sample-c07-hum": (5.0, 1.0)}
    assert judgments["sample-c07-ref"].raw_output == "4"
    assert judgments["sample-c07-ref"].reasoning == "graded 0.75"
    assert judgments["sample-c07-ref"].latency_s == pytest.approx(0.8)


def test_another_scale_is_refused_unless_stated(sample: Dataset, store: RunStore) -> None:
    with pytest.raises(ImportRefused, match=r"3 of 5 scores lie outside.*--scale") as refused:
        import_run(store, FILES / "ten_point.csv", sample)
    assert len(refused.value.report.out_of_scale) == 3 and store.runs.list_runs() == []

    result = import_run(store, FILES / "ten_point.csv", sample, ImportOptions(scale=ScaleRule.parse("1-10")))
    assert result.report.out_of_scale == ["line 6 (big-judge): 11 outside 1-10"]
    scores = _scores(store, result.run_id)["big-judge"]
    assert scores["sample-c09-ref"] == 5.0 and scores["sample-c09-llm"] == 1.0
    assert scores["sample-c09-hum"] == pytest.approx(1 + 6 / 9 * 4)
    assert scores["sample-c09-ret"] == pytest.approx(1 + 3 / 9 * 4)
    assert scores["sample-c09-s2s"] is None


def test_scale_rule_parsing() -> None:
    assert ScaleRule.parse("1-10") == ScaleRule(1.0, 10.0)
    assert ScaleRule.parse("0..1").map(0.5, 1, 5) == 3.0
    for bad in ("ten", "5-1", "3-3"):
        with pytest.raises(ConfigError, match="--scale"):
            ScaleRule.parse(bad)


def test_judge_name_needs_a_single_judge(sample: Dataset) -> None:
    with pytest.raises(ConfigError, match="names one judge.*holds 2"):
        prepare_import(FILES / "wide.csv", sample, ImportOptions(judge_name="one"))


def test_an_imported_run_feeds_the_statistics_and_the_review_queue(sample: Dataset, store: RunStore) -> None:
    result = import_run(store, FILES / "long.jsonl", sample)
    scores, failures = run_scores(store, result.run_id)
    assert set(scores) == {"x", "y", "pool"} and failures["x"] == 0
    records = evaluate(sample, qualities=["overall"], extra_scores=scores, failures=failures, include_metrics=False,
                       n_boot=0).records
    assert {r["evaluator"] for r in records if r["n"]} >= {"x", "y"}
    judgments = store.judgments.load_judgments(result.run_id)
    queue = build_queue(sample, judgments, "overall")
    rows = review_rows(sample, result.run_id, "overall", judgments, store.reviews.reviews(result.run_id), queue)
    assert [r["item_id"] for r in rows] == ["sample-c02-ref", "sample-c02-hum", "sample-c02-ret"]


def test_an_imported_run_cannot_be_retried_here(sample: Dataset, store: RunStore) -> None:
    from dialjudge.core.judges.post_run.retry import check_retryable

    result = import_run(store, FILES / "wide.csv", sample)
    with pytest.raises(ConfigError, match="imported from wide.csv.*ran elsewhere"):
        check_retryable(store, result.run_id)


def test_an_imported_judge_is_not_called_local_and_its_tokens_count(sample: Dataset, store: RunStore) -> None:
    from dialjudge.core.judges.post_run.cost import run_usage

    result = import_run(store, FILES / "inspect_log.json", sample)
    usage = run_usage(store, store.runs.get_run(result.run_id), {})
    (judge,) = usage.judges
    assert not judge.local and judge.cost is None
    # Samples 1, 2, 3 and 5 matched: 200 + 201 + 202 + 204 prompt tokens, 5 completion tokens each.
    assert (judge.prompt_tokens, judge.completion_tokens) == (807, 20)


def test_imported_answers_are_rescored_with_another_mapping(sample: Dataset, store: RunStore) -> None:
    from dialjudge.core.judges.post_run.rescore import RescoreSettings, rescore_run

    result = import_run(store, FILES / "long.jsonl", sample)
    mapping = {"1": 0.0, "2": 0.0, "3": 0.0, "4": 1.0, "5": 1.0}
    rescored = rescore_run(store, result.run_id, sample, RescoreSettings(mapping=mapping))
    after = _scores(store, rescored.run_id)
    # The answers "Score: 5/3/1" (x) and "Score: 4/2", "I think it is a 2" (y), read again and mapped.
    assert after == {"x": {"sample-c02-ref": 1.0, "sample-c02-hum": 0.0, "sample-c02-ret": 0.0},
                     "y": {"sample-c02-ref": 1.0, "sample-c02-hum": 0.0, "sample-c02-ret": 0.0}}
    assert store.runs.get_run(rescored.run_id).kind == "rescored"


def test_an_export_read_with_another_template_is_refused(sample: Dataset, store: RunStore, tmp_path: Path) -> None:
    # One judgment of a 1-5 run: 4 is 0.75 on 0-1; read with the 0-1 template it would be 4 on 0-1.
    row = {"run_id": 7, "item_id": "sample-c01-ref", "judge": "j", "repeat": 0, "mode": "generate", "score": 4.0,
           "normalized": 0.75, "prompt_hash": "h", "raw_output": "4", "sampling": "{}"}
    path = tmp_path / "run-7-judgments.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(ImportRefused, match="run's own --template"):
        import_run(store, path, sample, ImportOptions(template="adv-0to1", quality="consistency"))
    result = import_run(store, path, sample)
    assert _scores(store, result.run_id) == {"j": {"sample-c01-ref": 4.0}}
    # The same bytes from another folder: the same fingerprint.
    copy = tmp_path / "elsewhere" / path.name
    copy.parent.mkdir()
    copy.write_bytes(path.read_bytes())
    again = import_run(store, copy, sample)
    assert store.runs.get_run(again.run_id).fingerprint == store.runs.get_run(result.run_id).fingerprint


@pytest.mark.parametrize(("header", "row", "message"), [
    ("item_id,score,latency", "x,3,fast", "line 2: latency is not a number: 'fast'"),
    ("item_id,score,distribution", 'x,3,"{""3"": ""most""}"', "line 2: distribution must map answers to numbers"),
])
def test_a_wrong_type_in_an_optional_column_is_named_not_a_traceback(sample: Dataset, tmp_path: Path, header: str,
                                                                     row: str, message: str) -> None:
    from dialjudge.core.errors import DataError

    path = tmp_path / "scores.csv"
    path.write_text(f"{header}\n{row}\n", encoding="utf-8")
    with pytest.raises(DataError) as info:
        prepare_import(path, sample)
    assert str(info.value) == f"{path}: {message}"
