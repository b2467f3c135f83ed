"""The leaderboard use case on runs judged here with fake judges and on an imported run: one row per
evaluator, its numbers against an independent computation, clusters, the bias card and the exports."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from dialjudge.core.api.imports import ImportRequest, import_scores
from dialjudge.core.api.leaderboards import (
    LeaderboardRequest,
    leaderboard,
    leaderboard_text,
    records_of,
    table_rows,
)
from dialjudge.core.api.runs import build_backends, execute_run
from dialjudge.core.config import Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError, DataError
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.model import Aggregation, Dataset
from dialjudge.core.planning import plan_run
from dialjudge.core.stats.human import human_labels


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return parse_config({"judges": {"fa": {"backend": "fake"}, "fb": {"backend": "fake", "seed": 3}}},
                        tmp_path / "dialjudge.toml")


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", Config(), remember=False)


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite3")


def judge_run(store: RunStore, dataset: Dataset, config: Config, judges: list[str], aspect: str = "coherence") -> int:
    plan = plan_run(dataset, config, template="adv-0to1", judges=judges, aspect=aspect)
    summary = execute_run(plan.config, dataset, store, build_backends(plan.config))
    assert summary.status == "finished"
    return summary.run_id


def imported_run(store: RunStore, tmp_path: Path, dataset: Dataset, name: str = "outside|judge & co_1") -> int:
    """An imported run whose scores are the humans' own mean plus seeded noise (a good judge)."""
    labels = human_labels(dataset.examples, "coherence", Aggregation.MEAN).values
    rng = np.random.default_rng(0)
    path = tmp_path / "outside.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["item_id", name])
        for ex in dataset.examples:
            writer.writerow([ex.id, f"{min(5.0, max(1.0, float(labels[ex.id]) + rng.normal(0, 0.3))):.2f}"])
    result = import_scores(store, ImportRequest(path, dataset="sample", quality="coherence", template="likert-1to5"),
                           Config())
    return result.run_id


def test_every_evaluator_gets_one_row_with_numbers_an_independent_computation_gives(
        store: RunStore, sample: Dataset, config: Config, tmp_path: Path) -> None:
    run_a = judge_run(store, sample, config, ["fa", "fb"])
    run_b = imported_run(store, tmp_path, sample)
    # Without the nine metrics: 6 evaluators, 15 pairs, so the exact test over 12 contexts (smallest p
    # 2/4096) can pass Holm's first threshold 0.05/15. With them (105 pairs) it cannot: see the next test.
    board = leaderboard(store, LeaderboardRequest("sample", "coherence", metrics=False, n_boot=200), config)

    names = [r.name for r in board.rows]
    assert sorted(names) == sorted([f"run {run_a} fa", f"run {run_a} fb", f"run {run_a} pool",
                                    f"run {run_b} outside|judge & co_1", "response length", "random scorer (seed 0)"])
    assert len(names) == len(set(names))
    assert {r.run_id for r in board.runs} == {run_a, run_b}
    assert next(r for r in board.runs if r.run_id == run_b).kind == "imported"
    # Ranked best first; ranks 1..n.
    values = [r.estimate.value for r in board.rows if r.rank is not None]
    assert values == sorted(values, reverse=True)
    assert [r.rank for r in board.rows if r.rank is not None] == list(range(1, len(values) + 1))

    # The imported judge's r is scipy's Pearson of its column against the mean labels.
    labels = human_labels(sample.examples, "coherence", Aggregation.MEAN).values
    row = next(r for r in board.rows if r.name == f"run {run_b} outside|judge & co_1")
    with store_scores(store, run_b) as column:
        ids = [i for i in column if column[i] is not None and labels.get(i) is not None]
        expected = stats.pearsonr([column[i] for i in ids], [float(labels[i]) for i in ids]).statistic
    assert row.estimate.value == pytest.approx(expected)
    assert (row.estimate.n_items, row.estimate.n_contexts) == (len(ids), 12)
    # The good imported judge is in cluster 1 alone of the random scorer's; the fake judges (hash scores)
    # are not told apart from the random scorer.
    random_row = next(r for r in board.rows if r.name.startswith("random scorer"))
    assert row.cluster == 1 and random_row.cluster is not None and random_row.cluster > 1
    assert next(r for r in board.rows if r.name == f"run {run_a} fa").cluster == random_row.cluster
    # The bias card: the humans' own length correlation is the same on every row of one item set.
    assert row.length is not None and row.length.human_length_r == pytest.approx(
        stats.pearsonr([float(labels[ex.id]) for ex in sample.examples],
                       [len(__import__("re").findall(r"\w+|[^\w\s]", ex.candidate)) for ex in sample.examples]
                       ).statistic)
    assert board.ceiling.kind == "ceiling" and board.ceiling.rank is None
    assert table_rows(board)[-1][2] == "human ceiling"


class store_scores:
    """The single judge column of a stored run (a context manager so the test reads as one block)."""

    def __init__(self, store: RunStore, run_id: int) -> None:
        from dialjudge.core.run_columns import run_scores

        scores, _ = run_scores(store, run_id)
        self.column = next(iter(scores.values()))

    def __enter__(self) -> dict:
        return dict(self.column)

    def __exit__(self, *exc: object) -> None:
        return None


def test_too_many_pairs_for_twelve_contexts_give_no_clusters_and_say_why(store: RunStore, sample: Dataset,
                                                                         config: Config, tmp_path: Path) -> None:
    judge_run(store, sample, config, ["fa", "fb"])
    imported_run(store, tmp_path, sample)
    board = leaderboard(store, LeaderboardRequest("sample", "coherence", n_boot=0), config)
    # 2 judges, the pool, the imported judge, 9 metrics, 2 baselines: 105 pairs, 0.05/105 < 2/4096.
    assert len(board.rows) == 15
    assert all(r.cluster is None for r in board.rows)
    assert board.clustering.reason is not None and "0.000488" in board.clustering.reason
    assert any(line.startswith("no clusters:") for line in board.method_lines())


def test_named_runs_only_and_bad_requests_refused(store: RunStore, sample: Dataset, config: Config) -> None:
    run_a = judge_run(store, sample, config, ["fa"])
    judge_run(store, sample, config, ["fb"])
    board = leaderboard(store, LeaderboardRequest("sample", "coherence", (run_a,), metrics=False, n_boot=0), config)
    assert [r.run_id for r in board.runs] == [run_a]
    with pytest.raises(DataError, match="no quality"):
        leaderboard(store, LeaderboardRequest("sample", "nonsense", n_boot=0), config)
    with pytest.raises(ConfigError, match="--level"):
        LeaderboardRequest("sample", "coherence", level="corpus")


@pytest.mark.parametrize("level", ["context", "system"])
def test_levels_name_their_statistic_and_extra_columns(store: RunStore, sample: Dataset, config: Config,
                                                       level: str) -> None:
    judge_run(store, sample, config, ["fa"])
    board = leaderboard(store, LeaderboardRequest("sample", "coherence", level=level, metrics=False, n_boot=100),
                        config)
    records = records_of(board)
    if level == "context":
        assert board.statistic == "mean per-context Kendall τ-b"
        assert all(r["tie_calibrated_accuracy"] is not None for r in records[:-1])
    else:
        assert board.statistic == "Pearson r over system means"
        assert all(r["soft_pairwise_accuracy"] is not None for r in records[:-1])
    assert any(level in line for line in board.method_lines())


def test_exports_escape_names_and_carry_the_method(store: RunStore, sample: Dataset, config: Config,
                                                   tmp_path: Path) -> None:
    run_id = imported_run(store, tmp_path, sample, name="=HYPERLINK(1)|x&y_z")
    board = leaderboard(store, LeaderboardRequest("sample", "coherence", metrics=False, n_boot=0), config)
    name = f"run {run_id} =HYPERLINK(1)|x&y_z"
    rows = list(csv.DictReader(io.StringIO(leaderboard_text(board, "csv"))))
    assert name in {r["evaluator"] for r in rows}
    assert all("Holm" in r["method"] for r in rows)
    assert {r["cluster"] for r in rows} and "ci_low" in rows[0]
    payload = json.loads(leaderboard_text(board, "json"))
    assert any("Holm" in line for line in payload["meta"]["method"])
    assert payload["meta"]["runs"][0]["template_hash"]
    markdown = leaderboard_text(board, "markdown")
    assert r"=HYPERLINK\(1\)\|x&amp;y\_z" in markdown and "Holm" in markdown
    latex = leaderboard_text(board, "latex")
    assert r"=HYPERLINK(1)|x\&y\_z" in latex



def test_a_prepaired_dataset_ranks_judges_by_agreement_with_the_humans_preference(store: RunStore) -> None:
    from dialjudge.core.imports import import_run
    from dialjudge.core.judges.post_run.preference_report import votes_of
    from dialjudge.core.loaders import load_dataset

    data = Path(__file__).resolve().parents[1] / "data"
    path = data / "judge_bench_pairs.json"
    pairs = load_dataset(path)
    run_id = import_run(store, data / "imports" / "pair_verdicts.csv", pairs).run_id
    board = leaderboard(store, LeaderboardRequest(str(path), "preference", n_boot=0), Config())
    by_name = {r.name: r for r in board.rows}
    assert board.level == "preference" and board.runs[0].run_id == run_id
    # alpha is right on all 6 pairs (hand-counted in tests/imports/test_import_verdicts.py); beta has one
    # asked order without a verdict ("maybe"), a failure.
    alpha, beta = by_name[f"run {run_id} alpha"], by_name[f"run {run_id} beta"]
    assert (alpha.estimate.value, alpha.estimate.n_items, alpha.rank) == (1.0, 6, 1)
    assert beta.failures == 1
    # The longer-reply baseline and the humans' own agreement, computed here from the votes.
    right = agree_pairs = 0
    shares = []
    for ex in pairs.examples:
        votes = votes_of(ex, "preference")
        top = max(set(votes), key=votes.count)
        label = "tie" if sum(votes.count(v) == votes.count(top) for v in set(votes)) > 1 else top
        la, lb = len(ex.pair.response_a.split()), len(ex.pair.response_b.split())
        right += label == ("tie" if la == lb else "A" if la > lb else "B")
        if len(votes) >= 2:
            same = sum(1 for i in range(len(votes)) for j in range(i + 1, len(votes)) if votes[i] == votes[j])
            shares.append(same / (len(votes) * (len(votes) - 1) / 2))
            agree_pairs += 1
    assert by_name["longer reply"].estimate.value == pytest.approx(right / len(pairs.examples))
    assert board.ceiling.estimate.value == pytest.approx(sum(shares) / len(shares))
    assert board.ceiling.estimate.n_items == agree_pairs
    # 4 evaluators, 6 pairs of them, 6 prompts: 2/64 > 0.05/6, so no clusters, and the reason.
    assert all(r.cluster is None for r in board.rows) and "0.0312" in (board.clustering.reason or "")
    assert any("conservative rule" in note for note in board.notes)
    assert table_rows(board)[-1][2] == "human ceiling"
