"""Issue 35's check on real data: on USR Topical-Chat Overall, simulated judges of agreement 0.9 and 0.3,
four fake judges prompted for different aspects, the nine reference metrics and the baselines. The 0.9 and
0.3 judges fall in different clusters; the fake judges (whose scores hash the prompt: no agreement) share
one cluster with the random scorer. The bundled model is left out: judging 360 items with it on the
suite's shared cores takes many minutes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialjudge.core.api.leaderboards import LeaderboardRequest, columns_of, leaderboard, table_rows
from dialjudge.core.api.runs import build_backends, execute_run
from dialjudge.core.config import parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.planning import plan_run

FAKE_ASPECTS = {"fa": "overall", "fb": "engagingness", "fc": "naturalness", "fd": "groundedness"}


def test_usr_overall_clusters_the_simulated_judges_apart_and_the_fakes_with_chance(
        shared_data: Path, tmp_path: Path) -> None:
    if not (shared_data / "usr" / "usr_topical_chat.json").is_file():
        pytest.skip("usr/usr_topical_chat.json is absent from the shared data folder")
    simulated = {f"sim{int(a * 10)}": {"backend": "fake", "options": {"agreement": a, "dataset": "usr-topicalchat",
                                                                       "quality": "Overall"}} for a in (0.9, 0.3)}
    fakes = {name: {"backend": "fake", "seed": seed} for seed, name in enumerate(FAKE_ASPECTS)}
    config = parse_config({"data": {"dirs": [str(shared_data)]}, "judges": {**simulated, **fakes}},
                          tmp_path / "dialjudge.toml")
    dataset = open_dataset("usr-topicalchat", config, remember=False)
    store = RunStore(tmp_path / "runs.sqlite3")
    runs = {}
    for judge in [*simulated, *fakes]:
        plan = plan_run(dataset, config, template="likert-1to5", judges=[judge],
                        aspect=FAKE_ASPECTS.get(judge, "overall"), quality="Overall")
        summary = execute_run(plan.config, dataset, store, build_backends(plan.config))
        assert summary.status == "finished"
        runs[judge] = summary.run_id

    # Within contexts (responses to one context ranked, as the USR annotators saw them). At the global level
    # the chance-level judges split across the greedy walk: with Holm over 136 pairs, a Pearson difference
    # of about 0.21 on 300 items (BLEU-4 against a fake judge) is not significant while 0.26 is.
    board = leaderboard(store, LeaderboardRequest("usr-topicalchat", "Overall", level="context", n_boot=300),
                        config)
    by_name = {row.name: row for row in board.rows}
    assert len(board.rows) == 6 + 9 + 2  # six judges, nine metrics, two baselines
    assert board.clustering.reason is None
    good, poor = by_name[f"run {runs['sim9']} sim9"], by_name[f"run {runs['sim3']} sim3"]
    assert good.cluster is not None and poor.cluster is not None and good.cluster < poor.cluster
    chance = by_name["random scorer (seed 0)"].cluster
    assert {by_name[f"run {runs[name]} {name}"].cluster for name in FAKE_ASPECTS} == {chance}

    # Ranks, CIs, the tie-calibrated accuracy and the bias card are printed for every row.
    column = {name: i for i, name in enumerate(columns_of(board))}
    for cells in table_rows(board)[:-1]:
        assert cells[0] != "–" and cells[1] != "–" and "[" in cells[3]
        assert cells[column["tie-cal. acc"]] != "–" and cells[column["r len"]] != "–"
        # Length partialled out of length itself is undefined; every other row has it.
        assert (cells[column["r | len"]] == "–") == (cells[2] == "response length")
