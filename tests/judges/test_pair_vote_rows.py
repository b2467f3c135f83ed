"""core.api.pair_vote_rows: each pair's row of a run on pre-paired items with its human votes counted, checked
against the votes of tests/data/judge_bench_pairs.json counted by hand."""

from __future__ import annotations

from pathlib import Path

from test_preference_run import config, dataset, run, scripted

from dialjudge.core.api.preferences import (
    PAIR_COLUMNS,
    PAIR_VOTE_COLUMNS,
    pair_rows,
    pair_vote_rows,
)
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.post_run.preference_report import preference_report
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.model import Dataset

#: p1 model_a ×3; p2 model_b ×2, tie; p3 tie ×2, model_a; p4 model_a, model_b; p5 model_b; p6 model_a, model_b ×2.
VOTES = {"p1": "3 A", "p2": "2 B, 1 tie", "p3": "1 A, 2 tie", "p4": "1 A, 1 B", "p5": "1 B", "p6": "1 A, 2 B"}


def test_each_pairs_row_counts_its_votes(tmp_path: Path) -> None:
    ds = dataset()
    cfg = config(ds)
    with RunStore(tmp_path / "runs.db") as store:
        summary = run(cfg, ds, store, FakeBackend(score_fn=scripted))
        report = preference_report(cfg, ds, store.judgments.load_judgments(summary.run_id), n_boot=0)
    assert (PAIR_COLUMNS[0], "votes", *PAIR_COLUMNS[1:]) == PAIR_VOTE_COLUMNS
    rows = pair_vote_rows(report, "fake", ds)
    assert {row[0]: row[1] for row in rows} == VOTES
    assert [(row[0], *row[2:]) for row in rows] == pair_rows(report, "fake")
    # p4's two votes disagree: the humans' label is a split tie, its votes say why
    assert rows[3][:3] == ("p4", "1 A, 1 B", "tie (split)")
    # a pair missing from the dataset given has no votes to count
    assert pair_vote_rows(report, "fake", Dataset(name=ds.name, examples=ds.examples[1:]))[0][1] == "–"
