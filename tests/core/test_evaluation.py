"""From a dataset to agreement records: metric cells equal scipy on the real USR data, exclusions, notes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialjudge.core.config import Config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import DataError
from dialjudge.core.evaluation import (
    EvaluationReport,
    default_qualities,
    evaluate,
    reference_metric_scores,
    split_subsets,
)
from dialjudge.core.metrics import metric_ids, metric_info
from dialjudge.core.model import Aggregation, Dataset, Example, Level, Rating, Scale, ScaleKind, Turn
from shared_data import require_file

N_BOOT = 50


def metric_labels() -> list[str]:
    """The nine labels, METEOR's as the variant available here names it ("METEOR" with
    WordNet, "METEOR (exact+stem)" without; tests/core/test_metrics.py checks both)."""
    return [metric_info(m).label for m in metric_ids()]


@pytest.fixture(scope="module")
def usr(shared_data: Path) -> Dataset:
    require_file(shared_data, "usr/usr_topical_chat.json")
    # Module scope runs before the per-test config exists, so the data folder is given here.
    return open_dataset("usr-topicalchat", Config(data_dirs=(shared_data,)), remember=False)


@pytest.fixture(scope="module")
def usr_report(usr: Dataset) -> EvaluationReport:
    return evaluate(usr, qualities=["Overall"], n_boot=N_BOOT)


def by_evaluator(report: EvaluationReport, level: str = "turn") -> dict[str, dict]:
    return {r["evaluator"]: r for r in report.records if r["level"] == level}


def test_usr_overall_has_nine_metrics_and_the_ceiling_last(usr_report: EvaluationReport) -> None:
    labels = metric_labels()
    names = [r["evaluator"] for r in usr_report.records]
    assert names == labels + ["human ceiling"]
    assert usr_report.evaluators == labels
    assert [r["is_ceiling"] for r in usr_report.records] == [False] * 9 + [True]
    assert usr_report.qualities == ["Overall"] and usr_report.item_level == "turn"
    assert all(r["subset"] == "all" and r["quality"] == "Overall" for r in usr_report.records)
    assert any(f"bootstrap: {N_BOOT} resamples" in note for note in usr_report.notes)
    assert "reference-based metrics skipped 60 items: reference itself" in usr_report.notes


def test_metric_cells_equal_scipy_on_the_300_candidates(usr: Dataset, usr_report: EvaluationReport) -> None:
    from scipy.stats import pearsonr, spearmanr

    from dialjudge.core.metrics import score_examples

    scored = score_examples(usr.examples)
    candidates = [ex for ex in usr.examples if not ex.is_reference]
    assert len(candidates) == 300
    human = [ex.human("Overall") for ex in candidates]
    records = by_evaluator(usr_report)
    for info in scored.metrics:
        values = [scored.values[info.id][ex.id] for ex in candidates]
        rec = records[info.label]
        assert rec["n"] == 300 and rec["excluded"] == 60 and rec["failed"] == 0
        assert rec["spearman"] == pytest.approx(spearmanr(values, human).statistic, abs=1e-9), info.label
        assert rec["pearson"] == pytest.approx(pearsonr(values, human).statistic, abs=1e-9), info.label
        assert rec["spearman_lo"] <= rec["spearman"] <= rec["spearman_hi"]


def test_ceiling_is_computed_on_every_item(usr_report: EvaluationReport) -> None:
    ceiling = by_evaluator(usr_report)["human ceiling"]
    assert ceiling["n"] == 360
    assert 0 < ceiling["spearman"] <= 1


def test_subset_and_system_level(usr: Dataset) -> None:
    system = next(s for s in usr.systems if s != "Original Ground Truth")
    report = evaluate(usr, qualities=["Overall"], subset=f"system:{system}", levels=("turn", "system"),
                      metric_ids=["bleu4", "meteor"], n_boot=N_BOOT)
    turn = by_evaluator(report)
    assert set(turn) == {"BLEU-4", metric_info("meteor").label, "human ceiling"}
    assert turn["BLEU-4"]["n"] == 60 and turn["BLEU-4"]["subset"] == f"system:{system}"
    per_system = by_evaluator(evaluate(usr, qualities=["Overall"], levels=("system",), metric_ids=["bleu4"],
                                       n_boot=N_BOOT), "system")
    # Five systems are scored (the reference is never scored against itself).
    assert per_system["BLEU-4"]["n"] == 5


def test_aggregation_and_extra_evaluators(usr: Dataset) -> None:
    ids = [ex.id for ex in usr.examples]
    length = {ex.id: float(len(ex.candidate or "")) for ex in usr.examples}
    partial = {i: (None if n % 10 == 0 else float(n)) for n, i in enumerate(ids)}
    report = evaluate(usr, qualities=["Overall"], aggregation=Aggregation.MEDIAN, include_metrics=False,
                      extra_scores={"length": length, "judge": partial}, failures={"judge": 36}, n_boot=N_BOOT)
    records = by_evaluator(report)
    assert set(records) == {"length", "judge", "human ceiling"}
    assert report.evaluators == ["length", "judge"]
    assert records["length"]["n"] == 360  # a judge scores the references too
    assert records["length"]["aggregation"] == "median"
    assert records["judge"]["failed"] == 36 and records["judge"]["n"] == 324
    assert any("median of the annotators" in note for note in report.notes)
    assert not any("reference-based" in note for note in report.notes)

    from scipy.stats import spearmanr

    medians = [ex.human("Overall", Aggregation.MEDIAN) for ex in usr.examples]
    expected = spearmanr([length[i] for i in ids], medians).statistic
    assert records["length"]["spearman"] == pytest.approx(expected, abs=1e-9)


def test_fed_turn_notes_that_reference_metrics_cannot_score_it(shared_data: Path) -> None:
    require_file(shared_data, "fed/fed_data.json")
    fed = open_dataset("fed-turn", remember=False)
    report = evaluate(fed, qualities=["Overall"], metric_ids=["bleu1"], n_boot=N_BOOT)
    assert any("no reference responses" in note and "cannot score" in note for note in report.notes)
    records = by_evaluator(report)
    assert records["BLEU-1"]["n"] == 0 and records["BLEU-1"]["excluded"] == 375
    assert records["human ceiling"]["n"] > 0


def test_unknown_quality_and_subset_are_data_errors(usr: Dataset) -> None:
    with pytest.raises(DataError, match=r"usr-topicalchat has no quality 'overal' \(qualities: .*Overall"):
        evaluate(usr, qualities=["overal"], include_metrics=False, n_boot=N_BOOT)
    with pytest.raises(DataError, match="unknown subset 'systen:x'"):
        evaluate(usr, qualities=["Overall"], subset="systen:x", include_metrics=False, n_boot=N_BOOT)
    with pytest.raises(DataError, match="unknown subset 'level:utterance'"):
        evaluate(usr, qualities=["Overall"], subset="level:utterance", include_metrics=False, n_boot=N_BOOT)
    with pytest.raises(DataError, match="unknown subset 'opn'"):
        evaluate(usr, qualities=["Overall"], extra_subsets=["opn"], include_metrics=False, n_boot=N_BOOT)


def test_open_and_closed_are_split_out_when_the_set_has_both() -> None:
    sample = open_dataset("sample", Config())
    assert split_subsets(sample) == ["all", "open", "closed"]
    assert split_subsets(sample, "adversarial") == ["adversarial"]
    assert split_subsets(_toy(Level.TURN, {"Fluent": Level.TURN})) == ["all"]  # not tagged open/closed

    report = evaluate(sample, qualities=["overall"], subset="all", extra_subsets=["open", "closed", "open"],
                      metric_ids=["bleu1"], n_boot=N_BOOT)
    assert report.subsets == ["all", "open", "closed"]
    n = {r["subset"]: r["n"] for r in report.records if r["evaluator"] == "BLEU-1"}
    assert n["open"] + n["closed"] == n["all"] == 48


def _toy(level: Level, qualities: dict[str, Level]) -> Dataset:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    examples = []
    for i in range(6):
        lvl = level if i < 3 else Level.TURN
        examples.append(Example(
            id=f"e{i}", group_id=f"g{i}", context=(Turn("A", "hi"),), candidate=None if lvl is Level.DIALOG else "yo",
            level=lvl, ratings={q: Rating((1 + i % 5, 2), scale) for q, at in qualities.items() if at is lvl}))
    return Dataset("toy", examples)


def test_default_qualities_follow_the_level() -> None:
    dataset = _toy(Level.DIALOG, {"Coherent": Level.DIALOG, "Fluent": Level.TURN})
    assert default_qualities(dataset, Level.DIALOG) == ["Coherent"]
    assert default_qualities(dataset) == ["Fluent"]
    report = evaluate(dataset, levels=("dialog",), include_metrics=False, n_boot=N_BOOT)
    assert report.qualities == ["Coherent"] and report.item_level == "dialog"


def test_no_references_note_on_a_toy_set() -> None:
    dataset = _toy(Level.TURN, {"Fluent": Level.TURN})
    scores, notes = reference_metric_scores(dataset, ["bleu1"])
    assert scores == {"BLEU-1": {}}
    assert "reference-based metrics skipped 6 items: no reference" in notes
    assert any("toy has no reference responses" in n for n in notes)


def test_quality_names_match_in_any_case() -> None:
    from dialjudge.core.dataset_catalogue import open_dataset
    from dialjudge.core.evaluation import resolve_quality

    dataset = open_dataset("sample")
    assert resolve_quality(dataset, "OVERALL") == "overall"
    assert resolve_quality(dataset, "overall") == "overall"
    report = evaluate(dataset, qualities=["Consistency"], n_boot=0)
    assert report.qualities == ["consistency"]


def test_a_subset_that_selects_nothing_is_an_error_not_an_empty_table() -> None:
    from dialjudge.core.dataset_catalogue import open_dataset

    dataset = open_dataset("sample")
    with pytest.raises(DataError, match=r"subset 'system:nope' selects no item of sample \(systems: .*seq2seq"):
        evaluate(dataset, qualities=["overall"], subset="system:nope", include_metrics=False, n_boot=0)
    with pytest.raises(DataError, match="has no items"):
        evaluate(dataset.subset([]), qualities=["overall"], include_metrics=False, n_boot=0)
    report = evaluate(dataset, qualities=["overall"], include_metrics=False, n_boot=0)
    assert any("no confidence intervals" in note for note in report.notes)


def test_a_datasets_qualities_follow_its_examples_and_survive_pickling() -> None:
    """Dataset.qualities is kept between calls: it must change when the examples do (the compute worker
    extends the list as pieces arrive; a replace makes a new list), and a copy the caller changes is its own."""
    import dataclasses
    import pickle

    five, two = Scale(ScaleKind.ORDINAL, 1, 5), Scale(ScaleKind.ORDINAL, 1, 2)

    def example(i: int, quality: str, scale: Scale) -> Example:
        return Example(id=f"ex{i}", group_id=f"g{i}", context=(Turn("A", "hi"),), candidate="yo", level=Level.TURN,
                       ratings={quality: Rating((1,), scale)})

    dataset = Dataset("d", [example(0, "overall", five)])
    assert dataset.qualities == {"overall": five}
    dataset.qualities["changed"] = two  # the caller's copy
    assert dataset.qualities == {"overall": five}
    dataset.examples.extend([example(1, "natural", two)])
    assert dataset.qualities == {"overall": five, "natural": two}
    replaced = dataclasses.replace(dataset, examples=[example(2, "engaging", two)])
    assert replaced.qualities == {"engaging": two}
    copy = pickle.loads(pickle.dumps(dataset))
    assert copy.qualities == {"overall": five, "natural": two}
    copy.examples.append(example(3, "coherent", five))
    assert list(copy.qualities) == ["overall", "natural", "coherent"]
