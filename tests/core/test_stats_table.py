"""Human ceiling and agreement tables (dialjudge.core.stats.ceiling / .table)."""

from __future__ import annotations

import json
import math
from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.model import Aggregation, Example, Rating, Scale, ScaleKind, Turn
from dialjudge.core.stats.categorical import cohen_kappa, krippendorff_alpha, percent_agreement
from dialjudge.core.stats.ceiling import human_ceiling
from dialjudge.core.stats.correlation import correlate, system_level
from dialjudge.core.stats.table import CEILING, agreement_table, categorical_table
from dialjudge.core.subsets import Subset
from shared_data import require_file

FIVE = Scale(ScaleKind.ORDINAL, 1, 5)
BINARY = Scale(ScaleKind.BINARY, 0, 1)
TOPIC = Scale(ScaleKind.CATEGORICAL, labels=("chat", "facts", "other"))

# 4 contexts x 3 systems; three annotators in a fixed order, no names.
OVERALL = [
    (5, 4, 5), (3, 3, 2), (1, 2, 1),
    (5, 4, 3), (2, 3, 3), (2, 1, 1),
    (5, 5, 4), (None, None, None), (1, 1, 2),
    (4, 5, 5), (3, 2, 3), (2, 3, None),
]
FLUENT = [
    (1, 1, 1), (1, 0, 1), (0, 0, 1),
    (1, 1, 0), (1, 1, 1), (0, 0, 0),
    (1, 1, 1), (0, 1, 1), (0, 0, 0),
    (1, 0, 1), (1, 1, 1), (0, 1, 0),
]
TOPICS = [
    ("chat", "chat", "facts"), ("facts", "facts", "facts"), ("other", "chat", "other"),
    ("chat", "chat", "chat"), ("facts", "other", "chat"), ("other", "other", "other"),
    ("chat", "facts", "chat"), ("facts", "facts", "chat"), ("other", "other", "chat"),
    ("chat", "chat", "chat"), ("facts", "facts", "other"), ("other", "facts", "chat"),
]


def make_examples() -> list[Example]:
    out = []
    for k in range(12):
        context, system = divmod(k, 3)
        out.append(Example(
            id=f"c{context}-s{system}", group_id=f"c{context}", context=(Turn("A", f"hello {context}"),),
            candidate=f"reply {k}", system=f"s{system}", is_reference=system == 0,
            ratings={"Overall": Rating(OVERALL[k], FIVE), "Fluent": Rating(FLUENT[k], BINARY),
                     "Topic": Rating(TOPICS[k], TOPIC)},
        ))
    return out


def mean_label(values) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def evaluators(examples: list[Example]) -> dict[str, dict[str, float | None]]:
    rng = np.random.default_rng(0)
    judge = {ex.id: (mean_label(r) or 3) / 5 + rng.normal(0, 0.15) for ex, r in zip(examples, OVERALL)}
    judge["c1-s1"] = None  # failed
    # A reference-based metric cannot score the references themselves.
    metric = {ex.id: float(rng.random()) for ex in examples if not ex.is_reference}
    return {"judge": judge, "metric": metric}


def test_leave_one_out_ceiling_by_hand() -> None:
    examples = make_examples()
    ceiling = human_ceiling(examples, "Overall")
    matrix = np.array([[np.nan if v is None else v for v in row] for row in OVERALL], dtype=float).T
    per_annotator = []
    for a in range(3):
        others = np.delete(matrix, a, axis=0)
        usable = np.isfinite(matrix[a]) & np.isfinite(others).any(axis=0)
        own, rest = matrix[a][usable], np.nanmean(others[:, usable], axis=0)
        per_annotator.append((stats.pearsonr(own, rest).statistic, stats.spearmanr(own, rest).statistic, own.size))
    # Averaged over the annotators weighted by their items (core.stats.rater_pairs).
    weights = [n for *_, n in per_annotator]
    assert ceiling.pearson == pytest.approx(np.average([p for p, *_ in per_annotator], weights=weights), abs=1e-12)
    assert ceiling.spearman == pytest.approx(np.average([s for _, s, _ in per_annotator], weights=weights),
                                             abs=1e-12)
    assert [a.n for a in ceiling.per_annotator] == [11, 11, 10]
    assert ceiling.alpha == pytest.approx(krippendorff_alpha(matrix.tolist(), "ordinal"), abs=1e-12)
    assert ceiling.alpha_level == "ordinal" and ceiling.kappa is None
    assert not ceiling.annotators_by_name and ceiling.n_annotators == 3 and ceiling.n_items == 12


def test_binary_ceiling_adds_pairwise_kappa_and_agreement() -> None:
    ceiling = human_ceiling(make_examples(), "Fluent")
    columns = list(zip(*FLUENT))
    pairs = [(0, 1), (0, 2), (1, 2)]
    shared = [sum(a is not None and b is not None for a, b in zip(columns[i], columns[j])) for i, j in pairs]
    assert min(shared) >= 10  # every pair counts; weighted by the items it shares
    assert ceiling.kappa == pytest.approx(
        np.average([cohen_kappa(columns[i], columns[j]) for i, j in pairs], weights=shared))
    assert ceiling.percent_agreement == pytest.approx(
        np.average([percent_agreement(columns[i], columns[j]) for i, j in pairs], weights=shared))
    assert ceiling.alpha_level == "nominal" and ceiling.n_pairs == 3


def test_categorical_ceiling_has_no_correlation() -> None:
    ceiling = human_ceiling(make_examples(), "Topic")
    assert math.isnan(ceiling.pearson) and any("categorical" in r for r in ceiling.reasons)
    assert ceiling.alpha_level == "nominal" and not math.isnan(ceiling.alpha)
    assert 0 < ceiling.percent_agreement < 1


def test_named_annotators_are_matched_by_name() -> None:
    # Five people, three per item, in varying order: "sm" is first or last.
    rows = [(("sm", "me", "er"), (5, 4, 4)), (("er", "fl", "sm"), (2, 2, 3)), (("me", "fl", "sm"), (3, 3, 3)),
            (("sm", "er", "yf"), (1, 2, 1)), (("yf", "me", "sm"), (4, 5, 4)), (("fl", "yf", "sm"), (2, 1, 2))]
    examples = [Example(f"e{k}", f"g{k}", (), "r", ratings={"Q": Rating(scores, FIVE, names)})
                for k, (names, scores) in enumerate(rows)]
    ceiling = human_ceiling(examples, "Q", min_shared_items=1)  # matching on 6 items; the minimum: test_sparse_raters
    assert ceiling.annotators_by_name and ceiling.n_annotators == 5
    sm = next(a for a in ceiling.per_annotator if a.annotator == "sm")
    own = [5, 3, 3, 1, 4, 2]
    rest = [4, 2, 3, 1.5, 4.5, 1.5]
    assert sm.n == 6 and sm.pearson == pytest.approx(stats.pearsonr(own, rest).statistic, abs=1e-12)


def test_system_level_ceiling_uses_system_means() -> None:
    examples = make_examples()
    ceiling = human_ceiling(examples, "Overall", level="system")
    first = next(a for a in ceiling.per_annotator if a.annotator == "annotator 1")
    own, rest = [], []
    for system in ("s0", "s1", "s2"):
        rows = [r for ex, r in zip(examples, OVERALL) if ex.system == system and r[0] is not None]
        own.append(np.mean([r[0] for r in rows]))
        rest.append(np.mean([mean_label(r[1:]) for r in rows]))
    assert first.n == 3 and first.pearson == pytest.approx(stats.pearsonr(own, rest).statistic, abs=1e-12)
    assert ceiling.alpha is None


def test_table_cells_match_correlate_and_count_what_was_left_out() -> None:
    examples = make_examples()
    scores = evaluators(examples)
    table = agreement_table(examples, scores, ["Overall", "Fluent"], levels=("turn", "system"), n_boot=200)
    judge = table.cell("judge", "Overall", "turn")
    usable = [ex for ex, r in zip(examples, OVERALL) if mean_label(r) is not None and ex.id != "c1-s1"]
    expected = correlate([scores["judge"][ex.id] for ex in usable],
                         [mean_label(r) for ex, r in zip(examples, OVERALL) if ex in usable],
                         [ex.group_id for ex in usable], n_boot=200, seed=0)
    # Compared as dicts: on so few contexts the CIs are NaN (none is shown), and NaN != NaN.
    assert judge.result.to_dict() == replace(expected, n_excluded=2).to_dict()
    assert judge.result.ci_reason == expected.ci_reason
    assert (judge.exclusions.failed, judge.exclusions.no_human_label, judge.exclusions.not_scored) == (1, 1, 0)
    assert judge.excluded == 2 and judge.result.n_excluded == 2

    metric = table.cell("metric", "Overall", "system")
    kept = [ex for ex, r in zip(examples, OVERALL) if not ex.is_reference and mean_label(r) is not None]
    expected_system = system_level([scores["metric"][ex.id] for ex in kept],
                                   [ex.human("Overall") for ex in kept], [ex.system for ex in kept],
                                   [ex.group_id for ex in kept], n_boot=200, seed=0)
    assert metric.result == replace(expected_system, n_excluded=5)
    assert metric.exclusions.not_scored == 4 and metric.result.n == 2 and not metric.result.defined

    assert table.row("judge").failures == 1 and table.row("metric").failures == 0
    assert table.ceiling[("Overall", "turn")] == human_ceiling(examples, "Overall")
    assert table.ceiling[("Fluent", "system")] == human_ceiling(examples, "Fluent", level="system")


def test_records_are_flat_and_uniform() -> None:
    examples = make_examples()
    table = agreement_table(examples, evaluators(examples), ["Overall", "Fluent"],
                            levels=("turn", "system"), n_boot=50, failures={"judge": 3})
    records = table.to_records()
    assert len(records) == 2 * 2 * 2 + 2 * 2
    keys = set(records[0])
    assert all(set(r) == keys for r in records)
    for name in ("evaluator", "quality", "level", "subset", "pearson", "pearson_p", "pearson_lo", "pearson_hi",
                 "spearman", "kendall_hi", "n", "excluded", "failed"):
        assert name in keys
    assert not any(isinstance(v, float) and math.isnan(v) for r in records for v in r.values())
    ceiling = [r for r in records if r["evaluator"] == CEILING]
    assert len(ceiling) == 4 and all(r["kind"] == "ceiling" for r in ceiling)
    assert table.row("judge").failures == 3  # the run's own count wins
    judge = next(r for r in records if r["evaluator"] == "judge" and r["quality"] == "Overall" and r["level"] == "turn")
    assert (judge["failed"], judge["excluded"], judge["subset"]) == (1, 2, "all")


def test_subset_levels_and_scales_are_respected() -> None:
    examples = make_examples()
    scores = evaluators(examples)
    only_s1 = agreement_table(examples, scores, ["Overall"], subset=Subset("system:s1"), n_boot=0)
    assert only_s1.n_examples == 4 and only_s1.subset == "system:s1"
    s1 = only_s1.cell("judge", "Overall")
    assert (s1.exclusions.failed, s1.exclusions.no_human_label, s1.result.n) == (1, 1, 2)
    assert not s1.result.defined and "only 2 paired items" in (s1.result.reason or "")
    topic = agreement_table(examples, scores, ["Topic"], n_boot=0).cell("judge", "Topic")
    assert not topic.result.defined and "categorical" in (topic.result.reason or "")
    majority = agreement_table(examples, scores, ["Overall"], aggregation=Aggregation.MAJORITY, n_boot=0)
    assert majority.ties["Overall"] == 2  # (5, 4, 3) and (2, 3, missing)
    unrated = agreement_table(examples, scores, ["Coherent"], n_boot=0).cell("judge", "Coherent")
    assert unrated.result.n == 0 and "no example in the subset has ratings" in (unrated.result.reason or "")
    with pytest.raises(ValueError, match="unknown level"):
        agreement_table(examples, scores, ["Overall"], levels=("corpus",))


def test_categorical_table_against_majority_votes() -> None:
    examples = make_examples()
    judge = {ex.id: ("chat" if k % 2 else "facts") for k, ex in enumerate(examples)}
    judge["c0-s0"] = "weather"  # not a label of the scale
    del judge["c3-s2"]
    labels = {"judge": judge}
    table = categorical_table(examples, labels, ["Topic"])
    cell = table.cell("judge", "Topic")
    votes = [ex.ratings["Topic"].aggregate(Aggregation.MAJORITY) for ex in examples]
    used = [k for k, ex in enumerate(examples) if ex.id in judge and judge[ex.id] != "weather"]
    assert (cell.exclusions.invalid_label, cell.exclusions.not_scored, cell.result.n) == (1, 1, 10)
    assert cell.result.kappa == pytest.approx(cohen_kappa([judge[examples[k].id] for k in used],
                                                          [votes[k].value for k in used]))
    assert cell.result.n_ties == sum(1 for k in used if votes[k].is_tie) > 0
    assert table.ties["Topic"] == sum(1 for v in votes if v.is_tie)
    assert table.ceiling["Topic"].alpha_level == "nominal"
    binary = categorical_table(examples, {"judge": {ex.id: str(k % 2) for k, ex in enumerate(examples)}}, ["Fluent"])
    assert binary.cell("judge", "Fluent").result.n == 12  # "1" and 1 are the same label on a 0-1 scale
    records = binary.to_records()
    assert {r["kind"] for r in records} == {"evaluator", "ceiling"}
    assert all(set(r) == set(records[0]) for r in records)


USR_QUALITIES = {
    "Understandable": Scale(ScaleKind.BINARY, 0, 1), "Natural": Scale(ScaleKind.ORDINAL, 1, 3),
    "Maintains Context": Scale(ScaleKind.ORDINAL, 1, 3), "Engaging": Scale(ScaleKind.ORDINAL, 1, 3),
    "Uses Knowledge": Scale(ScaleKind.BINARY, 0, 1), "Overall": Scale(ScaleKind.ORDINAL, 1, 5),
}


def usr_examples(path) -> list[Example]:
    """USR Topical-Chat read with plain json (the loader lives elsewhere)."""
    out = []
    for c, context in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        turns = tuple(Turn("", line) for line in context["context"].split("\n"))
        for r, response in enumerate(context["responses"]):
            ratings = {q: Rating(tuple(response[q]), scale, tuple(context["annotators"]))
                       for q, scale in USR_QUALITIES.items()}
            out.append(Example(f"{c}-{r}", str(c), turns, response["response"], system=response["model"],
                               ratings=ratings, is_reference=response["model"] == "Original Ground Truth"))
    return out


def test_usr_ceiling_is_plausible_and_a_full_table_computes(shared_data) -> None:
    examples = usr_examples(require_file(shared_data, "usr/usr_topical_chat.json"))
    assert len(examples) == 360
    overall = human_ceiling(examples, "Overall")
    # Annotators agree well but not perfectly on Overall (USR reports about 0.7).
    assert overall.annotators_by_name and overall.n_annotators == 5
    assert 0.55 < overall.pearson < 0.9 and 0.55 < overall.spearman < 0.9
    assert 0.45 < overall.alpha < 0.85

    rng = np.random.default_rng(0)
    scores = {}
    for k in range(12):
        noise = 0.3 * (k + 1)
        scores[f"evaluator {k}"] = {ex.id: ex.human("Overall") + rng.normal(0, noise)
                                    for ex in examples if not (k % 2 and ex.is_reference)}
    table = agreement_table(examples, scores, list(USR_QUALITIES), levels=("turn", "system"), n_boot=1000)
    best = table.cell("evaluator 0", "Overall")
    assert best.result.pearson.value > table.cell("evaluator 10", "Overall").result.pearson.value
    assert best.result.n == 360 and table.cell("evaluator 1", "Overall").exclusions.not_scored == 60
    assert table.cell("evaluator 0", "Overall", "system").result.n == 6


def test_ceiling_table_separates_turn_and_dialog_levels() -> None:
    from dialjudge.core.model import Level
    from dialjudge.core.stats.ceiling import ceiling_table

    turns = make_examples()
    dialogs = [Example(f"d{k}", f"d{k}", (), None, level=Level.DIALOG,
                       ratings={"Overall": Rating((k % 5 + 1, (k + 1) % 5 + 1, k % 5 + 1), FIVE)})
               for k in range(8)]
    rows = ceiling_table(turns + dialogs)
    assert [(r.quality, r.level) for r in rows] == [
        ("Overall", "turn"), ("Fluent", "turn"), ("Topic", "turn"), ("Overall", "dialog")]
    assert rows[0].ceiling == human_ceiling(turns, "Overall") and rows[0].scale == "ordinal 1-5"
    assert rows[3].ceiling == human_ceiling(dialogs, "Overall") and rows[3].n_items == 8
    assert [r.quality for r in ceiling_table(turns, ["Fluent"])] == ["Fluent"]
