"""Comparing two stored runs, one way for the command line and the Runs screen's dialog.

The subsets compared, the paired bootstrap and its seed come from the
:class:`CompareRequest`; left empty, the subsets are the whole set and (where it
holds both) its open and closed parts, in both front ends.
"""

from __future__ import annotations

from ..compare import RunComparison, compare_scored_runs, config_changes, prompt_diff, read_scored_run
from ..config import Config
from ..evaluation import split_subsets
from ..judges.run.config import RunConfig
from ..judges.store.run_store import RunStore
from ..model import Dataset
from ..run_columns import run_scores
from .pair_runs import compare_pair_runs, implied_pairs, judged_pairs, judges_pairs
from .requests import CompareRequest
from .stored import dataset_of_run, same_dataset


def compare(store: RunStore, request: CompareRequest, app_config: Config | None = None, *,
            current: Dataset | None = None) -> RunComparison:
    """Correlation deltas, paired comparisons with verdicts, configuration changes and the prompt diff."""
    # Each run's record and scores are read once, here; the comparison works on that data.
    run_a, run_b = read_scored_run(store, request.run_a), read_scored_run(store, request.run_b)
    same_dataset(run_a.config, run_b.config, request.run_a, request.run_b)
    dataset = dataset_of_run(run_a.config, app_config, current=current)
    if judges_pairs(run_a.config, dataset) or judges_pairs(run_b.config, dataset):
        return _compare_pair_runs(store, request, run_a.config, run_b.config, dataset)
    subsets = list(request.subsets) or split_subsets(dataset, "all")
    return compare_scored_runs(run_a, run_b, dataset, qualities=list(request.qualities) or None, subsets=subsets,
                               n_boot=0, seed=request.seed, paired_boot=request.paired_boot)


def _compare_pair_runs(store: RunStore, request: CompareRequest, config_a: RunConfig, config_b: RunConfig,
                       dataset: Dataset) -> RunComparison:
    """Runs that judged pairs have no per-item scores to correlate: their verdicts are compared on the
    pairs both judged (``pair_verdicts``), beside the prompt diff and the settings that changed."""
    quality = request.qualities[0] if request.qualities else None
    on_pairs_a, on_pairs_b = judges_pairs(config_a, dataset), judges_pairs(config_b, dataset)
    pairs_a = judged_pairs(config_a, dataset, store.judgments.load_judgments(request.run_a), quality) if on_pairs_a else {}
    pairs_b = judged_pairs(config_b, dataset, store.judgments.load_judgments(request.run_b), quality) if on_pairs_b else {}
    # A run that scored responses one by one meets a pairwise run on its pairs: the verdicts its scores imply.
    if not on_pairs_a:
        pairs_a = implied_pairs(run_scores(store, request.run_a, with_pool=False)[0], next(iter(pairs_b.values()), []))
    if not on_pairs_b:
        pairs_b = implied_pairs(run_scores(store, request.run_b, with_pool=False)[0], next(iter(pairs_a.values()), []))
    comparison = RunComparison(request.run_a, request.run_b, dataset.name, [],
                               prompt_diff(config_a, config_b, request.run_a, request.run_b),
                               config_changes(config_a.to_dict(), config_b.to_dict()), on_pairs=True)
    comparison.pair_verdicts = compare_pair_runs(pairs_a, pairs_b, request.run_a, request.run_b,
                                                 n_boot=request.paired_boot, seed=request.seed)
    return comparison
