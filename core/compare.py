"""Comparing two runs: how the correlations moved, and what changed in the prompt.

A user edits a template or persona, reruns, and wants to see, per judge, quality
and subset, whether agreement with the humans went up; and exactly which lines
of the prompt they changed. Runs are matched on judge labels; a judge present in
only one run is listed with the other side empty.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .dataset_catalogue import open_dataset
from .evaluation import evaluate
from .judges.run.config import RunConfig
from .judges.store.run_store import RunStore
from .model import Aggregation, Dataset
from .run_columns import run_scores
from .stats.human import human_labels
from .stats.pair_verdict_test import PairVerdictTest
from .stats.paired import PairedComparison, paired_comparison
from .subsets import Subset

COEFFICIENTS = ("pearson", "spearman", "kendall")


@dataclass(frozen=True)
class Delta:
    evaluator: str
    quality: str
    subset: str
    coefficient: str
    before: float | None
    after: float | None
    n_before: int
    n_after: int

    @property
    def change(self) -> float | None:
        if self.before is None or self.after is None:
            return None
        return self.after - self.before


@dataclass
class RunComparison:
    run_a: int
    run_b: int
    dataset: str
    deltas: list[Delta]
    prompt_diff: list[str]
    config_changes: list[tuple[str, Any, Any]] = field(default_factory=list)
    #: Paired bootstrap comparisons (B minus A on the items both scored), per judge x quality x subset.
    paired: list[PairedComparison] = field(default_factory=list)
    #: Runs that judged pairs: each judge's verdicts compared on the pairs both judged (B against A).
    pair_verdicts: list[PairVerdictTest] = field(default_factory=list)
    #: Either run judged pairs (pairwise, or pre-paired replies): no correlation deltas, ``pair_verdicts`` instead.
    on_pairs: bool = False

    def to_records(self) -> list[dict[str, Any]]:
        return [{"evaluator": d.evaluator, "quality": d.quality, "subset": d.subset, "coefficient": d.coefficient,
                 f"run_{self.run_a}": d.before, f"run_{self.run_b}": d.after, "delta": d.change,
                 "n_a": d.n_before, "n_b": d.n_after} for d in self.deltas]


@dataclass(frozen=True)
class ScoredRun:
    """One stored run as a comparison needs it, read once: its id, configuration and judge columns."""

    run_id: int
    config: RunConfig
    scores: Mapping[str, Mapping[str, float | None]]
    failures: Mapping[str, Any]


def read_scored_run(store: RunStore, run_id: int) -> ScoredRun:
    """Run ``run_id``'s configuration and judge columns, read from the store once."""
    scores, failures = run_scores(store, run_id)
    return ScoredRun(run_id, RunConfig.from_dict(store.runs.get_run(run_id).config), scores, failures)


def compare_runs(store: RunStore, run_a: int, run_b: int, *, dataset: Dataset | None = None,
                 qualities: Sequence[str] | None = None, subsets: Sequence[str] = ("all",),
                 n_boot: int = 0, seed: int = 0, paired_boot: int = 2000) -> RunComparison:
    """:func:`compare_scored_runs` of runs ``run_a`` and ``run_b`` as stored (their dataset opened
    again when none is given)."""
    a, b = read_scored_run(store, run_a), read_scored_run(store, run_b)
    if dataset is None:
        dataset = open_dataset(a.config.dataset_path or a.config.dataset, remember=False)
    return compare_scored_runs(a, b, dataset, qualities=qualities, subsets=subsets, n_boot=n_boot, seed=seed,
                               paired_boot=paired_boot)


def compare_scored_runs(run_a: ScoredRun, run_b: ScoredRun, dataset: Dataset, *,
                        qualities: Sequence[str] | None = None, subsets: Sequence[str] = ("all",),
                        n_boot: int = 0, seed: int = 0, paired_boot: int = 2000) -> RunComparison:
    """Correlation deltas per judge x quality x subset, a unified diff of the templates and personas,
    the configuration keys that differ, and (``paired_boot`` > 0) paired bootstrap comparisons."""
    config_a, config_b = run_a.config, run_b.config
    chosen = list(qualities) if qualities else [q for q in {config_a.quality, config_b.quality} if q]
    scores_a, fail_a = run_a.scores, run_a.failures
    scores_b, fail_b = run_b.scores, run_b.failures

    deltas: list[Delta] = []
    for subset in subsets:
        rec_a = _index(evaluate(dataset, qualities=chosen, subset=subset, extra_scores=scores_a, failures=fail_a,
                                include_metrics=False, n_boot=n_boot, seed=seed).records)
        rec_b = _index(evaluate(dataset, qualities=chosen, subset=subset, extra_scores=scores_b, failures=fail_b,
                                include_metrics=False, n_boot=n_boot, seed=seed).records)
        for key in sorted(set(rec_a) | set(rec_b), key=lambda k: (k[0] == "human ceiling", k)):
            evaluator, quality = key
            if evaluator == "human ceiling":
                continue
            a, b = rec_a.get(key, {}), rec_b.get(key, {})
            for coefficient in COEFFICIENTS:
                deltas.append(Delta(evaluator, quality, subset, coefficient, a.get(coefficient), b.get(coefficient),
                                    int(a.get("n") or 0), int(b.get("n") or 0)))
    paired = []
    id_a, id_b = run_a.run_id, run_b.run_id
    if paired_boot:
        for subset in subsets:
            for quality in chosen:
                matched = _matched_judges(scores_a, scores_b)
                for judge_a, judge_b in matched:
                    # Name the judges only when the runs' judges differ or there are several.
                    plain = len(matched) == 1 and judge_a == judge_b
                    paired.append(compare_evaluators(
                        dataset, scores_a[judge_a], scores_b[judge_b], quality, subset=subset,
                        name_a=f"run {id_a}" if plain else f"run {id_a} {judge_a}",
                        name_b=f"run {id_b}" if plain else f"run {id_b} {judge_b}",
                        n_boot=paired_boot, seed=seed))
    return RunComparison(id_a, id_b, dataset.name, deltas, prompt_diff(config_a, config_b, id_a, id_b),
                         config_changes(config_a.to_dict(), config_b.to_dict()), paired)


def compare_evaluators(dataset: Dataset, scores_a: Mapping[str, float | None], scores_b: Mapping[str, float | None],
                       quality: str, *, subset: str = "all", name_a: str = "A", name_b: str = "B",
                       n_boot: int = 2000, seed: int = 0, confidence: float = 0.95) -> PairedComparison:
    """Two evaluator columns (two runs, two judges of one run, a judge and a metric) against the
    humans' mean label of ``quality`` on the subset's items, paired over contexts."""

    selected = Subset(subset).select(dataset.examples)
    labels = human_labels(selected, quality, Aggregation.MEAN).values
    human = {item: (None if value is None else float(value)) for item, value in labels.items()}
    groups = {ex.id: ex.group_id for ex in selected}
    result = paired_comparison(scores_a, scores_b, human, groups, name_a=name_a, name_b=name_b, quality=quality,
                               n_boot=n_boot, seed=seed, confidence=confidence)
    return replace(result, subset=subset)


def _matched_judges(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Judges with the same label in both runs; else, for two single-judge runs, the two judges."""
    shared = [name for name in a if name in b]
    if shared:
        return [(name, name) for name in shared]
    if len(a) == 1 and len(b) == 1:
        return [(next(iter(a)), next(iter(b)))]
    return []


def prompt_diff(a: RunConfig, b: RunConfig, run_a: int, run_b: int) -> list[str]:
    """A unified diff of everything that shapes the prompt: template text and persona texts."""
    def prompt_source(config: RunConfig) -> list[str]:
        lines = config.template_text.splitlines()
        for persona in config.personas:
            if persona is not None:
                lines += ["", f"# persona {persona.name}", *persona.text.splitlines()]
        return lines

    return list(difflib.unified_diff(prompt_source(a), prompt_source(b), fromfile=f"run {run_a}: {a.template_label}",
                                     tofile=f"run {run_b}: {b.template_label}", lineterm=""))


def config_changes(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any, Any]]:
    """Flattened keys whose values differ (the template text is covered by the prompt diff)."""
    out: list[tuple[str, Any, Any]] = []
    for key in sorted(set(a) | set(b)):
        path = f"{prefix}{key}"
        if path in ("template.text", "name"):
            continue
        va, vb = a.get(key), b.get(key)
        if isinstance(va, Mapping) and isinstance(vb, Mapping):
            out.extend(config_changes(va, vb, path + "."))
        elif va != vb:
            out.append((path, va, vb))
    return out


def _index(records: Sequence[Mapping[str, Any]]) -> dict[tuple[str, str], Mapping[str, Any]]:
    return {(str(r["evaluator"]), str(r["quality"])): r for r in records}
