"""`dialjudge runs list|show|compare|export|rescore|retry|delete`: the run store from the command line."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dialjudge.core.compare import compare_runs
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.format import number_text
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.report import FORMATS, records_to_latex, records_to_markdown, to_csv, to_json, to_jsonl
from dialjudge.core.run_export import FORMAT_LABELS

from . import render


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list, compare and export judge runs")
    rsub = p.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    rsub.add_parser("list", help="every run in the store").set_defaults(handler=run_list)
    show = rsub.add_parser("show", help="a run's configuration and counts")
    show.add_argument("run", type=int)
    show.set_defaults(handler=run_show)
    cmp_ = rsub.add_parser("compare", help="correlation deltas and the prompt diff between two runs")
    cmp_.add_argument("run_a", type=int)
    cmp_.add_argument("run_b", type=int)
    cmp_.add_argument("--quality", action="append", dest="qualities", metavar="QUALITY")
    cmp_.add_argument("--subset", action="append", dest="subsets", metavar="SUBSET",
                      help="repeatable: all, open, closed, adversarial, system:NAME, ...")
    cmp_.add_argument("--bootstrap", type=int, default=2000, metavar="N",
                      help="paired bootstrap resamples of contexts for the Δ CIs (0: no paired comparison)")
    cmp_.add_argument("--seed", type=int, default=0, help="bootstrap seed")
    cmp_.add_argument("--coefficient", choices=("pearson", "spearman", "kendall"), default="spearman",
                      help="the coefficient the verdict lines speak of")
    cmp_.set_defaults(handler=run_compare)
    export = rsub.add_parser("export", help="per-item judgments as CSV, JSON Lines, JSON, Markdown or LaTeX, "
                                            "or (--to) the app's export files")
    export.add_argument("run", type=int)
    export.add_argument("--format", choices=EXPORT_FORMATS, default="csv",
                        help="the formats of `judge --format`, plus jsonl (one judgment per line)")
    export.add_argument("--output", type=Path)
    export.add_argument("--to", type=Path, dest="folder", metavar="FOLDER",
                        help="write what the app's Runs screen exports (agreement tables, judgments) into FOLDER")
    export.add_argument("--file", action="append", dest="files", choices=tuple(FORMAT_LABELS), metavar="KIND",
                        help=f"repeatable, with --to: {', '.join(FORMAT_LABELS)} (default: all)")
    export.add_argument("--with-metrics", action="store_true",
                        help="with --to: the reference-based metrics join the judges in the agreement tables, "
                             "as in the app when the run's dataset is open")
    export.set_defaults(handler=run_export)
    rescore = rsub.add_parser(
        "rescore", help="score a run's stored answers again (another top-K, mode, parser or answer mapping) into a "
                        "new run, without calling the model",
        description="Score run N's stored raw outputs and log-probabilities again into a new run that names N as its "
                    "source. Nothing is sent to a model. Give at least one of --top-k, --mode, --template, --map.")
    rescore.add_argument("run", type=int)
    rescore.add_argument("--top-k", type=int, metavar="K",
                         help="logprob mode: weigh the K most likely first tokens (0: expected value over all "
                              "answers); at most the number of tokens the run kept (5 or more)")
    rescore.add_argument("--mode", choices=("logprob", "yesno"),
                         help="switch between the probability modes (the stored answers must hold the new mode's "
                              "answers)")
    rescore.add_argument("--template", metavar="NAME|FILE.toml",
                         help="read the answers with this template's output section (a new parser); the prompt "
                              "stays the run's")
    rescore.add_argument("--map", dest="mapping", metavar="ANSWER=VALUE,...",
                         help='an answer mapping, every answer of the template a value, e.g. "1=0,2=0,3=0,4=1,5=1"; '
                              "the scale becomes the values' range")
    rescore.add_argument("--name", default="", help="the new run's name")
    rescore.set_defaults(handler=run_rescore)
    retry = rsub.add_parser(
        "retry", help="judge again only a run's failed judgments (timeouts, backend errors, unparseable answers)",
        description="Ask the run's judges again for every judgment of run N without a score, bypassing the response "
                    "cache; every scored judgment is kept. The run keeps its id.")
    retry.add_argument("run", type=int)
    retry.set_defaults(handler=run_retry)
    delete = rsub.add_parser("delete", help="remove a run and its judgments")
    delete.add_argument("run", type=int)
    delete.set_defaults(handler=run_delete)


def run_list(args: argparse.Namespace) -> int:
    rows = []
    with RunStore() as store:
        records = store.list_runs()
    for r in records:
        cfg = r.run_config
        name = (r.name or "–") + (f" (from run {r.source_run})" if r.source_run is not None else "")
        rows.append((r.id, r.created[:19], name, r.status.value, cfg.dataset, cfg.template_label, cfg.mode.value,
                     ", ".join(j.name for j in cfg.judges), f"{r.judgments}/{r.total}", r.failures))
    render.console().print(render.plain_table(
        "Runs", ["id", "created", "name", "status", "dataset", "template", "mode", "judges", "done", "failed"], rows,
        right=("id", "done", "failed")))
    return 0


def run_show(args: argparse.Namespace) -> int:
    from dialjudge.core.config import load_config
    from dialjudge.core.judges.post_run.cost import USAGE_COLUMNS, run_usage, usage_rows, usage_summary

    prices = load_config().prices
    with RunStore() as store:
        record = store.get_run(args.run)
        usage = run_usage(store, record, prices)
    config = record.run_config
    con = render.console()
    con.print(render.key_values(f"Run {record.id} — {record.status.value}", {
        "created": record.created, "dataset": f"{config.dataset} ({config.subset})",
        "template": config.template_label,
        "mode": config.mode.value + (f" (top-{config.top_k})"
                                     if config.mode is ScoringMode.LOGPROB and config.top_k else ""),
        "aspect / KPI / quality": f"{config.aspect or '–'} / {config.kpi or '–'} / {config.quality or '–'}",
        "judges": ", ".join(v.label for v in config.variants()),
        "few-shot": config.fewshot.spec, "repeats": config.repeats,
        "judgments": f"{record.judgments} of {record.total} ({record.failures} failed)",
        **_source_lines(record),
        "cost and latency": usage_summary(usage),
        **_environment_lines(config.environment),
        "error": record.error or "–"}))
    con.print(render.plain_table(f"Cost and latency of run {record.id}", USAGE_COLUMNS, usage_rows(usage),
                                 right=USAGE_COLUMNS[2:]))
    con.print("[bold]template[/bold]")
    con.print(config.template_text, markup=False, highlight=False)
    return 0


def _source_lines(record: Any) -> dict[str, str]:
    """Where a rescored run's answers came from, and what the rescoring changed."""
    if record.source_run is None:
        return {}
    changed = dict(record.config.get("rescore") or {})
    what = ", ".join(f"{k} {v if not isinstance(v, dict) else json.dumps(v)}" for k, v in changed.items()
                     if v is not None and k != "source_run")
    return {"rescored from": f"run {record.source_run}" + (f" ({what})" if what else "")}


def run_rescore(args: argparse.Namespace) -> int:
    from dialjudge.core.config import load_config
    from dialjudge.core.judges.post_run.rescore import rescore_run, settings_from_options
    from dialjudge.core.registry import open_dataset

    if args.top_k is None and args.mode is None and args.template is None and args.mapping is None:
        raise DialjudgeError("say what to change: --top-k, --mode, --template or --map")
    config = load_config()
    settings = settings_from_options(top_k=args.top_k, mode=args.mode, template=args.template, mapping=args.mapping,
                                     name=args.name, template_dirs=config.template_dirs)
    with RunStore() as store:
        source = store.get_run(args.run).run_config
        dataset = open_dataset(source.dataset_path or source.dataset, config)
        result = rescore_run(store, args.run, dataset, settings)
    con = render.console()
    con.print(f"run {result.run_id}: run {result.source_run} rescored ({settings.describe()}), no model called; "
              f"{result.rescored} judgments, {result.failures} without a score, {result.changed} changed",
              markup=False, highlight=False)
    con.print(f"compare them: dialjudge runs compare {result.source_run} {result.run_id}", markup=False,
              highlight=False, style="dim")
    return 0


def run_retry(args: argparse.Namespace) -> int:
    import asyncio

    from rich.progress import BarColumn, Progress, TextColumn

    from dialjudge.core.config import load_config
    from dialjudge.core.judges.post_run.retry import check_retryable, retry_run
    from dialjudge.core.judges.store.status import RunState, RunStatus, status_text
    from dialjudge.core.judging import build_backends
    from dialjudge.core.registry import open_dataset

    from .signals import sigterm_as_interrupt

    with RunStore() as store:
        record = store.get_run(args.run)
        check_retryable(store, args.run)
        failed = record.failures
        config = record.run_config
        dataset = open_dataset(config.dataset_path or config.dataset, load_config())
        con = render.console(stderr=True)
        con.print(f"run {args.run}: {failed} judgments without a score to ask again", markup=False)
        progress = Progress(TextColumn("[bold]retrying"), BarColumn(), TextColumn("{task.fields[detail]}",
                                                                                   markup=False),
                            console=con, transient=False)
        state = RunState()
        task = progress.add_task("retrying", total=None, detail=status_text(state))

        def on_event(event: Any) -> None:
            state.apply(event)
            progress.update(task, total=state.total or None, completed=state.done, detail=status_text(state))

        with progress, sigterm_as_interrupt():
            summary = asyncio.run(retry_run(store, args.run, dataset, build_backends(config), on_event=on_event,
                                            close_backends=True))
        left = store.get_run(args.run).failures
    render.console().print(f"run {args.run} {summary.status}: {failed - left} of {failed} failed judgments now "
                           f"scored, {left} still without a score", markup=False, highlight=False)
    for reason, count in summary.failure_reasons:
        con.print(f"  {count} × {reason}", markup=False, highlight=False)
    return 0 if summary.status == RunStatus.FINISHED else 1


def _environment_lines(environment: Mapping[str, Any]) -> dict[str, str]:
    """Where each local model ran, and the library versions, as recorded when the run started."""
    lines = {f"{name} runs on": str(info.get("where", "–"))
             for name, info in dict(environment.get("judges") or {}).items()}
    versions = environment.get("versions") or {}
    if versions:
        lines["versions"] = ", ".join(f"{name} {version}" for name, version in versions.items())
    return lines


def run_compare(args: argparse.Namespace) -> int:
    with RunStore() as store:
        comparison = compare_runs(store, args.run_a, args.run_b, qualities=args.qualities,
                                  subsets=args.subsets or ["all"], paired_boot=args.bootstrap, seed=args.seed)
    rows = [(d.evaluator, d.quality, d.subset, d.coefficient, _num(d.before), _num(d.after), _signed(d.change),
             f"{d.n_before}/{d.n_after}") for d in comparison.deltas]
    con = render.console()
    con.print(render.plain_table(
        f"Run {args.run_a} → run {args.run_b} ({comparison.dataset})",
        ["judge", "quality", "subset", "coefficient", f"run {args.run_a}", f"run {args.run_b}", "Δ", "n"], rows,
        right=(f"run {args.run_a}", f"run {args.run_b}", "Δ", "n")))
    if comparison.paired:
        render.print_paired(con, comparison.paired, args.coefficient)
    if comparison.config_changes:
        con.print(render.plain_table("Configuration changes", ["key", f"run {args.run_a}", f"run {args.run_b}"],
                                     [(k, json.dumps(a), json.dumps(b)) for k, a, b in comparison.config_changes]))
    if comparison.prompt_diff:
        con.print("[bold]Prompt diff[/bold]")
        for line in comparison.prompt_diff:
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else None
            con.print(line, style=style, markup=False, highlight=False)
    else:
        con.print("[dim]The two runs used the same template and personas.[/dim]")
    return 0


#: What `runs export` writes: every file format of `judge --format` (not its terminal table), and jsonl.
EXPORT_FORMATS = tuple(f for f in FORMATS if f != "table") + ("jsonl",)
#: Markdown and LaTeX are for reading: the columns that fit a page.
TABLE_COLUMNS = ("item_id", "judge", "repeat", "score", "normalized", "error")


def run_export(args: argparse.Namespace) -> int:
    if args.folder is not None:
        return _export_files(args)
    if args.files:
        raise DialjudgeError("--file chooses what --to writes; give --to FOLDER too")
    with RunStore() as store:
        record = store.get_run(args.run)
        rows = store.export_rows(args.run)
    if not rows:
        raise DialjudgeError(f"run {args.run} has no judgments")
    title = f"Run {record.id} judgments ({record.status})"
    if args.format == "jsonl":
        text = to_jsonl(rows)
    elif args.format == "json":
        text = to_json(rows, meta={"run": record.id, "name": record.name, "status": record.status,
                                   "total": record.total})
    elif args.format == "markdown":
        text = records_to_markdown(rows, TABLE_COLUMNS, title=title)
    elif args.format == "latex":
        text = records_to_latex(rows, TABLE_COLUMNS, title=title)
    else:
        text = to_csv(rows)
    if args.output:
        render.write_output(args.output, text)
        render.console(stderr=True).print(f"wrote {len(rows)} judgments to {args.output}", markup=False)
    else:
        print(text, end="")
    return 0


def _export_files(args: argparse.Namespace) -> int:
    """The files the app's Runs screen writes (core/run_export), computed the same way."""
    from dialjudge.core.config import load_config
    from dialjudge.core.registry import open_dataset
    from dialjudge.core.run_export import export_run

    formats = args.files or list(FORMAT_LABELS)
    with RunStore() as store:
        config = store.get_run(args.run).run_config
        dataset = open_dataset(config.dataset_path or config.dataset, load_config())
        metrics = None
        if args.with_metrics:
            from dialjudge.core.metrics import score_examples

            scores = score_examples(dataset.examples, None)
            metrics = {scores.info(m).label: dict(scores[m]) for m in scores.metric_ids}
        result = export_run(store, args.run, dataset, args.folder, formats, extra_scores=metrics)
    con = render.console(stderr=True)
    for path in result.paths:
        con.print(f"wrote {path}", markup=False, highlight=False)
    return 0


def run_delete(args: argparse.Namespace) -> int:
    with RunStore() as store:
        deleted = store.delete_run(args.run)
    if not deleted:
        raise DialjudgeError(f"no run {args.run}")
    render.console(stderr=True).print(f"deleted run {args.run}")
    return 0


def _num(x: float | None) -> str:
    return number_text(x)


def _signed(x: float | None) -> str:
    return number_text(x, signed=True)
