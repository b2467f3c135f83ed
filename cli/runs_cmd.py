"""`dialjudge runs list|show|compare|export|delete`: the run store from the command line."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dialjudge.core.compare import compare_runs
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.format import number_text
from dialjudge.core.judges.store import RunStore
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
    delete = rsub.add_parser("delete", help="remove a run and its judgments")
    delete.add_argument("run", type=int)
    delete.set_defaults(handler=run_delete)


def run_list(args: argparse.Namespace) -> int:
    rows = []
    with RunStore() as store:
        records = store.list_runs()
    for r in records:
        cfg = r.run_config
        rows.append((r.id, r.created[:19], r.name or "–", r.status.value, cfg.dataset, cfg.template, cfg.mode.value,
                     ", ".join(j.name for j in cfg.judges), f"{r.judgments}/{r.total}", r.failures))
    render.console().print(render.plain_table(
        "Runs", ["id", "created", "name", "status", "dataset", "template", "mode", "judges", "done", "failed"], rows,
        right=("id", "done", "failed")))
    return 0


def run_show(args: argparse.Namespace) -> int:
    with RunStore() as store:
        record = store.get_run(args.run)
    config = record.run_config
    con = render.console()
    con.print(render.key_values(f"Run {record.id} — {record.status.value}", {
        "created": record.created, "dataset": f"{config.dataset} ({config.subset})",
        "template": config.template,
        "mode": config.mode.value + (f" (top-{config.top_k})"
                                     if config.mode is ScoringMode.LOGPROB and config.top_k else ""),
        "aspect / KPI / quality": f"{config.aspect or '–'} / {config.kpi or '–'} / {config.quality or '–'}",
        "judges": ", ".join(v.label for v in config.variants()),
        "few-shot": config.fewshot.spec, "repeats": config.repeats,
        "judgments": f"{record.judgments} of {record.total} ({record.failures} failed)",
        **_environment_lines(config.environment),
        "error": record.error or "–"}))
    con.print("[bold]template[/bold]")
    con.print(config.template_text, markup=False, highlight=False)
    return 0


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
