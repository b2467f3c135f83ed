"""JUDGE-BENCH's table over stored runs: one run per metric (quality), one table per call.

A dialjudge run judges one quality with one template; JUDGE-BENCH's tables average several metrics
(and its categorical metrics need a label template, its graded ones a score template). So the table
is built from runs already judged, each with the template that fits its metric, and may span several
JUDGE-BENCH files: ``dialjudge runs protocol judge-bench 3 4 5``. ``dialjudge judge --protocol
judge-bench`` makes those runs (:func:`judge_bench_requests`: one per metric of one file) and then
shows the same table. The numbers come from
:mod:`core.stats.judge_bench_protocol`; this module only reads the runs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..config import Config
from ..errors import ConfigError
from ..judges.post_run.labels import run_label_report
from ..judges.store.run_store import RunStore
from ..judges.types import ScoringMode
from ..model import Dataset, ScaleKind
from ..report import records_to_latex, records_to_markdown, to_csv, to_json
from ..run_columns import judgment_columns
from ..stats.judge_bench_protocol import (
    CATEGORICAL,
    SD_RULE,
    UNPARSED_RULE,
    JudgeBenchMetric,
    JudgeBenchSummary,
    categorical_result,
    graded_result,
    summarise,
)
from ..stats.label_agreement import TieRule
from .requests import RunRequest
from .stored import dataset_of_run

#: The template categorical metrics are judged with unless one is named: the quality's own label list.
LABEL_TEMPLATE = "label-choice"
#: The scoring JUDGE-BENCH's protocol uses (Bavaresco et al. parse the generated answer), the default here.
PROTOCOL_MODE = ScoringMode.GENERATE

METRIC_COLUMNS = ("dataset", "metric", "category", "judge", "statistic", "value", "n", "unparsed", "run")
SUMMARY_COLUMNS = ("dataset", "category", "judge", "statistic", "mean", "sd", "metrics", "undefined", "unparsed")


@dataclass(frozen=True)
class JudgeBenchTable:
    """Per-metric results and per-dataset summaries, with the notes said under the table."""

    metrics: tuple[JudgeBenchMetric, ...]
    summaries: tuple[JudgeBenchSummary, ...]
    notes: tuple[str, ...]

    def records(self) -> list[dict[str, Any]]:
        """Flat records: the dataset summaries (``row`` = "dataset"), then every metric (``row`` = "metric")."""
        return ([{"row": "dataset", **s.to_record()} for s in self.summaries]
                + [{"row": "metric", **m.to_record()} for m in self.metrics])


def judge_bench_requests(request: RunRequest, dataset: Dataset, qualities: Sequence[str] = (), *,
                         label_template: str = LABEL_TEMPLATE) -> list[RunRequest]:
    """One run per metric of a JUDGE-BENCH file (``qualities``, default every metric): a categorical
    metric with ``label_template``, a graded or continuous one with the request's template."""
    if dataset.meta.get("format") != "judge-bench":
        raise ConfigError(f"--protocol judge-bench needs a JUDGE-BENCH file; {dataset.name} is not one")
    if request.fewshot_draws > 1 or request.pairs is not None:
        raise ConfigError("--protocol judge-bench makes one run per metric; it cannot be combined with "
                          "--fewshot-draws or pairwise judging")
    unknown = [q for q in qualities if q not in dataset.qualities]
    if unknown:
        raise ConfigError(f"{', '.join(map(repr, unknown))}: not a metric of {dataset.name} "
                          f"(metrics: {', '.join(dataset.qualities)})")
    chosen = list(qualities) or list(dataset.qualities)
    if request.mode is None:  # the protocol's own scoring, as its paper did: generated answers, parsed
        request = dataclasses.replace(request, mode=PROTOCOL_MODE.value)
    # JUDGE-BENCH names its scoring: the protocol's mode, not a judge's default for the template.
    return [dataclasses.replace(request, quality=quality, judge_defaults=False, template=label_template
                                if dataset.qualities[quality].kind is ScaleKind.CATEGORICAL else request.template)
            for quality in chosen]


def judge_bench_table(store: RunStore, run_ids: Sequence[int], app_config: Config | None = None, *,
                      tie_rule: TieRule | str = TieRule.EXCLUDE) -> JudgeBenchTable:
    """The JUDGE-BENCH table of ``run_ids`` (each a run of one JUDGE-BENCH quality)."""
    if not run_ids:
        raise ConfigError("name at least one run")
    rule = TieRule(tie_rule)
    opened: dict[str, Dataset] = {}
    results: list[JudgeBenchMetric] = []
    seen: dict[tuple[str, str], int] = {}
    modes: dict[str, list[int]] = {}
    for run_id in run_ids:
        config = store.runs.get_run(run_id).run_config
        modes.setdefault(config.mode.value, []).append(run_id)
        quality = config.quality
        key = config.dataset_path or config.dataset
        dataset = opened.get(key) or dataset_of_run(config, app_config)
        opened[key] = dataset
        if dataset.meta.get("format") != "judge-bench":
            raise ConfigError(f"run {run_id} judged {dataset.name}, not a JUDGE-BENCH file")
        if quality is None or quality not in dataset.qualities:
            raise ConfigError(f"run {run_id} names no quality of {dataset.name}")
        if (dataset.name, quality) in seen:
            raise ConfigError(f"runs {seen[dataset.name, quality]} and {run_id} both judged {quality!r} of "
                              f"{dataset.name}; name one run per metric")
        seen[dataset.name, quality] = run_id
        judgments = store.judgments.load_judgments(run_id)
        judged = config.select_items(dataset)
        if dataset.qualities[quality].kind is ScaleKind.CATEGORICAL:
            report = run_label_report(config, dataset, judgments, tie_rule=rule.value, n_boot=0)
            if report.reason:  # e.g. a score template on a label metric: a row that says why, not a number
                results += [JudgeBenchMetric(dataset.name, quality, CATEGORICAL, judge, None, 0,
                                             sum(j.failed for j in by_item.values()), len(by_item), run_id,
                                             report.reason) for judge, by_item in judgments.items()]
            results += [categorical_result(c, dataset=dataset.name, run_id=run_id) for c in report.comparisons]
        else:
            scores, _ = judgment_columns(judgments, with_pool=False)
            results += [graded_result(judged, quality, by_item, dataset=dataset.name, judge=judge, run_id=run_id)
                        for judge, by_item in scores.items()]
    notes = (UNPARSED_RULE, SD_RULE,
             "graded and continuous metrics: Spearman's ρ with the mean human score; categorical metrics: "
             f"Cohen's κ with the human majority label (ties: {rule.value})", _mode_note(modes))
    return JudgeBenchTable(tuple(results), tuple(summarise(results)), notes)


def _mode_note(modes: dict[str, list[int]]) -> str:
    """Which scoring the runs used, said under the table: JUDGE-BENCH parsed generated answers, and a
    probability-weighted mean gives other figures."""
    if set(modes) == {PROTOCOL_MODE.value}:
        return "scoring: generate (the answer parsed from the generated text), as JUDGE-BENCH's protocol scores"
    parts = [f"{mode} (runs {', '.join(map(str, ids))})" for mode, ids in sorted(modes.items())]
    return ("scoring: " + ", ".join(parts) + "; JUDGE-BENCH's protocol parses generated answers (--mode "
            "generate), so figures from other modes are not its figures")


def judge_bench_text(table: JudgeBenchTable, fmt: str, *, title: str) -> str:
    """The table as csv, json, markdown or latex (cells escaped and formula-neutralised by core.report)."""
    records = table.records()
    if fmt == "csv":
        return to_csv(records)
    if fmt == "json":
        return to_json(records, meta={"protocol": "judge-bench", "notes": list(table.notes)})
    if fmt == "markdown":
        summaries = records_to_markdown([s.to_record() for s in table.summaries], SUMMARY_COLUMNS, title=title)
        metrics = records_to_markdown([m.to_record() for m in table.metrics], METRIC_COLUMNS,
                                      title=f"{title}: per metric")
        return summaries + "\n" + metrics + "\n" + "".join(f"- {note}\n" for note in table.notes)
    if fmt == "latex":
        return (records_to_latex([s.to_record() for s in table.summaries], SUMMARY_COLUMNS, title=title)
                + records_to_latex([m.to_record() for m in table.metrics], METRIC_COLUMNS,
                                   title=f"{title}: per metric; " + "; ".join(table.notes)))
    raise ConfigError(f"unknown format {fmt!r} (csv, json, markdown, latex)")
