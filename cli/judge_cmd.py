"""`dialjudge judge`: run LLM judges, then print them beside the reference-based metrics."""

from __future__ import annotations

import argparse
import asyncio
import math
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from dialjudge.core.adversarial.builder import CONTRADICTS
from dialjudge.core.config import load_config
from dialjudge.core.errors import ConfigError
from dialjudge.core.evaluation import evaluate, split_subsets
from dialjudge.core.judges.events import JudgmentScored, RunProgress, RunStarted
from dialjudge.core.judges.store import RunStore
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.judging import build_backends, execute_run, is_label_quality, judgment_columns, plan_run
from dialjudge.core.model import Aggregation
from dialjudge.core.registry import open_dataset

from . import render
from .metrics_cmd import add_table_options, emit, levels_of


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="score a dataset with LLM judges and compare them with humans")
    add_table_options(p)
    p.add_argument("--template", default="adv-0to1", help="judge template (see prompts/templates)")
    p.add_argument("--judge", action="append", dest="judges", metavar="NAME",
                   help="judge from dialjudge.toml (repeatable; default: smollm2, the bundled model)")
    p.add_argument("--mode", choices=[m.value for m in ScoringMode], default=None,
                   help="logprob (the default where the template supports it): probability-weighted score; "
                        "generate: parse the answer; yesno: p(yes)/(p(yes)+p(no))")
    p.add_argument("--top-k", type=int, default=0,
                   help="logprob mode: 0 (default) = expected value over every valid score; K > 0 = paper 003's "
                        "weighting of the K most likely answers")
    p.add_argument("--aspect", help="aspect for aspect templates (coherence, relevance, consistency, fluency)")
    p.add_argument("--kpi", help="KPI for KPI templates (follow-up, implicit-understanding, harmful-input)")
    p.add_argument("--persona", action="append", dest="personas", default=[], metavar="NAME",
                   help="persona (repeatable: sweeps the personas; 'none' for no persona)")
    p.add_argument("--fewshot", default="none", help="none, random:K, bm25-context:K, bm25-response:K, bm25-both:K")
    p.add_argument("--fewshot-draws", type=int, default=1, metavar="R",
                   help="with --fewshot random:K, run R random draws (seeds seed..seed+R-1) and report each "
                        "judge's correlation as mean ± std over the draws (paper 003)")
    p.add_argument("--limit", type=int, help="judge only the first N items of the subset")
    p.add_argument("--repeats", type=int, default=1, help="repeat every judgment R times with seeds seed..seed+R-1")
    p.add_argument("--name", default="", help="a name for the run")
    p.add_argument("--no-metrics", action="store_true", help="leave the reference-based metrics out of the table")
    p.add_argument("--fresh", action="store_true", help="start a new run instead of resuming an unfinished one")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    config = load_config()
    dataset = open_dataset(args.dataset)
    fewshot_specs = _fewshot_draws(args.fewshot, args.fewshot_draws)
    plans = [plan_run(dataset, config, template=args.template, judges=args.judges or ["smollm2"],
                      mode=args.mode, aspect=args.aspect, kpi=args.kpi, quality=(args.qualities or [None])[0],
                      personas=args.personas, fewshot=spec,
                      subset=None if args.subset == "all" and args.kpi else args.subset, limit=args.limit,
                      repeats=args.repeats, top_k=args.top_k, name=args.name) for spec in fewshot_specs]
    with RunStore() as store:
        return _judge_and_report(args, dataset, plans, store)


def _judge_and_report(args: argparse.Namespace, dataset: Any, plans: list[Any], store: RunStore) -> int:
    plan = plans[0]
    con = render.console(stderr=True)
    summaries = []
    for draw in plans:
        if len(plans) > 1:
            con.print(f"few-shot draw {draw.config.fewshot.spec}")
        summaries.append(_run_with_progress(draw.config, dataset, store, build_backends(draw.config),
                                            fresh=args.fresh, con=con))
        if summaries[-1].status != "finished":
            break
    summary = summaries[0]

    judgments = store.load_judgments(summary.run_id)
    scores, failures = judgment_columns(judgments)
    _print_run_summary(con, judgments, summary)
    if summary.status != "finished":
        con.print(f"[yellow]run {summary.run_id} {summary.status}; run the same command again to resume it[/yellow]")

    qualities = args.qualities or ([plan.quality] if plan.quality else None)
    only_dialogs = bool(len(dataset)) and all(ex.candidate is None for ex in dataset)
    subsets = split_subsets(dataset, plan.subset)
    report = evaluate(dataset, qualities=qualities, subset=subsets[0], extra_subsets=subsets[1:],
                      levels=levels_of(args.level, only_dialogs),
                      aggregation=Aggregation(args.aggregate), extra_scores=scores, failures=failures,
                      include_metrics=not args.no_metrics, n_boot=args.bootstrap, seed=args.seed)
    mode_text = plan.config.mode.value + (f", top-{plan.config.top_k}" if plan.config.mode is ScoringMode.LOGPROB
                                          and plan.config.top_k else "")
    report.notes.insert(0, f"run {summary.run_id}: template {plan.config.template}, mode {mode_text}"
                           + (f", aspect {plan.config.aspect}" if plan.config.aspect else "")
                           + (f", KPI {plan.config.kpi}" if plan.config.kpi else "")
                           + f", few-shot {plan.config.fewshot.spec}")
    emit(report, args, title=f"Judges and metrics vs humans — {dataset.name}", dataset=dataset)

    scale = dataset.qualities.get(plan.quality) if plan.quality else None
    # A judge's label means "good reply"; an adversarial set's label means "contradicts the facts".
    # Agreement between the two is meaningless: the discernment table above is what measures it.
    if (is_label_quality(scale) and plan.quality != CONTRADICTS and args.format == "table"
            and args.output is None):
        _print_label_agreement(judgments, dataset, plan.quality)
    if plan.config.repeats > 1 and args.format == "table" and args.output is None:
        _print_stability(store, summary.run_id, dataset, plan.quality, binary=is_label_quality(scale))
    if len(summaries) > 1 and plan.quality and args.format == "table" and args.output is None:
        _print_draw_spread(store, [s.run_id for s in summaries], dataset, plan.quality, plan.subset)
    return 0 if all(s.status == "finished" for s in summaries) else 1


def _fewshot_draws(spec: str, draws: int) -> list[str]:
    """One few-shot spec per draw: random:K@seed, random:K@seed+1, ..."""
    if draws <= 1:
        return [spec]
    from dialjudge.core.judges.fewshot import FewShotSetting, random_settings

    try:
        setting = FewShotSetting.parse(spec)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    if setting.method != "random":
        raise ConfigError(f"--fewshot-draws needs --fewshot random:K (got {spec!r}); other selections are "
                          "deterministic, so every draw would be the same")
    return [str(s) for s in random_settings(setting.k, draws, setting.seed)]


def _print_draw_spread(store: RunStore, run_ids: list[int], dataset: Any, quality: str, subset: str) -> None:
    from dialjudge.core.judging import draw_spread

    rows = []
    for spread in draw_spread(store, run_ids, dataset, quality, subset=subset):
        (pm, ps), (sm, ss) = spread.pearson_mean_std, spread.spearman_mean_std
        rows.append((spread.evaluator, len(run_ids), "–" if pm is None else f"{pm:.3f} ± {ps:.3f}",
                     "–" if sm is None else f"{sm:.3f} ± {ss:.3f}",
                     ", ".join(f"{v:.3f}" for v in spread.spearman)))
    render.console().print(render.plain_table(
        f"Random few-shot draws — runs {', '.join(map(str, run_ids))} ({quality})",
        ["judge", "draws", "Pearson mean ± std", "Spearman mean ± std", "Spearman per draw"], rows,
        right=("draws",)))


def _run_with_progress(run_config: Any, dataset: Any, store: RunStore, backends: Any, *, fresh: bool,
                       con: Any) -> Any:
    progress = Progress(TextColumn("[bold]judging"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[detail]}"), TimeRemainingColumn(), console=con, transient=False)
    task = progress.add_task("judging", total=None, detail="loading")

    def on_event(event: Any) -> None:
        if isinstance(event, RunStarted):
            progress.update(task, total=event.total, completed=event.done, detail="")
        elif isinstance(event, JudgmentScored):
            progress.update(task, completed=event.done)
        elif isinstance(event, RunProgress):
            rate = f"{event.items_per_s:.2f} items/s" if event.items_per_s else ""
            progress.update(task, completed=event.done,
                            detail=f"{event.failures} failed · {event.cached} cached · {rate}")

    with progress:
        return asyncio.run(execute_run(run_config, dataset, store, backends, on_event=on_event,
                                       resume=not fresh, close_backends=True))


def _print_run_summary(con: Any, table: Any, summary: Any) -> None:
    rows = []
    for judge, judgments in table.items():
        values = list(judgments.values())
        # Throughput (this session's judgments / wall time), not 1 / mean latency: with
        # concurrent requests the two differ by the concurrency.
        rate = summary.items_per_s(judge)
        rows.append((judge, len(values), sum(j.failed for j in values), sum(j.cached for j in values),
                     f"{rate:.2f}" if rate is not None else "–",
                     _mean(j.prompt_tokens for j in values), _mean(j.evaluated_tokens for j in values),
                     _mean(j.completion_tokens for j in values)))
    con.print(render.plain_table(
        f"Run {summary.run_id} ({summary.status}, {summary.elapsed_s:.1f} s)",
        ["judge", "judged", "failed", "cached", "items/s", "prompt tok/item", "evaluated tok/item", "answer tok/item"],
        rows, right=("judged", "failed", "cached", "items/s", "prompt tok/item", "evaluated tok/item",
                     "answer tok/item")))
    con.print("[dim]evaluated: prompt tokens actually run (the rest reused from the previous prompt's cache; an "
              "API server does not report its reuse); answer: generated tokens, or in logprob/yesno mode the "
              "answer tokens scored without sampling[/dim]")


def _print_label_agreement(judgments: Any, dataset: Any, quality: str) -> None:
    from dialjudge.core.judges.pool import pool_report

    report = pool_report(judgments, dataset, quality)
    rows = [(name, a.n, _pct(a.percent), _num(a.kappa)) for name, a in report.judges.items()]
    if len(report.judges) > 1:
        rows.append((f"Max-Vote ({len(report.judges)} judges)", report.pool.n, _pct(report.pool.percent),
                     _num(report.pool.kappa)))
    con = render.console()
    con.print(render.plain_table(f"Agreement with max-voted humans — {quality}",
                                 ["judge", "n", "% agreement", "Cohen's κ"], rows,
                                 right=("n", "% agreement", "Cohen's κ")))
    con.print(f"[dim]human vote ties: {len(report.human_ties)}; judge vote ties: {len(report.judge_ties)} "
              "(broken towards the smaller label)[/dim]")


def _print_stability(store: RunStore, run_id: int, dataset: Any, quality: str | None, *, binary: bool) -> None:
    from dialjudge.core.judges.pool import stability

    rows = []
    for s in stability(store.load_repeats(run_id), binary=binary, dataset=dataset, quality=quality).values():
        spread = "–" if s.human.mean is None else f"{s.human.mean:.3f} ± {s.human.std or 0:.3f}"
        self_agreement = s.percent_agreement if binary else s.spearman
        rows.append((s.judge, s.repeats, s.items, _num(self_agreement), _num(s.alpha), spread, s.human_measure))
    render.console().print(render.plain_table(
        "Stability over repeats", ["judge", "repeats", "items", "self-agreement", "α", "vs humans (mean ± std)",
                                   "measure"], rows, right=("repeats", "items", "self-agreement", "α")))


def _mean(values: Any) -> str:
    vals = list(values)
    return f"{sum(vals) / len(vals):.0f}" if vals else "–"


def _num(x: float | None) -> str:
    return "–" if x is None or (isinstance(x, float) and math.isnan(x)) else f"{x:.3f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.1f}"
