"""`dialjudge runs list|show|compare|export|delete`: the run store from the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dialjudge.core.compare import compare_runs
from dialjudge.core.report import to_csv, to_jsonl
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.judges.runs import RunConfig
from dialjudge.core.judges.store import RunStore
from dialjudge.core.judges.types import ScoringMode

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
    export = rsub.add_parser("export", help="per-item judgments as CSV or JSONL")
    export.add_argument("run", type=int)
    export.add_argument("--format", choices=("csv", "jsonl"), default="csv")
    export.add_argument("--output", type=Path)
    export.set_defaults(handler=run_export)
    delete = rsub.add_parser("delete", help="remove a run and its judgments")
    delete.add_argument("run", type=int)
    delete.set_defaults(handler=run_delete)


def run_list(args: argparse.Namespace) -> int:
    rows = []
    with RunStore() as store:
        records = store.list_runs()
    for r in records:
        cfg = r.config
        rows.append((r.id, r.created[:19], r.name or "–", r.status, cfg.get("dataset", {}).get("name"),
                     cfg.get("template", {}).get("name"), cfg.get("mode"),
                     ", ".join(j.get("name", "?") for j in cfg.get("judges", [])),
                     f"{r.judgments}/{r.total}", r.failures))
    render.console().print(render.plain_table(
        "Runs", ["id", "created", "name", "status", "dataset", "template", "mode", "judges", "done", "failed"], rows,
        right=("id", "done", "failed")))
    return 0


def run_show(args: argparse.Namespace) -> int:
    with RunStore() as store:
        record = store.get_run(args.run)
    config = RunConfig.from_dict(record.config)
    con = render.console()
    con.print(render.key_values(f"Run {record.id} — {record.status}", {
        "created": record.created, "dataset": f"{config.dataset} ({config.subset})",
        "template": config.template,
        "mode": config.mode.value + (f" (top-{config.top_k})"
                                     if config.mode is ScoringMode.LOGPROB and config.top_k else ""),
        "aspect / KPI / quality": f"{config.aspect or '–'} / {config.kpi or '–'} / {config.quality or '–'}",
        "judges": ", ".join(v.label for v in config.variants()),
        "few-shot": config.fewshot.spec, "repeats": config.repeats,
        "judgments": f"{record.judgments} of {record.total} ({record.failures} failed)",
        "error": record.error or "–"}))
    con.print("[bold]template[/bold]")
    con.print(config.template_text, markup=False, highlight=False)
    return 0


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


def run_export(args: argparse.Namespace) -> int:
    with RunStore() as store:
        rows = store.export_rows(args.run)
    if not rows:
        raise DialjudgeError(f"run {args.run} has no judgments")
    text = to_jsonl(rows) if args.format == "jsonl" else to_csv(rows)
    if args.output:
        render.write_output(args.output, text)
        render.console(stderr=True).print(f"wrote {len(rows)} judgments to {args.output}", markup=False)
    else:
        print(text, end="")
    return 0


def run_delete(args: argparse.Namespace) -> int:
    with RunStore() as store:
        deleted = store.delete_run(args.run)
    if not deleted:
        raise DialjudgeError(f"no run {args.run}")
    render.console(stderr=True).print(f"deleted run {args.run}")
    return 0


def _num(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _signed(x: float | None) -> str:
    return "–" if x is None else f"{x:+.3f}"
