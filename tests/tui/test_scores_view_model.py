"""The workspace: the app's state, checked against core/stats and core/judges/pool computed directly."""

from __future__ import annotations

import math

import pytest

from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.post_run.pool import PoolMethod, pool_scores
from dialjudge.core.judges.types import Judgment, ScoringMode
from dialjudge.core.metrics import score_examples
from dialjudge.core.model import Aggregation
from dialjudge.core.stats import agreement_table, correlate
from dialjudge.core.subsets import Subset
from dialjudge.tui.scores_view_model import POOL, EvaluatorKind, Workspace, default_quality, judge_evaluator

FAST_METRICS = ("bleu1", "rougeL")


@pytest.fixture(scope="module")
def sample():
    return open_dataset("sample", remember=False)


@pytest.fixture(scope="module")
def metric_scores(sample):
    return score_examples(sample.examples, FAST_METRICS)


def judgment(item_id: str, judge: str, normalized: float | None, repeat: int = 0) -> Judgment:
    return Judgment(item_id=item_id, judge=judge, mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="",
                    score=None if normalized is None else 1 + 4 * normalized, normalized=normalized,
                    repeat=repeat)


def judge_score(item_id: str, salt: int) -> float:
    """A deterministic, varied score per item and judge."""
    return ((sum(map(ord, item_id)) * (7 + salt)) % 97) / 96


def test_dataset_sets_the_default_view(sample):
    ws = Workspace()
    ws.set_dataset(sample)
    assert ws.quality == "overall" == default_quality(sample)
    assert ws.subset == Subset("all")
    specs = [s.spec for s in ws.subsets()]
    assert specs[:4] == ["all", "open", "closed", "adversarial"]
    assert "system:seq2seq" in specs
    assert ws.evaluators == []


def test_bad_choices_are_refused(sample):
    ws = Workspace()
    ws.set_dataset(sample)
    with pytest.raises(ValueError, match="no numeric quality 'nonsense'"):
        ws.set_quality("nonsense")
    with pytest.raises(ValueError, match="unknown subset"):
        ws.set_subset("bogus:")
    assert ws.quality == "overall" and ws.subset.spec == "all"


def test_metric_records_equal_core_table(sample, metric_scores):
    ws = Workspace()
    ws.set_dataset(sample)
    ws.set_metric_scores(metric_scores)
    assert ws.evaluators == ["BLEU-1", "ROUGE-L"]
    assert ws.kind("BLEU-1") is EvaluatorKind.METRIC
    ws.set_subset("closed")
    ws.set_quality("consistency")
    records = ws.agreement_records(n_boot=200)
    direct = agreement_table(
        sample.examples, {"BLEU-1": metric_scores["bleu1"], "ROUGE-L": metric_scores["rougeL"]},
        ["consistency"], subset=Subset("closed"), n_boot=200, seed=0,
    ).to_records()
    assert records == direct
    assert {r["evaluator"] for r in records} == {"BLEU-1", "ROUGE-L", "human ceiling"}


def test_judgments_feed_running_correlations_like_correlate(sample):
    ws = Workspace()
    ws.set_dataset(sample)
    ids = [ex.id for ex in sample.examples]
    failed = set(ids[::11])
    for item_id in ids:
        ws.add_judgment(judgment(item_id, "smollm2", None if item_id in failed else judge_score(item_id, 1)),
                        run_id=3)
    name = judge_evaluator("smollm2", 3)
    assert name == "smollm2#3" and ws.evaluators == [name]
    assert ws.failures == {name: len(failed)}

    def check(subset: str, quality: str) -> None:
        examples = [ex for ex in Subset(subset).select(sample.examples) if quality in ex.ratings]
        scores = [ws.scores_of(name)[ex.id] for ex in examples]
        human = [ex.human(quality, Aggregation.MEAN) for ex in examples]
        expected = correlate(scores, human, n_boot=0)
        snap = ws.running_snapshots()[name]
        assert snap.n == expected.n
        assert snap.failures == sum(1 for ex in examples if ex.id in failed)
        for method in ("pearson", "spearman", "kendall"):
            assert getattr(snap, method) == pytest.approx(expected.coefficient(method).value, abs=1e-12)

    check("all", "overall")
    ws.set_subset("open")
    check("open", "overall")
    ws.set_quality("relevance")
    check("open", "relevance")


def test_running_and_table_agree_on_judge_cells(sample):
    ws = Workspace()
    ws.set_dataset(sample)
    for ex in sample.examples:
        ws.add_judgment(judgment(ex.id, "j", judge_score(ex.id, 2)), run_id=1)
    ws.set_subset("adversarial")
    table = ws.agreement_table(n_boot=100)
    cell = table.cell("j#1", "overall")
    snap = ws.running_snapshots()["j#1"]
    assert cell.n == snap.n
    assert cell.result.pearson.value == pytest.approx(snap.pearson, abs=1e-12)
    assert cell.result.kendall.value == pytest.approx(snap.kendall, abs=1e-12)


def test_pool_of_partly_scored_columns_is_core_pool_after_a_column_goes(sample):
    """The pool is worked out again when a column goes: items scored by one column, by several, failed."""
    ws = Workspace()
    ws.set_dataset(sample)
    ids = [ex.id for ex in sample.examples]
    table: dict[str, dict[str, Judgment]] = {"a#1": {}, "b#2": {}, "c#3": {}}
    for column, name, run_id, every in (("a#1", "a", 1, 1), ("b#2", "b", 2, 2), ("c#3", "c", 3, 3)):
        for k, item_id in enumerate(ids[::every]):
            scored = judgment(item_id, name, None if k % 7 == 3 else judge_score(item_id, run_id))
            ws.add_judgment(scored, run_id=run_id)
            table[column][item_id] = scored
    for gone in ("a#1", None):  # three columns, then without the widest: the pool stays the core's
        expected = pool_scores(table, PoolMethod.MEAN)
        assert dict(ws.scores_of(POOL)) == pytest.approx({i: p.value for i, p in expected.items()})
        assert ws.running_snapshots()[POOL].n == sum(p.value is not None for p in expected.values())
        if gone is None:
            break
        ws.remove_evaluator(gone)
        del table[gone]
    ws.remove_evaluator("c#3")
    assert not ws.has_pool


def test_pool_is_the_mean_of_judges_as_core_pools_it(sample):
    ws = Workspace()
    ws.set_dataset(sample)
    ids = [ex.id for ex in sample.examples]
    table: dict[str, dict[str, Judgment]] = {"a#1": {}, "b#2": {}}
    for item_id in ids:
        first = judgment(item_id, "a", judge_score(item_id, 1))
        ws.add_judgment(first, run_id=1)
        table["a#1"][item_id] = first
        assert not ws.has_pool
    for k, item_id in enumerate(ids):
        second = judgment(item_id, "b", None if k % 5 == 0 else judge_score(item_id, 4))
        ws.add_judgment(second, run_id=2)
        table["b#2"][item_id] = second
    assert ws.evaluators == ["a#1", "b#2", POOL]
    assert ws.kind(POOL) is EvaluatorKind.POOL
    expected = pool_scores(table, PoolMethod.MEAN)
    assert dict(ws.scores_of(POOL)) == pytest.approx({i: p.value for i, p in expected.items()})
    # The running pool equals correlate() on the pooled scores.
    human = [ex.human("overall") for ex in sample.examples]
    pooled = [ws.scores_of(POOL)[i] for i in ids]
    snap = ws.running_snapshots()[POOL]
    assert snap.pearson == pytest.approx(correlate(pooled, human, n_boot=0).pearson.value, abs=1e-12)
    ws.remove_evaluator("b#2")
    assert ws.evaluators == ["a#1"] and POOL not in ws.running_snapshots()


def test_later_repeats_are_not_columns(sample):
    ws = Workspace()
    ws.set_dataset(sample)
    item = sample.examples[0].id
    ws.add_judgment(judgment(item, "j", 0.5), run_id=1)
    ws.add_judgment(judgment(item, "j", 0.9, repeat=1), run_id=1)
    assert ws.scores_of("j#1") == {item: 0.5}


def test_human_unit_and_disagreement(sample):
    ws = Workspace()
    ws.set_dataset(sample)
    ex = sample.examples[1]
    label = ex.human("overall")
    assert ws.human_unit(ex) == pytest.approx((label - 1) / 4)
    ws.add_judgment(judgment(ex.id, "j", 0.25), run_id=None)
    assert ws.disagreement("j", ex) == pytest.approx(abs(0.25 - (label - 1) / 4))
    assert ws.disagreement("j", sample.examples[2]) is None


def test_agreement_inputs_are_a_frozen_copy(sample):
    ws = Workspace()
    ws.set_dataset(sample)
    ws.add_judgment(judgment(sample.examples[0].id, "j", 0.5), run_id=1)
    inputs = ws.agreement_inputs()
    ws.add_judgment(judgment(sample.examples[1].id, "j", 0.7), run_id=1)
    assert len(inputs.scores["j#1"]) == 1
    assert inputs.versions["j#1"] < ws.version("j#1")
    ws.set_subset("open")
    assert inputs.selection_version < ws.selection_version
    only = ws.agreement_inputs(["j#1"])
    assert set(only.scores) == set(only.versions) == {"j#1"}


def test_a_new_dataset_drops_every_score(sample, metric_scores):
    ws = Workspace()
    ws.set_dataset(sample)
    ws.set_metric_scores(metric_scores)
    ws.add_judgment(judgment(sample.examples[0].id, "j", 0.5), run_id=1)
    ws.set_dataset(sample.subset(sample.examples[:10], name="small"))
    assert ws.evaluators == [] and ws.metric_scores is None
    assert not math.isnan(ws.ceiling().pearson)


def test_a_prepared_dataset_gives_the_same_view_as_a_plain_one(sample):
    """set_dataset(prepare(d)) (the app prepares on a worker) equals set_dataset(d), running correlations included."""
    plain, prepared = Workspace(), Workspace()
    plain.set_dataset(sample)
    prepared.set_dataset(prepared.prepare(sample))
    assert prepared.dataset is sample and prepared.quality == plain.quality
    assert prepared.qualities() == plain.qualities()
    assert prepared.human_labels() == plain.human_labels()
    assert [prepared.human_label(ex) for ex in sample] == [ex.human("overall") for ex in sample]
    for ws in (plain, prepared):
        for ex in sample:
            ws.add_judgment(judgment(ex.id, "fake", judge_score(ex.id, 1)))
    assert prepared.running_snapshots() == plain.running_snapshots()
    prepared.set_subset("closed")  # the view changes from the prepared one as from any other
    plain.set_subset("closed")
    assert prepared.human_labels() == plain.human_labels()
    assert prepared.running_snapshots() == plain.running_snapshots()


def test_a_dataset_prepared_under_other_settings_is_prepared_again(sample):
    ws = Workspace()
    prepared = ws.prepare(sample)
    ws.aggregation = Aggregation.MEDIAN
    ws.set_dataset(prepared)
    assert ws.human_labels() == {ex.id: ex.human("overall", Aggregation.MEDIAN) for ex in sample
                                 if "overall" in ex.ratings}


def test_live_snapshots_are_asked_for_once_per_change_and_arrive_without_waiting(sample):
    """The panel's path: live_snapshots returns at once (what was last computed) and asks the keeper's thread for
    newer numbers only when scores changed since the last question; the numbers equal the blocking ones."""
    import threading

    ws = Workspace()
    ws.set_dataset(sample)
    asked: list[int] = []
    keeper = ws.running_keeper
    original_ask = keeper.ask
    keeper.ask = lambda: (asked.append(1), original_ask())[1]  # type: ignore[method-assign]
    computed = threading.Event()
    keeper.computed = computed.set
    for ex in sample.examples[:20]:
        ws.add_judgment(judgment(ex.id, "smollm2", judge_score(ex.id, 1)), run_id=3)
    assert ws.live_snapshots() == {}  # nothing computed yet: it does not wait
    assert computed.wait(30) and asked == [1]
    live = ws.live_snapshots()
    assert asked == [1]  # no score changed since: not asked again
    assert live == ws.running_snapshots() and live["smollm2#3"].n > 0
    ws.add_judgment(judgment(sample.examples[20].id, "smollm2", 0.5), run_id=3)
    ws.live_snapshots()
    assert asked == [1, 1]
