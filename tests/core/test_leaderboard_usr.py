"""Issue 35's check on real data: on USR Topical-Chat Overall, the bundled judge (SmolLM2 on the first 48
items), simulated judges of agreement 0.9 and 0.3, four fake judges prompted for different aspects, the nine
reference metrics and the baselines (tests/usr_leaderboard.py builds the runs). The 0.9 and 0.3 judges fall in
different clusters; the fake judges (whose scores hash the prompt: no agreement) share one cluster with the
random scorer."""

from __future__ import annotations

import pytest

from dialjudge.core.api.leaderboards import LeaderboardRequest, columns_of, leaderboard, table_rows
from dialjudge.core.config import BUNDLED_JUDGE
from dialjudge.core.judges.store.run_store import RunStore
from usr_leaderboard import BUNDLED_ITEMS, FAKE_ASPECTS, UsrLeaderboardStore

pytestmark = pytest.mark.model


def test_usr_overall_clusters_the_simulated_judges_apart_and_the_fakes_with_chance(
        usr_leaderboard: UsrLeaderboardStore) -> None:
    built = usr_leaderboard
    # Within contexts (responses to one context ranked, as the USR annotators saw them). At the global level
    # the greedy walk splits the chance-level judges when the metrics sit above them: see the next test.
    with RunStore(built.store_path) as store:
        board = leaderboard(store, LeaderboardRequest("usr-topicalchat", "Overall", level="context", n_boot=300),
                            built.config)
    by_name = {row.name: row for row in board.rows}
    assert len(board.rows) == 7 + 9 + 2  # seven judges, nine metrics, two baselines
    assert board.clustering.reason is None
    good, poor = by_name[built.row_name("sim9")], by_name[built.row_name("sim3")]
    assert good.cluster is not None and poor.cluster is not None and good.cluster < poor.cluster
    chance = by_name["random scorer (seed 0)"].cluster
    assert {by_name[built.row_name(name)].cluster for name in FAKE_ASPECTS} == {chance}
    # The bundled judge is ranked on the items it judged (8 contexts of 6 responses), with its CI.
    bundled = by_name[built.row_name(BUNDLED_JUDGE)]
    assert (bundled.estimate.n_items, bundled.estimate.n_contexts) == (BUNDLED_ITEMS, BUNDLED_ITEMS // 6)
    assert bundled.rank is not None and bundled.cluster is not None and bundled.estimate.ci is not None

    # Ranks, CIs, the tie-calibrated accuracy and the bias card are printed for every row.
    column = {name: i for i, name in enumerate(columns_of(board))}
    for cells in table_rows(board)[:-1]:
        assert cells[0] != "–" and cells[1] != "–" and "[" in cells[3]
        assert cells[column["tie-cal. acc"]] != "–" and cells[column["r len"]] != "–"
        # Length partialled out of length itself is undefined; every other row has it.
        assert (cells[column["r | len"]] == "–") == (cells[2] == "response length")


def test_at_the_global_level_chance_judges_share_one_cluster_below_the_good_judge(
        usr_leaderboard: UsrLeaderboardStore) -> None:
    """The simulation's expectation at the global level (Pearson r over all items): the good judge alone above,
    the fake judges with the random scorer. With the nine metrics in the walk the greedy rule can split the
    chance-level judges (measured: BLEU-4, r 0.23, heads their cluster; fa and fc are significantly worse than it
    after Holm over 153 pairs, p 0.045 and 0.037, while fd, fb and the random scorer are not, p 0.090, 0.065,
    0.138): that is the rule's non-transitivity, not a difference between the fakes, which no test tells apart."""
    built = usr_leaderboard
    with RunStore(built.store_path) as store:
        board = leaderboard(store, LeaderboardRequest("usr-topicalchat", "Overall", metrics=False, n_boot=0),
                            built.config)
        with_metrics = leaderboard(store, LeaderboardRequest("usr-topicalchat", "Overall", n_boot=0), built.config)
    by_name = {row.name: row for row in board.rows}
    good, poor = by_name[built.row_name("sim9")], by_name[built.row_name("sim3")]
    chance = {by_name[built.row_name(name)].cluster for name in FAKE_ASPECTS} | {
        by_name["random scorer (seed 0)"].cluster}
    assert good.cluster == 1 and good.rank == 1
    assert sum(1 for row in board.rows if row.cluster == 1) == 1
    assert poor.cluster is not None and poor.cluster > 1
    assert len(chance) == 1 and None not in chance and chance != {poor.cluster}

    # With the metrics: whatever clusters the walk gives, no two chance-level evaluators differ significantly.
    ranked = [row.name for row in with_metrics.rows if row.rank is not None]
    name_of = dict(zip(with_metrics.clustering.order, ranked))
    chance_names = {built.row_name(name) for name in FAKE_ASPECTS} | {"random scorer (seed 0)"}
    among = [t for t in with_metrics.clustering.tests if {name_of[t.a], name_of[t.b]} <= chance_names]
    assert len(among) == 10 and all(t.adjusted_p >= 0.05 for t in among)
