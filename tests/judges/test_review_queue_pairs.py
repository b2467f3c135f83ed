"""The review queue of a pairwise run on pre-paired items (tests/data/judge_bench_pairs.json): the pairs the
judge gets wrong in both orders and the pairs whose verdict flips with the order are flagged, by pair id, with
the judge's verdict in each order and the humans' label; a run on other data gets no such flags."""

from __future__ import annotations

from pathlib import Path

from test_preference_run import config, dataset, run, scripted

from dialjudge.core.api.review import review_data
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.review_queue import FlagKind, build_queue


def test_pairs_wrong_in_both_orders_and_pairs_that_flip_are_queued(tmp_path: Path) -> None:
    ds = dataset()
    cfg = config(ds)
    with RunStore(tmp_path / "runs.db") as store:
        summary = run(cfg, ds, store, FakeBackend(score_fn=scripted))
        data = review_data(store, summary.run_id, lambda _: ds)
    # The scripted judge (test_preference_run.ORDERS) against the humans' majority:
    # p1 A,A vs A: right; p2 A,B: flips; p3 tie,tie vs tie: right; p4 A,A vs tie (split): wrong in both orders;
    # p5 B,B vs B: right; p6 A,A vs B: wrong in both orders.
    flagged = {case.item_id: [f.kind for f in case.flags] for case in data.queue
               if case.kind in (FlagKind.PAIR_WRONG, FlagKind.PAIR_FLIPS)}
    assert flagged == {"p2": [FlagKind.PAIR_FLIPS], "p4": [FlagKind.PAIR_WRONG], "p6": [FlagKind.PAIR_WRONG]}
    p6 = next(case for case in data.queue if case.item_id == "p6")
    assert p6.flags[0].text == "fake: A with A shown first, A with B shown first; humans: B"
    assert p6.flags[0].judge == "fake" and p6.reasons == "wrong in both orders"
    p2 = next(case for case in data.queue if case.item_id == "p2")
    assert p2.flags[0].text == "fake: A with A shown first, B with B shown first; humans: B"
    # every flagged id is a pair of the dataset, so the Review screen can show its prompt, replies and votes
    assert {case.item_id for case in data.queue} <= {ex.id for ex in ds.examples}
    # more urgent than the gaps between scores: wrong-both-orders pairs first, then the flips
    kinds = [case.kind for case in data.queue]
    assert kinds == sorted(kinds, key=list(FlagKind).index)
    assert kinds.index(FlagKind.PAIR_FLIPS) > max(i for i, k in enumerate(kinds) if k is FlagKind.PAIR_WRONG)


def test_without_a_preference_report_no_pair_is_flagged(tmp_path: Path) -> None:
    ds = dataset()
    cfg = config(ds)
    with RunStore(tmp_path / "runs.db") as store:
        summary = run(cfg, ds, store, FakeBackend(score_fn=scripted))
        judgments = store.judgments.load_judgments(summary.run_id)
    queue = build_queue(ds, judgments, cfg.quality)
    assert not [case for case in queue if case.kind in (FlagKind.PAIR_WRONG, FlagKind.PAIR_FLIPS)]
