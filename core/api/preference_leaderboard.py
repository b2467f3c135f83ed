"""The leaderboard of a dataset of pre-paired replies: every judge of every run on the pairs ranked by
its agreement with the humans' preference.

A judge's verdict on a pair is the conservative rule's (asked in both orders, a reply wins only if it
wins both times, else a tie; a pointwise run's is the reply it scored higher), and its agreement is the
share of pairs whose verdict equals the humans' majority label with ties counted (A, B or tie), with a
percentile bootstrap CI over prompts (over pairs when every prompt has one). Two baselines: the longer
reply (a tie when the lengths are equal) and a seeded random verdict (A or B). Pairs of evaluators are
tested on the pairs both judged by the paired permutation test of :mod:`core.stats.pair_verdict_test`,
Holm-adjusted and clustered by the greedy rule (:mod:`core.stats.significance_clusters`). The human
ceiling is the humans' own agreement: the chance that two votes on a pair agree.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence

import numpy as np

from ..config import Config
from ..judges.post_run.cost import run_usage
from ..judges.post_run.preference_report import human_side, preference_quality, votes_of
from ..judges.store.run_store import RunStore
from ..model import Dataset, Example
from ..stats.level_estimates import Estimate
from ..stats.pair_verdict_test import RULE_TEXT, TEST_TEXT, pair_verdict_test
from ..stats.pairwise import word_count
from ..stats.preference import TIE, A, B, JudgedPair, OrderVerdict, agreement, human_majority, longer_wins, order_stats
from ..stats.significance_clusters import PairTest, clusters_of_tests, permutations_for
from .leaderboard_columns import BASELINE, CEILING, JUDGE, RunInfo, Usage, _usage, run_info
from .leaderboard_types import PREFERENCE, Leaderboard, LeaderboardRequest, LeaderboardRow
from .pair_runs import judged_pairs, judges_pairs

STATISTIC = "agreement with the humans' preference, ties counted"
LONGER_EVALUATOR = "longer reply"


def is_prepaired(dataset: Dataset) -> bool:
    return any(ex.pair is not None for ex in dataset.examples)


def preference_leaderboard(store: RunStore, dataset: Dataset, request: LeaderboardRequest, config: Config,
                           run_ids: Sequence[int]) -> Leaderboard:
    items = [ex for ex in dataset.examples if ex.pair is not None]
    quality = preference_quality(items, request.quality if request.quality in {q for ex in items for q in ex.ratings}
                                 else None)
    skeleton = _skeleton(items, quality)
    evaluators: list[tuple[str, str, list[JudgedPair], int, RunInfo | None, Usage | None]] = []
    notes: list[str] = []
    records = [store.runs.get_run(i) for i in run_ids] if run_ids else \
        [r for r in reversed(store.runs.list_runs()) if r.run_config.dataset == dataset.name and r.judgments]
    for record in records:
        run_config = record.run_config
        if not judges_pairs(run_config, dataset):
            notes.append(f"run {record.id} did not judge the pairs: left out")
            continue
        spent = run_usage(store, record, config.prices)
        for judge, pairs in judged_pairs(run_config, dataset, store.judgments.load_judgments(record.id), quality).items():
            # Failed: asked (or rated) without a verdict; a pair the run never asked is not a failure.
            failed = sum(1 for p in pairs if p.verdict is None and (p.orders or p.direct is not None))
            evaluators.append((f"run {record.id} {judge}", JUDGE, list(pairs), failed, run_info(record),
                               _usage(spent, judge)))
    evaluators.append((LONGER_EVALUATOR, BASELINE, [_with(p, _longer(p)) for p in skeleton], 0, None, None))
    evaluators.append((f"random verdict (seed {request.seed})", BASELINE,
                       [_with(p, _random(p, request.seed)) for p in skeleton], 0, None, None))

    shares = [agreement(pairs, ties=True, n_boot=request.n_boot, seed=request.seed) for _, _, pairs, *_ in evaluators]
    values = [s.share if s.share is not None else math.nan for s in shares]
    order = tuple(sorted((i for i, v in enumerate(values) if math.isfinite(v)), key=lambda i: -values[i]))
    pairs_of = [(i, j) for pos, i in enumerate(order) for j in order[pos + 1:]]
    permutations = permutations_for(len(pairs_of), request.alpha)
    raw = []
    for n, (i, j) in enumerate(pairs_of):
        test = pair_verdict_test(evaluators[j][2], evaluators[i][2], permutations=permutations, n_boot=0,
                                 seed=request.seed + n)
        raw.append(PairTest(i, j, test.agreement.difference if test.agreement.difference is not None else math.nan,
                            test.p_value, math.nan, test.agreement.n, test.units, test.n_assignments, test.exact,
                            None if test.agreement.n else "no pair judged by both"))
    clustering = clusters_of_tests(order, raw, len(evaluators), alpha=request.alpha, permutations=permutations,
                                   test_text=TEST_TEXT, units="prompts")
    rows = []
    for index, ((name, kind, pairs, failed, info, usage), share) in enumerate(zip(evaluators, shares)):
        order_figures = order_stats(pairs)
        longer = longer_wins(pairs, humans=False)
        estimate = Estimate(values[index], share.ci, share.n, share.units if share.unit == "prompts" else share.n,
                            None if share.n else "no pair with a verdict and a human label")
        rows.append(LeaderboardRow(
            name, kind, estimate, clustering.order.index(index) + 1 if index in clustering.order else None,
            clustering.clusters[index], failed, info,
            flip_rate=order_figures.flips / order_figures.both_orders if order_figures.both_orders else None,
            first_position=(order_figures.first_wins / order_figures.decisive if order_figures.decisive else None),
            usage=usage, longer_wins=longer.share))
    rows.sort(key=lambda r: (r.rank is None, r.rank or 0))
    humans = human_side(items, quality)
    ceiling = LeaderboardRow("human ceiling", CEILING, Estimate(
        humans.with_ties.percent if humans.with_ties.percent is not None else math.nan, None, humans.with_ties.pairs,
        humans.with_ties.pairs, None if humans.with_ties.pairs else "no pair has two votes"),
        longer_wins=humans.longer.share)
    notes.append(f"rule: {RULE_TEXT}")
    return Leaderboard(dataset.name, quality, PREFERENCE, STATISTIC, tuple(rows), ceiling, clustering,
                       tuple({r[4].run_id: r[4] for r in evaluators if r[4] is not None}.values()), request.n_boot,
                       tuple(dict.fromkeys(notes)))


def _skeleton(items: Sequence[Example], quality: str) -> list[JudgedPair]:
    """Every pair with the humans' label and the two replies' lengths, without a verdict."""
    out = []
    for ex in items:
        assert ex.pair is not None  # the items are the pre-paired ones
        majority = human_majority(votes_of(ex, quality))
        out.append(JudgedPair(ex.id, ex.group_id, majority.label, word_count(ex.pair.response_a),
                              word_count(ex.pair.response_b), human_split=majority.split))
    return out


def _with(pair: JudgedPair, verdict: OrderVerdict) -> JudgedPair:
    return JudgedPair(pair.pair, pair.prompt, pair.human, pair.length_a, pair.length_b, human_split=pair.human_split,
                      direct=verdict)


def _longer(pair: JudgedPair) -> OrderVerdict:
    if pair.length_a == pair.length_b:
        return OrderVerdict(TIE)
    return OrderVerdict(A if pair.length_a > pair.length_b else B)


def _random(pair: JudgedPair, seed: int) -> OrderVerdict:
    """A or B, fixed by the seed and the pair's id (not by the order of the pairs)."""
    draw = np.random.default_rng([seed, zlib.crc32(pair.pair.encode("utf-8"))]).random()
    return OrderVerdict(A if draw < 0.5 else B)


__all__ = ["LONGER_EVALUATOR", "STATISTIC", "is_prepaired", "preference_leaderboard"]
