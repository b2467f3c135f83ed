"""Comparing two stored runs, one way for the command line and the Runs screen's dialog.

The subsets compared, the paired bootstrap and its seed come from the
:class:`CompareRequest`; left empty, the subsets are the whole set and (where it
holds both) its open and closed parts, in both front ends.
"""

from __future__ import annotations

from ..compare import RunComparison, compare_runs
from ..config import Config
from ..evaluation import split_subsets
from ..judges.store.run_store import RunStore
from ..model import Dataset
from .requests import CompareRequest
from .stored import dataset_of_run, same_dataset


def compare(store: RunStore, request: CompareRequest, app_config: Config | None = None, *,
            current: Dataset | None = None) -> RunComparison:
    """Correlation deltas, paired comparisons with verdicts, configuration changes and the prompt diff."""
    config_a = store.runs.get_run(request.run_a).run_config
    config_b = store.runs.get_run(request.run_b).run_config
    same_dataset(config_a, config_b, request.run_a, request.run_b)
    dataset = dataset_of_run(config_a, app_config, current=current)
    subsets = list(request.subsets) or split_subsets(dataset, "all")
    return compare_runs(store, request.run_a, request.run_b, dataset=dataset,
                        qualities=list(request.qualities) or None, subsets=subsets, n_boot=0, seed=request.seed,
                        paired_boot=request.paired_boot)
