"""`dialjudge judge`: run LLM judges, then print them beside the reference-based metrics."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
from typing import Any

from rich.markup import escape
from rich.progress import BarColumn, Progress, TextColumn

from dialjudge.core.adversarial.builder import CONTRADICTS
from dialjudge.core.config import load_config
from dialjudge.core.errors import ConfigError
from dialjudge.core.evaluation import evaluate, split_subsets
from dialjudge.core.format import number_text, percent_text
from dialjudge.core.judges.prompts.constraint import AnswerConstraint
from dialjudge.core.judges.run.events import StopRuleChecked
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.store.status import RunState, RunStatus, status_text
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.judging import POOL, build_backends, execute_run, is_label_quality, judgment_columns, plan_run
from dialjudge.core.model import Aggregation, ScaleKind
from dialjudge.core.registry import open_dataset
from dialjudge.core.stats.label_agreement import TieRule

from . import render
from .metrics_cmd import add_table_options, emit, levels_of
from .pairwise_view import add_pair_options, pair_setting, print_pair_plan, report_pairwise
from .signals import sigterm_as_interrupt


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("judge", help="score a dataset with LLM judges and compare them with humans")
    add_table_options(p)
    p.add_argument("--template", default="adv-0to1", help="judge template (see prompts/templates)")
    p.add_argument("--judge", action="append", dest="judges", metavar="NAME",
                   help="judge from dialjudge.toml (repeatable; default: smollm2, the bundled model)")
    p.add_argument("--mode", choices=[*(m.value for m in ScoringMode), "pairwise"], default=None,
                   help="logprob (the default where the template supports it): probability-weighted score; "
                        "generate: parse the answer; yesno: p(yes)/(p(yes)+p(no)); pairwise: a pairwise template "
                        "compares two candidates of a context (A, B or tie), every pair in both orders "
                        "(see --pairs, --pair-seed, --pair-scoring)")
    p.add_argument("--top-k", type=int, default=0,
                   help="logprob mode: 0 (default) = expected value over every valid score; K > 0 = Huynh et al.'s "
                        "weighting of the K most likely answers")
    p.add_argument("--constrain", action="store_true",
                   help="generate mode (implied): hold every answer to the template's answer format, so that it "
                        "always parses: a llama.cpp grammar on local GGUF judges; on API judges a JSON schema "
                        "(JSON templates) or options.constrain_with = \"grammar\" for llama.cpp servers")
    p.add_argument("--reasoning", action="store_true",
                   help="with --constrain: one line of free reasoning first, then the constrained answer line")
    p.add_argument("--aspect", help="aspect for aspect templates (coherence, relevance, consistency, fluency)")
    p.add_argument("--kpi", help="KPI for KPI templates (follow-up, implicit-understanding, harmful-input)")
    p.add_argument("--persona", action="append", dest="personas", default=[], metavar="NAME",
                   help="persona (repeatable: sweeps the personas; 'none' for no persona)")
    p.add_argument("--fewshot", default="none", help="none, random:K, bm25-context:K, bm25-response:K, bm25-both:K")
    p.add_argument("--fewshot-draws", type=int, default=1, metavar="R",
                   help="with --fewshot random:K, run R random draws (seeds seed..seed+R-1) and report each "
                        "judge's correlation as mean ± std over the draws (as in Huynh et al.)")
    p.add_argument("--limit", type=int, help="judge only the first N items of the subset")
    p.add_argument("--repeats", type=int, default=1, help="repeat every judgment R times with seeds seed..seed+R-1")
    p.add_argument("--name", default="", help="a name for the run")
    p.add_argument("--no-metrics", action="store_true", help="leave the reference-based metrics out of the table")
    p.add_argument("--fresh", action="store_true", help="start a new run instead of resuming an unfinished one")
    p.add_argument("--majority-ties", choices=[r.value for r in TieRule], default=TieRule.EXCLUDE.value,
                   help="label qualities, a tied human majority: exclude the item, take the first tied label "
                        "in the quality's label list, or take the file's published majority (else exclude)")
    p.add_argument("--yes-label", metavar="LABEL",
                   help="two-label qualities: the label a judge's yes (or 1) means, when the label names do not "
                        "say it (recorded with the run)")
    p.add_argument("--stop-when-ci-width", type=float, metavar="W",
                   help="stop once the bootstrap CI of Spearman's ρ with the humans is narrower than W (with "
                        "--baseline-run: once the CI of Δρ excludes 0 or is narrower than W); resume to extend")
    p.add_argument("--baseline-run", type=int, metavar="N",
                   help="stop once the CI of Δρ against run N (paired on shared items) excludes 0, at a "
                        "Bonferroni-over-looks level")
    p.add_argument("--check-every", type=int, default=5, metavar="K",
                   help="the stop rule looks every K completed contexts (from the 10th on)")
    p.add_argument("--order-seed", type=int, default=0, metavar="S",
                   help="seed of the random order in which contexts are judged")
    add_pair_options(p)
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    config = load_config()
    dataset = open_dataset(args.dataset)
    constraint = _constraint(args)  # before the mode is chosen: it implies generate
    fewshot_specs = _fewshot_draws(args.fewshot, args.fewshot_draws)
    pairs, mode = pair_setting(args)
    plans = [plan_run(dataset, config, template=args.template, judges=args.judges or ["smollm2"],
                      mode=mode, pairs=pairs, aspect=args.aspect, kpi=args.kpi, quality=(args.qualities or [None])[0],
                      personas=args.personas, fewshot=spec,
                      subset=None if args.subset == "all" and args.kpi else args.subset, limit=args.limit,
                      repeats=args.repeats, top_k=args.top_k, name=args.name, yes_label=args.yes_label)
             for spec in fewshot_specs]
    plans = [dataclasses.replace(p, config=dataclasses.replace(p.config, constrain=constraint)) for p in plans]
    if args.yes_label:
        _check_yes_label(dataset, plans[0], args.yes_label)
    with RunStore() as store:
        return _judge_and_report(args, dataset, plans, store)


def _constraint(args: argparse.Namespace) -> AnswerConstraint:
    if args.reasoning and not args.constrain:
        raise ConfigError("--reasoning goes with --constrain (free reasoning before a constrained answer)")
    if not args.constrain:
        return AnswerConstraint.OFF
    if args.mode is None:
        args.mode = ScoringMode.GENERATE.value
    return AnswerConstraint.REASONING if args.reasoning else AnswerConstraint.ANSWER


def _judge_and_report(args: argparse.Namespace, dataset: Any, plans: list[Any], store: RunStore) -> int:
    plan = plans[0]
    con = render.console(stderr=True)
    summaries = []
    stop_rule = _stop_rule(args, dataset, plan, store)
    if stop_rule is not None and len(plans) > 1:
        raise ConfigError("a stop rule watches one run; it cannot be combined with --fewshot-draws")
    if plan.config.pairs is not None:
        print_pair_plan(con, dataset, plan.config)
    for draw in plans:
        if len(plans) > 1:
            con.print(f"few-shot draw {draw.config.fewshot.spec}")
        summaries.append(_run_with_progress(draw.config, dataset, store, build_backends(draw.config),
                                            fresh=args.fresh, con=con, stop_rule=stop_rule,
                                            order_seed=args.order_seed))
        if summaries[-1].status != RunStatus.FINISHED:
            break
    summary = summaries[0]
    stopped = stop_rule is not None and stop_rule.last is not None and stop_rule.last.decided

    judgments = store.load_judgments(summary.run_id)
    scores, failures = judgment_columns(judgments)
    _print_run_summary(con, judgments, summary)
    _print_failures(con, summary)
    if stopped:
        assert stop_rule is not None and stop_rule.last is not None
        state = stop_rule.last
        con.print(f"run {summary.run_id} stopped by the stop rule after {state.n_items} items in "
                  f"{state.n_contexts} contexts: {state.message}", markup=False)
        con.print("[dim]resume without the stop rule (or with a narrower W) to extend it[/dim]")
    elif summary.status != RunStatus.FINISHED:
        con.print(f"[yellow]run {summary.run_id} {summary.status}; run the same command again to resume it[/yellow]")

    for warning in dataset.meta.get("warnings", ()):
        con.print(f"[yellow]warning: {escape(str(warning))}[/yellow]")
    if plan.config.pairs is not None:
        report_pairwise(args, dataset, plan, judgments, summary.run_id)
        return 0 if stopped or all(s.status == RunStatus.FINISHED for s in summaries) else 1
    # Compare on the items this run judged: --limit must not count the others as excluded.
    judged = dataset.subset(plan.config.select_items(dataset))
    scale = dataset.qualities.get(plan.quality) if plan.quality else None
    finished = 0 if stopped or all(s.status == RunStatus.FINISHED for s in summaries) else 1
    if scale is not None and scale.kind is ScaleKind.CATEGORICAL:
        _report_labels(args, dataset, plan, judgments, summary.run_id)
        return finished

    qualities = args.qualities or ([plan.quality] if plan.quality else None)
    only_dialogs = bool(len(dataset)) and all(ex.candidate is None for ex in dataset)
    subsets = split_subsets(judged, plan.subset)
    report = evaluate(judged, qualities=qualities, subset=subsets[0], extra_subsets=subsets[1:],
                      levels=levels_of(args.level, only_dialogs),
                      aggregation=Aggregation(args.aggregate), extra_scores=scores, failures=failures,
                      include_metrics=not args.no_metrics, n_boot=args.bootstrap, seed=args.seed,
                      include_length=True)
    mode_text = plan.config.mode.value + (f", top-{plan.config.top_k}" if plan.config.mode is ScoringMode.LOGPROB
                                          and plan.config.top_k else "")
    if plan.config.constrain is not AnswerConstraint.OFF:
        mode_text += f", constrained ({plan.config.constrain.value})"
    report.notes.insert(0, f"run {summary.run_id}: template {plan.config.template}, mode {mode_text}"
                           + (f", aspect {plan.config.aspect}" if plan.config.aspect else "")
                           + (f", KPI {plan.config.kpi}" if plan.config.kpi else "")
                           + f", few-shot {plan.config.fewshot.spec}")
    # A binary quality is compared both ways: correlation above, labels against the majority.
    binary = scale is not None and scale.kind is ScaleKind.BINARY and plan.quality != CONTRADICTS
    writes_file = args.format != "table" or args.output is not None
    labels = _label_report(dataset, plan, judgments, plan.config.yes_label, args.majority_ties,
                           args.bootstrap, args.seed) if binary and writes_file else None
    judge_columns = {name: column for name, column in scores.items() if name != POOL}
    graded = not is_label_quality(dataset.qualities.get(plan.quality) if plan.quality else None)
    if len(judge_columns) > 1 and graded and args.format == "table" and args.output is None:
        _print_inter_judge(judge_columns)  # before the pooled column: does pooling make sense?
    emit(report, args, title=f"Judges and metrics vs humans — {dataset.name}", dataset=dataset, labels=labels)

    # A judge's label means "good reply"; an adversarial set's label means "contradicts the facts".
    # Agreement between the two is meaningless: the discernment table above is what measures it.
    if (is_label_quality(scale) and plan.quality != CONTRADICTS and args.format == "table"
            and args.output is None):
        _print_label_agreement(judgments, dataset, plan.quality)
        _report_labels(args, dataset, plan, judgments, summary.run_id)
    if (plan.quality and not is_label_quality(scale) and args.format == "table" and args.output is None
            and not only_dialogs):
        _print_length_and_certainty(dataset, scores, plan.quality, plan.subset, n_boot=args.bootstrap,
                                    seed=args.seed)
    if plan.config.repeats > 1 and args.format == "table" and args.output is None:
        _print_stability(store, summary.run_id, dataset, plan.quality, binary=is_label_quality(scale))
    if len(summaries) > 1 and plan.quality and args.format == "table" and args.output is None:
        _print_draw_spread(store, [s.run_id for s in summaries], dataset, plan.quality, plan.subset)
    return finished


def _label_report(dataset: Any, plan: Any, judgments: Any, yes_label: str | None, tie_rule: str, n_boot: int,
                  seed: int) -> Any:
    from dialjudge.core.judges.post_run.labels import run_label_report

    return run_label_report(plan.config, dataset, judgments, yes_label=yes_label, tie_rule=tie_rule, n_boot=n_boot,
                            seed=seed)


def _check_yes_label(dataset: Any, plan: Any, yes_label: str) -> None:
    """A --yes-label that names no label is the user's error: say so before judging anything."""
    from dialjudge.core.judges.post_run.labels import LabelMappingError, label_mapping
    from dialjudge.core.judges.prompts.render import resolve_output
    from dialjudge.core.judges.prompts.templates import parse_template

    scale = dataset.qualities.get(plan.quality) if plan.quality else None
    if scale is None or scale.kind not in (ScaleKind.CATEGORICAL, ScaleKind.BINARY):
        raise ConfigError(f"--yes-label is for two-label qualities; {plan.quality!r} is not one")
    template = parse_template(plan.config.template_text, plan.config.template)
    try:
        label_mapping(resolve_output(template, quality=plan.quality, scale=scale), plan.config.mode, scale,
                      plan.quality, yes_label=yes_label, template=f"template {template.name!r}")
    except LabelMappingError as exc:
        raise ConfigError(str(exc)) from None


def _report_labels(args: argparse.Namespace, dataset: Any, plan: Any, judgments: Any, run_id: int) -> None:
    """Judges against the human majority label: printed, or written in --format. A comparison that is
    impossible says why; the judgments are stored all the same."""
    from . import labels_view

    report = _label_report(dataset, plan, judgments, plan.config.yes_label, args.majority_ties,
                           args.bootstrap, args.seed)
    title = f"Judges vs humans — {dataset.name}"
    run_note = (f"run {run_id}: template {plan.config.template}, mode {plan.config.mode.value}"
                + (f", yes label {plan.config.yes_label!r}" if plan.config.yes_label else ""))
    if args.format == "table" and args.output is None:
        con = render.console()
        labels_view.print_report(con, report, title=title)
        render.print_notes(con, [run_note])
        return
    fmt = "markdown" if args.format == "table" else args.format
    labels_view.write_report(report, fmt, args.output, title=title,
                             meta={"dataset": dataset.name, "run": run_id, "run_note": run_note})
    if report.reason:
        render.console(stderr=True).print(f"No comparison with the human labels of {report.quality!r}: "
                                          f"{report.reason}", markup=False)


def _stop_rule(args: argparse.Namespace, dataset: Any, plan: Any, store: RunStore) -> Any:
    """The stop rule the options ask for, or None."""
    if args.stop_when_ci_width is None and args.baseline_run is None:
        return None
    from dialjudge.core.judges.run.stopping import StopRule
    from dialjudge.core.stats.human import human_labels

    if not plan.quality:
        raise ConfigError("the stop rule needs a human-rated quality (--quality)")
    items = plan.config.select_items(dataset)
    labels = human_labels(items, plan.quality, Aggregation(args.aggregate)).values
    human = {item: (float(v) if isinstance(v, (int, float)) else None) for item, v in labels.items()}
    baseline = None
    if args.baseline_run is not None:
        from dialjudge.core.judging import run_scores

        columns, _ = run_scores(store, args.baseline_run, with_pool=False)
        if not columns:
            raise ConfigError(f"run {args.baseline_run} has no judgments to compare with")
        label = plan.config.variants()[0].label
        baseline = columns.get(label) or next(iter(columns.values()))
    try:
        return StopRule(human, {ex.id: ex.group_id for ex in items}, ci_width=args.stop_when_ci_width,
                        baseline=baseline, baseline_name=f"run {args.baseline_run}", check_every=args.check_every,
                        seed=args.seed)
    except ValueError as exc:
        raise ConfigError(f"--stop-when-ci-width / --check-every: {exc}") from None


def _print_inter_judge(columns: Any) -> None:
    from dialjudge.core.stats.interjudge import inter_judge_matrix

    matrix = inter_judge_matrix(columns)
    rows = [(a, *(f"{_num(matrix.values[i][j])} (n={matrix.n[i][j]})" for j in range(len(matrix.judges))))
            for i, a in enumerate(matrix.judges)]
    render.console().print(render.plain_table("Inter-judge agreement (Spearman ρ on items both scored)",
                                              ["judge × judge", *matrix.judges], rows))


def _print_length_and_certainty(dataset: Any, scores: Any, quality: str, subset: str, *, n_boot: int,
                                seed: int) -> None:
    """Verbosity bias and agreement split by human certainty, one row per judge."""
    from dialjudge.core.stats.baselines import annotator_spread, certainty_split, length_bias, length_scores
    from dialjudge.core.stats.human import human_labels
    from dialjudge.core.subsets import Subset

    selected = Subset(subset).select(dataset.examples)
    human = {i: (float(v) if isinstance(v, (int, float)) else None)
             for i, v in human_labels(selected, quality).values.items()}
    lengths, spread = length_scores(selected), annotator_spread(selected, quality)
    groups = {ex.id: ex.group_id for ex in selected}
    rows = []
    for judge, column in scores.items():
        bias = length_bias(column, human, lengths, evaluator=judge, quality=quality)
        split = certainty_split(column, human, spread, groups, evaluator=judge, quality=quality, n_boot=0,
                                seed=seed)
        rows.append((judge, bias.n, _num(bias.judge_length_rho), _num(bias.human_length_rho),
                     _num(bias.judge_human_rho), _num(bias.partial_rho),
                     f"{_num(split.agree.spearman.value)} (n={split.agree.n})",
                     f"{_num(split.disagree.spearman.value)} (n={split.disagree.n})"))
    con = render.console()
    con.print(render.plain_table(
        f"Length bias and human certainty — {quality} (Spearman ρ)",
        ["judge", "n", "judge~length", "humans~length", "judge~humans", "… length partialled out",
         "annotators agree (spread ≤ 1)", "annotators disagree"], rows,
        right=("n", "judge~length", "humans~length", "judge~humans", "… length partialled out")))


def _fewshot_draws(spec: str, draws: int) -> list[str]:
    """One few-shot spec per draw: random:K@seed, random:K@seed+1, ..."""
    if draws <= 1:
        return [spec]
    from dialjudge.core.judges.prompts.fewshot import FewShotSetting, random_settings

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
                       con: Any, stop_rule: Any = None, order_seed: int | None = 0) -> Any:
    # The bar, then the status line the app's Run screen shows (core/judges/status).
    progress = Progress(TextColumn("[bold]judging"), BarColumn(), TextColumn("{task.fields[detail]}", markup=False),
                        console=con, transient=False)
    state = RunState()
    task = progress.add_task("judging", total=None, detail=status_text(state))

    def on_event(event: Any) -> None:
        state.apply(event)
        total = state.total if state.status is not None else None
        progress.update(task, total=total, completed=state.done, detail=status_text(state))
        if isinstance(event, StopRuleChecked):
            progress.console.print(f"stop rule, {event.state.n_items} items in {event.state.n_contexts} contexts: "
                                   f"{event.state.message}", markup=False)

    with progress, sigterm_as_interrupt():
        return asyncio.run(execute_run(run_config, dataset, store, backends, on_event=on_event,
                                       resume=not fresh, close_backends=True, stop_rule=stop_rule,
                                       context_order_seed=order_seed))


def _print_failures(con: Any, summary: Any) -> None:
    """Why judgments failed, with counts, and which judges a circuit breaker paused."""
    from dialjudge.core.judges.store.status import Part, problem_lines

    for line, part in problem_lines(summary):
        if part is not Part.FAILURES:  # the reasons follow as a table
            con.print(line, style="red" if part is Part.ERROR else "yellow", markup=False, highlight=False)
    if summary.failure_reasons:
        con.print(render.plain_table(
            f"Failures of run {summary.run_id}", ["reason", "count"],
            [(reason, count) for reason, count in summary.failure_reasons], right=("count",)))


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
    from dialjudge.core.judges.post_run.pool import pool_report

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
    from dialjudge.core.judges.post_run.pool import stability

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
    return number_text(x)


def _pct(x: float | None) -> str:
    return percent_text(x)
