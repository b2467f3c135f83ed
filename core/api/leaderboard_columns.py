"""The evaluators a leaderboard ranks, as score columns: every judge of every run (and a run's pool),
the reference-based metrics and two sentinel baselines.

* A pointwise run gives each judge's 0-1 scores (failed judgments: no score, counted) and, with
  several judges, their mean pool.
* A within-context pairwise run gives each judge's **win rate** per response: its share of won
  comparisons over every asked order (a verdict in each order counts, so a pair asked both ways is
  scored by net votes over both orders, as JUDGE-BENCH counts them), with the judge's flip rate under
  swap and its first-position share for the bias card.
* Runs on pre-paired replies have no per-response scores to rank against a rating: they are left out
  with a note (``runs compare`` and the preference report read them).
* Baselines: the response's length in tokens, and a seeded random scorer (uniform, one draw per item
  in the order of the item ids): an evaluator in the random scorer's cluster is not shown to be better
  than chance.
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..config import ModelPrice
from ..errors import ConfigError
from ..evaluation import missing_metric_reasons, reference_metric_scores
from ..judges.post_run.cost import RunUsage, run_usage
from ..judges.post_run.mass import summarize_masses
from ..judges.post_run.pairwise_report import WIN_RATE_SUFFIX, pairwise_report
from ..judges.post_run.preference_report import is_pointwise_preference_run, is_preference_run
from ..judges.store.run_store import RunRecord, RunStore
from ..judges.types import Judgment
from ..model import Dataset
from ..run_columns import POOL, run_scores
from ..stats.baselines import LENGTH_EVALUATOR, length_scores

JUDGE, POOLED, METRIC, BASELINE, CEILING = "judge", "pool", "metric", "baseline", "ceiling"
RANDOM_EVALUATOR = "random scorer"


@dataclass(frozen=True)
class RunInfo:
    """Where a run's rows come from: its id, how it was made and its prompt's identity."""

    run_id: int
    kind: str
    template: str
    template_hash: str
    settings: str


@dataclass(frozen=True)
class Usage:
    """Per 1,000 items judged; None where unknown (no price, no tokens counted, no wall time)."""

    cost: float | None
    tokens: float | None
    seconds: float | None


@dataclass(frozen=True)
class Evaluator:
    name: str
    kind: str
    scores: Mapping[str, float | None]
    #: Judgments that failed (no score), left out of every figure of the row.
    failures: int = 0
    run: RunInfo | None = None
    flip_rate: float | None = None
    first_position: float | None = None
    usage: Usage | None = None
    #: Median probability mass on valid answers (probability modes only; None otherwise).
    valid_mass: float | None = None


def run_info(record: RunRecord) -> RunInfo:
    config = record.run_config
    judges = ", ".join(f"{spec.name}={spec.config.backend}:{spec.config.model or '-'}" for spec in config.judges)
    pairs = "" if config.pairs is None else (" pairwise " + ("both orders" if config.pairs.both_orders
                                                               else "one order"))
    settings = f"{config.mode.value}{pairs}; judges {judges}; subset {config.subset}"
    if config.limit:
        settings += f"; limit {config.limit}"
    return RunInfo(record.id, record.kind, config.template, config.template_hash, settings)


def _usage(usage: RunUsage, judge: str | None) -> Usage | None:
    """Per 1,000 items of one judge column (``judge``), or of the whole run (a pool)."""
    judges = [j for j in usage.judges if judge is None or j.judge == judge]
    judged = sum(j.judgments for j in judges)
    asked = sum(j.asked for j in judges)
    if not judged:
        return None
    costs = [j.cost for j in judges if j.cost is not None]
    tokens = sum(j.prompt_tokens + j.completion_tokens for j in judges)
    rate = usage.items_per_s(judge)
    return Usage(1000 * sum(costs) / judged if costs else None,
                 1000 * tokens / asked if asked and tokens else None,
                 1000 / rate if rate else None)


def run_evaluators(store: RunStore, record: RunRecord, dataset: Dataset, prices: Mapping[str, ModelPrice]
                   ) -> tuple[list[Evaluator], list[str]]:
    """The score columns of one stored run, and notes on what was left out."""
    config = record.run_config
    info = run_info(record)
    if is_preference_run(config, dataset) or is_pointwise_preference_run(config, dataset):
        return [], [f"run {record.id} judged pre-paired replies: no per-response scores to rank against a rating "
                    f"(dialjudge runs compare reads it)"]
    usage = run_usage(store, record, prices)
    masses = valid_masses(store, record.id)
    prefix = f"run {record.id} "
    if config.pairs is not None:
        report = pairwise_report(config, dataset, store.judgments.load_judgments(record.id))
        columns = report.score_columns()
        failures = report.column_failures()
        out = []
        for name, judge in report.judges.items():
            column = name + WIN_RATE_SUFFIX
            out.append(Evaluator(prefix + column, JUDGE, columns[column], failures[column], info,
                                 judge.position.flip_share, judge.position.first_win_share, _usage(usage, name),
                                 masses.get(name)))
        return out, []
    scores, failed = run_scores(store, record.id)
    return [Evaluator(prefix + name, POOLED if name == POOL else JUDGE, column, failed.get(name, 0), info,
                      usage=_usage(usage, None if name == POOL else name), valid_mass=masses.get(name))
            for name, column in scores.items()], []


def valid_masses(store: RunStore, run_id: int) -> dict[str, float]:
    """Per judge that scored from probabilities, the median mass its answers put on valid answers."""
    by_judge: dict[str, list[Judgment]] = {}
    for j in store.judgments.iter_judgments(run_id):
        by_judge.setdefault(j.judge, []).append(j)
    out = {}
    for judge, own in by_judge.items():
        summary = summarize_masses(own)
        if summary is not None and summary.measured:
            out[judge] = summary.median
    return out


def metric_evaluators(dataset: Dataset) -> tuple[list[Evaluator], list[str]]:
    """The reference-based metrics (0-1), and why any cannot be computed here."""
    scores, notes = reference_metric_scores(dataset)
    missing = missing_metric_reasons(None)
    notes = [*notes, *(f"{label}: {reason}" for label, reason in missing.items())]
    # A metric that scored nothing (no references: FED) is a note above, not a row of dashes.
    return [Evaluator(label, METRIC, column) for label, column in scores.items()
            if label not in missing and any(v is not None for v in column.values())], notes


def baseline_evaluators(dataset: Dataset, seed: int) -> list[Evaluator]:
    out = []
    if any(ex.candidate is not None for ex in dataset):
        out.append(Evaluator(LENGTH_EVALUATOR, BASELINE, length_scores(dataset.examples)))
    out.append(Evaluator(f"{RANDOM_EVALUATOR} (seed {seed})", BASELINE, random_scores(
        [ex.id for ex in dataset.examples], seed)))
    return out


def random_scores(item_ids: Sequence[str], seed: int) -> dict[str, float | None]:
    """One uniform draw per item, fixed by the seed and the item's id (not by the dataset's order)."""
    out: dict[str, float | None] = {}
    for item in item_ids:
        rng = np.random.default_rng([seed, zlib.crc32(item.encode("utf-8"))])
        out[item] = float(rng.random())
    return out


def runs_of(store: RunStore, dataset: Dataset, quality: str, run_ids: Sequence[int]) -> list[RunRecord]:
    """The runs named (each checked to be on ``dataset``), or every run on that dataset and quality."""
    if run_ids:
        records = [store.runs.get_run(i) for i in run_ids]
        for record in records:
            if record.run_config.dataset != dataset.name:
                raise ConfigError(f"run {record.id} judged {record.run_config.dataset}, not {dataset.name}")
        return records
    wanted = quality.lower()
    return [r for r in reversed(store.runs.list_runs()) if r.run_config.dataset == dataset.name and r.judgments
            and (r.run_config.quality or r.run_config.aspect or "").lower() == wanted]


__all__ = ["BASELINE", "CEILING", "Evaluator", "JUDGE", "METRIC", "POOLED", "RANDOM_EVALUATOR", "RunInfo", "Usage",
           "baseline_evaluators", "metric_evaluators", "random_scores", "run_evaluators", "run_info", "runs_of"]
