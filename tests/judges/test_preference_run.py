"""Pairwise runs on pre-paired items (tests/data/judge_bench_pairs.json) with a fake judge whose verdicts
are set per asked order: the report's numbers equal the hand-computed ones of tests/core/test_stats_preference.py;
one order halves the cost; resume, retry and rescore work as for any run."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from dialjudge.core.config import JudgeConfig
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.post_run.preference_report import (
    agreement_rows,
    pair_rows,
    pairs_to_review,
    preference_report,
)
from dialjudge.core.judges.post_run.rescore import RescoreSettings, rescore_run
from dialjudge.core.judges.post_run.retry import retry_run
from dialjudge.core.judges.prompts.templates import load_templates
from dialjudge.core.judges.run.config import JudgeSpec, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.events import RunSummary
from dialjudge.core.judges.run.pairwise import PairSetting, plan_pairs
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.loaders import load_dataset
from dialjudge.core.model import Dataset

DATA = Path(__file__).parent.parent / "data"
#: The judge's verdict by reply with A shown first, then with B shown first (as in the stats tests).
ORDERS = {"p1": ("A", "A"), "p2": ("A", "B"), "p3": ("tie", "tie"), "p4": ("A", "A"), "p5": ("B", "B"),
          "p6": ("A", "A")}
#: The verdict's point for the reply shown first (pairwise choices A, B, tie = 1, 0, 0.5).
POINT = {"first": 1.0, "second": 0.0, "tie": 0.5}


def scripted(item_id: str, prompt: str) -> float:
    """The fake judge's score for an asked order: ORDERS translated into positions."""
    first, _ = item_id.split(">")
    pair, side = first.rsplit("#", 1)
    verdict = ORDERS[pair][0 if side == "A" else 1]
    if verdict == "tie":
        return POINT["tie"]
    return POINT["first"] if verdict == side else POINT["second"]


def dataset() -> Dataset:
    return load_dataset(DATA / "judge_bench_pairs.json")


def config(ds: Dataset, setting: PairSetting | None = None, mode: ScoringMode = ScoringMode.GENERATE) -> RunConfig:
    setting = setting or PairSetting()
    return RunConfig.build(ds, load_templates()["pairwise-plain"], [JudgeSpec.of(JudgeConfig(name="fake",
                                                                                             backend="fake"))],
                           mode=mode, pairs=setting)


def run(cfg: RunConfig, ds: Dataset, store: RunStore, backend: FakeBackend) -> RunSummary:
    return asyncio.run(RunEngine(cfg, ds, {"fake": backend}, store).run())


def test_each_pair_is_asked_in_both_orders_by_default_and_once_with_one_order() -> None:
    ds = dataset()
    both = plan_pairs(ds.examples, PairSetting())
    assert both.pairs == 6 and len(both.asked) == 12
    assert {p.item_id for p in both.asked if p.context == "p1"} == {"p1#A>p1#B", "p1#B>p1#A"}
    one = plan_pairs(ds.examples, PairSetting(both_orders=False, seed=2))
    assert one.pairs == 6 and len(one.asked) == 6
    firsts = {p.first.rsplit("#", 1)[1] for p in one.asked}
    assert firsts == {"A", "B"}  # the order is drawn, not always the file's


def test_a_scripted_judge_gives_the_hand_computed_report(tmp_path: Path) -> None:
    ds = dataset()
    cfg = config(ds)
    with RunStore(tmp_path / "runs.db") as store:
        summary = run(cfg, ds, store, FakeBackend(score_fn=scripted))
        report = preference_report(cfg, ds, store.judgments.load_judgments(summary.run_id), n_boot=0)
    judge = report.judges["fake"]
    assert report.n_pairs == 6
    assert (judge.with_ties.n, judge.with_ties.agree) == (6, 3) and judge.with_ties.kappa == pytest.approx(4 / 13)
    assert (judge.without_ties.n, judge.without_ties.agree) == (3, 2) and judge.without_ties.kappa == pytest.approx(0.4)
    assert judge.without_ties.excluded == {"humans tie": 2, "judge tie": 1}
    assert (judge.order.both_orders, judge.order.flips, judge.order.decisive, judge.order.first_wins) == (6, 1, 10, 6)
    assert (judge.longer.n, judge.longer.longer_wins) == (3, 0)
    humans = report.humans
    assert (humans.voted_ties, humans.split_ties, humans.several_votes) == (1, 1, 5)
    assert (humans.longer.n, humans.longer.longer_wins) == (4, 2)
    assert humans.with_ties.percent == pytest.approx(2 / 5) and humans.without_ties.kappa == pytest.approx(1 / 6)
    assert set(judge.categories) == {"knowledge", "language", "math"}
    row = agreement_rows(report)[0]
    assert row[:3] == ("fake", "6", "66.7% (2/3)") and row[4] == "50.0% (3/6)" and row[7] == "16.7% (1/6)"
    assert pair_rows(report, "fake")[1] == ("p2", "B", "A", "B", "tie")
    assert pair_rows(report, "fake")[3] == ("p4", "tie (split)", "A", "A", "A")
    # p2 flips; p4 (humans tie) and p6 (humans B) get A in both orders.
    assert pairs_to_review(report, "fake") == [("p2", "flips with the order"), ("p4", "wrong in both orders"),
                                               ("p6", "wrong in both orders")]


def test_probabilities_give_the_margin_the_tie_band_is_chosen_on(tmp_path: Path) -> None:
    ds = dataset()
    cfg = config(ds, mode=ScoringMode.LOGPROB)
    # 0.75: half the mass on the first reply, half on tie -> p(first) - p(second) = 0.5.
    with RunStore(tmp_path / "runs.db") as store:
        summary = run(cfg, ds, store, FakeBackend(score_fn=lambda item, prompt: 0.75))
        report = preference_report(cfg, ds, store.judgments.load_judgments(summary.run_id), n_boot=0)
    pairs = {p.pair: p for p in report.judges["fake"].pairs}
    assert pairs["p1"].a_first is not None and pairs["p1"].a_first.margin == pytest.approx(0.5)
    assert pairs["p1"].b_first is not None and pairs["p1"].b_first.margin == pytest.approx(-0.5)
    assert pairs["p1"].margin == pytest.approx(0.0)  # a pure position pull cancels over the two orders
    # The verdict is the most likely answer: first and tie are equally likely, so it names no winner.
    assert report.judges["fake"].order.flips == 0


def test_one_order_halves_the_cost_and_the_report_says_so(tmp_path: Path) -> None:
    ds = dataset()
    cfg = config(ds, PairSetting(both_orders=False, seed=2))
    with RunStore(tmp_path / "runs.db") as store:
        backend = FakeBackend(score_fn=scripted)
        summary = run(cfg, ds, store, backend)
        report = preference_report(cfg, ds, store.judgments.load_judgments(summary.run_id), n_boot=0)
    assert len(backend.requests) == 6
    judge = report.judges["fake"]
    assert (judge.order.one_order, judge.order.both_orders, judge.order.flips) == (6, 0, 0)
    assert judge.with_ties.n == 6


def test_resume_retry_and_rescore_work_on_pre_paired_runs(tmp_path: Path) -> None:
    ds = dataset()
    cfg = config(ds, mode=ScoringMode.LOGPROB)
    with RunStore(tmp_path / "runs.db") as store:
        flaky = run(cfg, ds, store, FakeBackend(score_fn=scripted, fail_every=5))
        assert flaky.failures == 2
        report = preference_report(cfg, ds, store.judgments.load_judgments(flaky.run_id), n_boot=0)
        assert report.judges["fake"].failed == 2
        retried = asyncio.run(retry_run(store, flaky.run_id, ds, {"fake": FakeBackend(score_fn=scripted)}))
        assert retried.failures == 0 and retried.backend_calls == 2
        table = store.judgments.load_judgments(flaky.run_id)
        again = preference_report(cfg, ds, table, n_boot=0)
        assert again.judges["fake"].failed == 0 and again.judges["fake"].with_ties.agree == 3
        rescored = rescore_run(store, flaky.run_id, ds, RescoreSettings(top_k=1))
        target = store.runs.get_run(rescored.run_id).run_config
        after = preference_report(target, ds, store.judgments.load_judgments(rescored.run_id), n_boot=0)
    assert after.judges["fake"].with_ties.agree == 3


def test_a_mixture_of_pairs_and_single_replies_is_refused() -> None:
    ds = dataset()
    from dialjudge.core.model import Example, Turn

    single = Example(id="s1", group_id="s1", context=(Turn("user", "q"),), candidate="an answer")
    with pytest.raises(ConfigError, match="mixes pre-paired items with single replies"):
        plan_pairs([*ds.examples, single], PairSetting())


def test_a_pointwise_run_rates_each_reply_and_implies_the_preference(tmp_path: Path) -> None:
    from dialjudge.core.judges.post_run.preference_report import implied_preference_report, is_pointwise_preference_run

    ds = dataset()
    cfg = RunConfig.build(ds, load_templates()["likert-1to5"], [JudgeSpec.of(JudgeConfig(name="fake", backend="fake"))],
                          mode=ScoringMode.GENERATE, aspect="overall")
    assert [ex.id for ex in cfg.select_items(ds)][:2] == ["p1#A", "p1#B"] and len(cfg.select_items(ds)) == 12
    assert is_pointwise_preference_run(cfg, ds)
    # Reply A of p1-p3 gets 5, reply B 1; p4-p6 get 3 for both replies.
    def score(item: str, prompt: str) -> float:
        pair, side = item.rsplit("#", 1)
        return 3.0 if pair in ("p4", "p5", "p6") else (5.0 if side == "A" else 1.0)

    with RunStore(tmp_path / "runs.db") as store:
        summary = run(cfg, ds, store, FakeBackend(score_fn=score))
        report = implied_preference_report(cfg, ds, store.judgments.load_judgments(summary.run_id), n_boot=0)
    judge = report.judges["fake"]
    assert [p.verdict for p in judge.pairs] == ["A", "A", "A", "tie", "tie", "tie"]
    # Humans A B tie tie B B: right on p1 and p4 -> 2/6; ties excluded leaves p1 (right) and p2 (wrong).
    assert (judge.with_ties.n, judge.with_ties.agree) == (6, 2)
    assert (judge.without_ties.n, judge.without_ties.agree) == (2, 1)
    assert judge.order.decisive == 0 and judge.order.both_orders == 0  # no order was asked
