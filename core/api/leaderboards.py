"""Many evaluators at once: a leaderboard with significance clusters, one level at a time, and a bias card.

``dialjudge leaderboard`` and the app's view call :func:`leaderboard` (through the session) with a
:class:`LeaderboardRequest`; the rows, records and export texts are laid out here so every front end
shows the same. The statistics are :mod:`core.stats.meta_levels` (the levels),
:mod:`core.stats.level_estimates` (each row's value, CI and n, the ceiling) and
:mod:`core.stats.significance_clusters` (the pair tests, Holm and the cluster rule).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..config import Config
from ..dataset_catalogue import open_dataset
from ..errors import ConfigError, DataError
from ..evaluation import compared_items, resolve_quality
from ..format import interval_text, number_text, percent_text
from ..judges.post_run.cost import money_text
from ..judges.store.run_store import RunStore
from ..model import Aggregation
from ..report import records_text
from ..stats.baselines import LengthBias, length_bias, length_scores
from ..stats.human import annotator_matrix, human_labels
from ..stats.jury import JuryMethod
from ..stats.level_estimates import Estimate, annotator_ceiling, estimate
from ..stats.meta_levels import (
    CONTEXT,
    LEVELS,
    SYSTEM,
    Items,
    level_named,
    scored,
    system_agreement,
    tie_calibrated_pairwise_accuracy,
)
from ..stats.significance_clusters import Clustering, cluster_evaluators
from .jury import jury_evaluator
from .leaderboard_columns import (
    CEILING,
    JUDGE,
    Evaluator,
    RunInfo,
    Usage,
    baseline_evaluators,
    metric_evaluators,
    run_evaluators,
    runs_of,
)
from .leaderboard_types import LEVEL_TITLES, PREFERENCE, Leaderboard, LeaderboardRequest, LeaderboardRow
from .preference_leaderboard import is_prepaired, preference_leaderboard

FORMATS = ("table", "csv", "json", "markdown", "latex")
def leaderboard(store: RunStore, request: LeaderboardRequest, app_config: Config | None = None) -> Leaderboard:
    """Every evaluator of the request ranked at its level, with CIs, clusters and the bias card."""
    config = app_config or Config()
    dataset = open_dataset(request.dataset, config, remember=False)
    if is_prepaired(dataset):
        return preference_leaderboard(store, dataset, request, config, request.runs)
    quality = resolve_quality(dataset, request.quality)
    scale = dataset.qualities.get(quality)
    if scale is None:
        raise DataError(f"{dataset.name} has no quality {request.quality!r} (qualities: {', '.join(dataset.qualities)})")
    if not scale.is_numeric:
        raise DataError(f"{dataset.name}: {quality} is not a numeric rating; a leaderboard ranks agreement with one")
    notes: list[str] = []
    evaluators: list[Evaluator] = []
    runs = runs_of(store, dataset, quality, request.runs)
    for record in runs:
        found, run_notes = run_evaluators(store, record, dataset, config.prices)
        evaluators.extend(found)
        notes.extend(run_notes)
    for members in request.juries:
        evaluators.append(jury_evaluator(store, members, JuryMethod(request.jury_method), dataset, quality, config,
                                         seed=request.seed))
    if request.metrics:
        found, metric_notes = metric_evaluators(dataset)
        evaluators.extend(found)
        notes.extend(metric_notes)
    evaluators.extend(baseline_evaluators(dataset, request.seed))

    labels = human_labels(dataset.examples, quality, Aggregation.MEAN).values
    rated = [ex for ex in dataset.examples if _finite(labels.get(ex.id))]
    if not rated:
        raise DataError(f"{dataset.name}: no item has a {quality} rating")
    ids = [ex.id for ex in rated]
    items = Items.build([float(labels[i]) for i in ids], [ex.group_id for ex in rated],  # type: ignore[arg-type]
                        [ex.system for ex in rated])
    level = level_named(request.level)
    why_not = level.applies(items)
    if why_not:
        raise DataError(f"{dataset.name}: no {request.level}-level leaderboard: {why_not}")
    columns = [np.array([_float(e.scores.get(i)) for i in ids]) for e in evaluators]
    estimates = [estimate(level, x, items, n_boot=request.n_boot, seed=request.seed) for x in columns]
    clustering = cluster_evaluators(level, columns, [e.value for e in estimates], items, alpha=request.alpha,
                                    seed=request.seed)
    human = {i: float(labels[i]) for i in ids}  # type: ignore[arg-type]
    lengths = length_scores(rated)
    rows = []
    for index, (evaluator, x, est) in enumerate(zip(evaluators, columns, estimates)):
        keep = scored(x, items)
        rank = clustering.order.index(index) + 1 if index in clustering.order else None
        rows.append(LeaderboardRow(
            evaluator.name, evaluator.kind, est, rank, clustering.clusters[index], evaluator.failures, evaluator.run,
            tie_calibrated_pairwise_accuracy(x[keep], items.subset(keep), seed=request.seed)
            if request.level == CONTEXT else None,
            system_agreement(x[keep], items.subset(keep), seed=request.seed)
            if request.level == SYSTEM and keep.any() else None,
            length_bias(evaluator.scores, human, lengths, evaluator=evaluator.name, quality=quality),
            evaluator.flip_rate, evaluator.first_position, evaluator.usage, valid_mass=evaluator.valid_mass))
    rows.sort(key=lambda r: (r.rank is None, r.rank or 0))
    ceiling = _ceiling(level, items, ids, rated, quality, evaluators, request)
    notes.extend(_cluster_notes(clustering))
    return Leaderboard(dataset.name, quality, request.level, level.statistic, tuple(rows), ceiling, clustering,
                       _distinct_runs(evaluators), request.n_boot, tuple(dict.fromkeys(notes)))


def _distinct_runs(evaluators: Sequence[Evaluator]) -> tuple[RunInfo, ...]:
    seen: dict[int, RunInfo] = {}
    for e in evaluators:
        if e.run is not None:
            seen.setdefault(e.run.run_id, e.run)
    return tuple(seen.values())


def _ceiling(level: Any, items: Items, ids: list[str], rated: list[Any], quality: str,
             evaluators: Sequence[Evaluator], request: LeaderboardRequest) -> LeaderboardRow:
    """The humans' own agreement, on the items the judges were compared on (all items without judges)."""
    judged = compared_items(rated, {e.name: e.scores for e in evaluators if e.kind == JUDGE})
    matrix = annotator_matrix(rated, quality)
    position = {item: i for i, item in enumerate(ids)}
    ratings = np.full((len(matrix.annotators), len(ids)), np.nan)
    numeric = matrix.numeric()
    for column, item in enumerate(matrix.example_ids):
        if item in position and (judged is None or item in judged):
            ratings[:, position[item]] = numeric[:, column]
    result = annotator_ceiling(level, ratings, items, n_boot=request.n_boot, seed=request.seed)
    return LeaderboardRow("human ceiling", CEILING, result)


def _cluster_notes(clustering: Clustering) -> list[str]:
    untested = [t for t in clustering.tests if t.reason]
    if not untested:
        return []
    return [f"{len(untested)} evaluator pair{'s' if len(untested) != 1 else ''} had no test "
            f"({untested[0].reason}): counted as not different"]


def _finite(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _float(value: float | None) -> float:
    return float(value) if value is not None and _finite(value) else math.nan


# -- layouts: the same rows and texts for every front end -------------------------------------

def columns_of(board: Leaderboard) -> tuple[str, ...]:
    if board.level == PREFERENCE:
        return ("#", "cluster", "evaluator", "agreement [95% CI]", "n", "failed", "longer wins", "flip", "1st",
                "cost/1k", "tokens/1k", "time/1k")
    extra: tuple[str, ...] = ()
    if board.level == CONTEXT:
        extra = ("tie-cal. acc", "ε")
    elif board.level == SYSTEM:
        extra = ("pair acc", "SPA")
    return ("#", "cluster", "evaluator", board.statistic.split(" over ")[0].split(" per-")[0] + " [95% CI]", "n",
            "failed", "mass", *extra, "r len", "r len humans", "r | len", "flip", "1st", "cost/1k", "tokens/1k",
            "time/1k")


def _usage_cells(usage: Usage | None) -> tuple[str, str, str]:
    if usage is None:
        return "–", "–", "–"
    return (money_text(usage.cost), "–" if usage.tokens is None else f"{usage.tokens:,.0f}",
            "–" if usage.seconds is None else f"{usage.seconds:,.1f} s")


def _value_text(est: Estimate) -> str:
    if not math.isfinite(est.value):
        return "–"
    return " ".join(p for p in (number_text(est.value), interval_text(*(est.ci or (None, None)))) if p)


def _n_text(est: Estimate) -> str:
    return f"{est.n_items}/{est.n_contexts}"


def row_cells(board: Leaderboard, row: LeaderboardRow) -> tuple[str, ...]:
    rank = "–" if row.rank is None else str(row.rank)
    cluster = "–" if row.cluster is None else str(row.cluster)
    if board.level == PREFERENCE:
        return (rank, cluster, row.name, _value_text(row.estimate), _n_text(row.estimate),
                str(row.failures) if row.kind == JUDGE else "–", _share(row.longer_wins), _share(row.flip_rate),
                _share(row.first_position), *_usage_cells(row.usage))
    extra: tuple[str, ...] = ()
    if board.level == CONTEXT:
        tc = row.tie_calibrated
        extra = ("–", "–") if tc is None or not tc.n_pairs else (
            number_text(tc.accuracy), "/".join(f"{e:.3g}" for e in tc.epsilons))
    elif board.level == SYSTEM:
        sa = row.system
        extra = ("–", "–") if sa is None else (number_text(sa.pairwise_accuracy), number_text(sa.soft_pairwise_accuracy))
    bias = row.length
    length = ("–", "–", "–") if bias is None or bias.reason else (
        number_text(bias.judge_length_r), number_text(bias.human_length_r), number_text(_partial(bias)))
    return ("–" if row.rank is None else str(row.rank), "–" if row.cluster is None else str(row.cluster), row.name,
            _value_text(row.estimate), _n_text(row.estimate), str(row.failures) if row.kind == JUDGE else "–",
            number_text(row.valid_mass, 2), *extra, *length, _share(row.flip_rate), _share(row.first_position), *_usage_cells(row.usage))


def table_rows(board: Leaderboard) -> list[tuple[str, ...]]:
    """The table's rows, best first, the human ceiling last (the reference line: no rank, no cluster)."""
    ceiling = board.ceiling
    if board.level == PREFERENCE:
        ceiling_cells = row_cells(board, ceiling)
    else:
        ceiling_cells = ("–", "–", ceiling.name, _value_text(ceiling.estimate), _n_text(ceiling.estimate),
                         *("–",) * (len(columns_of(board)) - 5))
    return [*(row_cells(board, r) for r in board.rows), ceiling_cells]


def title_of(board: Leaderboard) -> str:
    return f"Leaderboard: {board.dataset} · {board.quality} · {LEVEL_TITLES[board.level]}"


def records_of(board: Leaderboard) -> list[dict[str, Any]]:
    """One record per evaluator (the ceiling last): CI bounds, cluster, bias card, usage, run provenance."""
    out = []
    for row in (*board.rows, board.ceiling):
        est, bias, usage = row.estimate, row.length, row.usage
        record: dict[str, Any] = {
            "rank": row.rank, "cluster": row.cluster, "evaluator": row.name, "kind": row.kind, "level": board.level,
            "statistic": board.statistic, "value": _clean(est.value),
            "ci_low": est.ci[0] if est.ci else None, "ci_high": est.ci[1] if est.ci else None,
            "n_items": est.n_items, "n_contexts": est.n_contexts, "failures": row.failures, "reason": est.reason}
        if board.level == CONTEXT:
            tc = row.tie_calibrated
            record["tie_calibrated_accuracy"] = _clean(tc.accuracy) if tc else None
            record["tie_epsilons"] = "/".join(f"{e:g}" for e in tc.epsilons) if tc else None
        if board.level == SYSTEM:
            sa = row.system
            record["system_pairwise_accuracy"] = _clean(sa.pairwise_accuracy) if sa else None
            record["soft_pairwise_accuracy"] = _clean(sa.soft_pairwise_accuracy) if sa else None
        if board.level == PREFERENCE:
            record["longer_wins"] = row.longer_wins
        ok = bias is not None and not bias.reason
        record.update({
            "length_r": _clean(bias.judge_length_r) if ok and bias else None,
            "human_length_r": _clean(bias.human_length_r) if ok and bias else None,
            "partial_r_length": _clean(_partial(bias)) if ok and bias else None,
            "valid_mass_median": row.valid_mass,
            "flip_rate": row.flip_rate, "first_position_share": row.first_position,
            "cost_per_1k": usage.cost if usage else None, "tokens_per_1k": usage.tokens if usage else None,
            "seconds_per_1k": usage.seconds if usage else None,
            "run": row.run.run_id if row.run else None, "run_kind": row.run.kind if row.run else None,
            "template": row.run.template if row.run else None,
            "template_hash": row.run.template_hash if row.run else None,
            "settings": row.run.settings if row.run else None})
        out.append(record)
    return out


def leaderboard_text(board: Leaderboard, fmt: str) -> str:
    """The leaderboard as csv, json, markdown or latex, with the method text (cells escaped, formulas
    neutralised by core.report)."""
    if fmt not in FORMATS or fmt == "table":
        raise ConfigError(f"unknown format {fmt!r} (csv, json, markdown, latex)")
    records = records_of(board)
    method = board.method_lines() + [f"note: {n}" for n in board.notes]
    if fmt == "csv":
        # CSV has no place for prose: every row carries the method text in its own column.
        joined = " | ".join(method)
        return records_text([{**r, "method": joined} for r in records], "csv", columns=(), title="")
    if fmt == "json":
        meta = {"dataset": board.dataset, "quality": board.quality, "level": board.level, "statistic": board.statistic,
                "method": method, "runs": [vars(r) for r in board.runs]}
        return records_text(records, "json", columns=(), title="", meta=meta)
    columns = [c for c in records[0] if c not in ("level", "statistic", "settings")] if records else []
    table = records_text(records, fmt, columns=columns, title=title_of(board))
    method_records = [{"method": line} for line in method] + [
        {"method": f"run {r.run_id} ({r.kind}): template {r.template} #{r.template_hash}; {r.settings}"}
        for r in board.runs]
    return table + "\n" + records_text(method_records, fmt, columns=["method"], title="Method and runs")


def _partial(bias: LengthBias) -> float:
    """Agreement with length partialled out; undefined for a score that is length itself (r = 1, where
    the formula divides rounding noise by rounding noise)."""
    return math.nan if abs(bias.judge_length_r) > 1 - 1e-9 else bias.partial_r


def _share(value: float | None) -> str:
    return percent_text(None if value is None else 100 * value, 0) + ("%" if value is not None else "")


def _clean(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else value


__all__ = ["FORMATS", "LEVELS", "Leaderboard", "LeaderboardRequest", "LeaderboardRow", "columns_of", "leaderboard",
           "leaderboard_text", "records_of", "row_cells", "table_rows", "title_of"]
