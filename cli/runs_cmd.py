"""`dialjudge runs list|show|compare|export|rescore|retry|delete|import`: the run store from the command line."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dialjudge.core.api import (
    CompareRequest,
    EngineOptions,
    ExportRequest,
    RescoreRequest,
    RunComparison,
    RunDetails,
    RunRecord,
    SearchEntry,
    compare,
    dataset_of_run,
    delete,
    export,
    judgment_rows,
    mass_lines,
    metric_scores,
    prepare_retry,
    rescore,
    run_config_of,
    run_details,
    run_list,
    run_record,
    start_run,
    write_judgments_file,
)
from dialjudge.core.api.batch import batch_lines, batch_state
from dialjudge.core.api.formatting import (
    FORMAT_LABELS,
    FORMATS,
    USAGE_COLUMNS,
    records_text,
    usage_rows,
    usage_summary,
)
from dialjudge.core.api.html_report import HTML_FORMAT, HtmlReportRequest, write_html_report
from dialjudge.core.api.pair_runs import PAIR_COMPARISON_COLUMNS, pair_comparison_notes, pair_comparison_rows
from dialjudge.core.api.probability_lines import scoring_lines
from dialjudge.core.api.stored import environment_lines
from dialjudge.core.api.types import (
    RunStatus,
    ScoringMode,
)
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.format import number_text

from . import batch_cmd, labels_cmd, protocol_cmd, render, runs_import
from .progress import ProgressDisplay
from .signals import sigterm_as_interrupt


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("runs", help="list, compare and export judge runs")
    rsub = p.add_subparsers(dest="runs_command", metavar="ACTION", required=True)
    listing = rsub.add_parser("list", help="every run in the store (a tuning search's runs on one line)")
    listing.add_argument("--unfold", action="store_true",
                         help="list every run of a tuning search instead of one line per search")
    listing.set_defaults(handler=run_list_cmd)
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
                                            "the run's HTML report, or (--to) the app's export files")
    export.add_argument("run", type=int)
    export.add_argument("--format", choices=EXPORT_FORMATS, default="csv",
                        help="the formats of `judge --format`, plus jsonl (one judgment per line) and html (the "
                             "run's self-contained report, as `dialjudge report` writes it)")
    export.add_argument("--output", type=Path)
    export.add_argument("--to", type=Path, dest="folder", metavar="FOLDER",
                        help="write what the app's Runs screen exports (agreement tables, judgments) into FOLDER")
    export.add_argument("--file", action="append", dest="files", choices=tuple(FORMAT_LABELS), metavar="KIND",
                        help=f"repeatable, with --to: {', '.join(FORMAT_LABELS)} (default: all)")
    export.add_argument("--with-metrics", action="store_true",
                        help="with --to or --format html: the reference-based metrics join the judges in the tables, "
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
    batch_cmd.add_retry_option(retry)
    retry.set_defaults(handler=run_retry)
    delete = rsub.add_parser("delete", help="remove a run and its judgments")
    delete.add_argument("run", type=int)
    delete.set_defaults(handler=run_delete)
    labels_cmd.register(rsub)
    runs_import.register(rsub)
    batch_cmd.register_runs(rsub)
    protocol_cmd.register(rsub)


#: What `runs list` shows; `drop` in run_list says which go first when the terminal is narrow.
LIST_COLUMNS = ("id", "created", "name", "status", "dataset", "aspect/KPI", "template", "mode", "judges", "done",
                "failed")


def run_list_cmd(args: argparse.Namespace) -> int:
    listing = run_list(args.session, fold_searches=not args.unfold)
    rows = [_search_row(entry) if isinstance(entry, SearchEntry) else _run_row(entry) for entry in listing.entries]
    con = render.console()
    con.print(render.plain_table(
        "Runs", LIST_COLUMNS, rows, right=("id", "done", "failed"), numbers=("created",),
        drop=("created", "mode", "judges", "dataset", "template", "status")))
    folded = [e for e in listing.entries if isinstance(e, SearchEntry)]
    if folded:
        con.print(f"[dim]{len(folded)} tuning search{'es' if len(folded) > 1 else ''} folded "
                  f"({sum(len(e.runs) for e in folded)} runs): --unfold lists every run[/dim]")
    render.print_notes(con, listing.notes)
    return 0


def _run_row(r: RunRecord) -> tuple[object, ...]:
    cfg = r.run_config
    name = (r.name or "–") + (f" (from run {r.source_run})" if r.source_run is not None else
                              " (imported)" if r.kind == "imported" else "")
    return (r.id, r.created[:19], name, batch_state(r) or r.status.value, cfg.dataset, cfg.kpi or cfg.aspect or "–",
            cfg.template_label, cfg.mode.value, ", ".join(j.name for j in cfg.judges), f"{r.judgments}/{r.total}",
            r.failures)


def _search_row(entry: SearchEntry) -> tuple[object, ...]:
    runs = entry.runs
    aspects = sorted({r.run_config.kpi or r.run_config.aspect or "–" for r in runs})
    templates = sorted({r.run_config.template_label for r in runs})
    judges = sorted({j.name for r in runs for j in r.run_config.judges})
    statuses = sorted({r.status.value for r in runs})
    modes = sorted({r.run_config.mode.value for r in runs})
    return (entry.id_range, entry.newest.created[:19], entry.summary, ", ".join(statuses), entry.dataset,
            ", ".join(aspects), f"{len(templates)} templates" if len(templates) > 1 else templates[0],
            ", ".join(modes), ", ".join(judges), f"{sum(r.judgments for r in runs)}/{sum(r.total for r in runs)}",
            sum(r.failures for r in runs))


def run_show(args: argparse.Namespace) -> int:
    details = run_details(args.session, args.run, args.session.config)
    masses = mass_lines(args.session, args.run)
    record, usage = details.record, details.usage
    config = record.run_config
    con = render.console()
    con.print(render.key_values(f"Run {record.id} — {batch_state(record) or record.status.value}", {
        "created": record.created, "dataset": f"{config.dataset} ({config.subset})",
        "template": config.template_label,
        "mode": config.mode.value + (f" (top-{config.top_k})"
                                     if config.mode is ScoringMode.LOGPROB and config.top_k else ""),
        "aspect / KPI / quality": f"{config.aspect or '–'} / {config.kpi or '–'} / {config.quality or '–'}",
        "judges": ", ".join(v.label for v in config.variants()),
        "few-shot": config.fewshot.spec, "repeats": config.repeats,
        "judgments": f"{record.judgments} of {record.total} ({record.failures} failed)",
        **_source_lines(details),
        **batch_lines(record),
        "cost and latency": usage_summary(usage),
        **environment_lines(config.environment),
        **scoring_lines(config.environment),
        **masses,
        "error": record.error or "–"}))
    con.print(render.plain_table(f"Cost and latency of run {record.id}", USAGE_COLUMNS, usage_rows(usage),
                                 right=USAGE_COLUMNS[2:]))
    con.print("[bold]template[/bold]")
    con.print(config.template_text, markup=False, highlight=False)
    return 0


def _source_lines(details: RunDetails) -> dict[str, str]:
    """Where a rescored run's answers came from, and what the rescoring changed; an imported run's file."""
    record = details.record
    imported = record.config.get("imported")
    if record.source_run is None and imported:
        return {"imported from": f"{imported.get('file')} ({imported.get('format')} format, sha256 "
                                 f"{str(imported.get('sha256'))[:12]}…, importer {imported.get('importer_version')})",
                "import scale": str(imported.get("scale") or "the template's")}
    if record.source_run is None:
        return {}
    what = ", ".join(f"{k} {v if not isinstance(v, dict) else json.dumps(v)}"
                     for k, v in details.source_changes.items())
    return {"rescored from": f"run {record.source_run}" + (f" ({what})" if what else "")}


def run_rescore(args: argparse.Namespace) -> int:
    if args.top_k is None and args.mode is None and args.template is None and args.mapping is None:
        raise DialjudgeError("say what to change: --top-k, --mode, --template or --map")
    request = RescoreRequest(top_k=args.top_k, mode=args.mode, template=args.template, mapping=args.mapping,
                             name=args.name)
    result, settings = rescore(args.session, args.run, request, args.session.config)
    con = render.console()
    con.print(f"run {result.run_id}: run {result.source_run} rescored ({settings.describe()}), no model called; "
              f"{result.rescored} judgments, {result.failures} without a score, {result.changed} changed",
              markup=False, highlight=False)
    con.print(f"compare them: dialjudge runs compare {result.source_run} {result.run_id}", markup=False,
              highlight=False, style="dim")
    return 0


def run_retry(args: argparse.Namespace) -> int:
    if args.batch_out is not None:
        return batch_cmd.retry(args)
    config = args.session.config
    dataset = dataset_of_run(run_config_of(args.session, args.run), config)
    retry = prepare_retry(args.session, args.run, dataset)
    con = render.console(stderr=True)
    con.print(f"run {args.run}: {retry.failed} judgments without a score to ask again", markup=False)
    with ProgressDisplay(con, "retrying") as display, sigterm_as_interrupt():
        summary = start_run(args.session, retry.config, dataset, display=display,
                            options=EngineOptions(run_id=args.run), retry=True).run_to_end()
    left = run_record(args.session, args.run).failures
    render.console().print(f"run {args.run} {summary.status}: {retry.failed - left} of {retry.failed} failed "
                           f"judgments now scored, {left} still without a score", markup=False, highlight=False)
    for reason, count in summary.failure_reasons:
        con.print(f"  {count} × {reason}", markup=False, highlight=False)
    return 0 if summary.status == RunStatus.FINISHED else 1


def run_compare(args: argparse.Namespace) -> int:
    request = CompareRequest(args.run_a, args.run_b, qualities=tuple(args.qualities or ()),
                             subsets=tuple(args.subsets or ()), paired_boot=args.bootstrap, seed=args.seed)
    comparison = compare(args.session, request, args.session.config)
    if comparison.on_pairs:
        _print_pair_verdicts(comparison, args.run_a, args.run_b)
        return 0
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


def _print_pair_verdicts(comparison: RunComparison, run_a: int, run_b: int) -> None:
    """Runs that judged pairs: the verdict of the paired test on the pairs both judged, the rule named."""
    con = render.console()
    con.print(render.plain_table(f"Run {run_a} → run {run_b} ({comparison.dataset}): agreement with the humans' "
                                 "preference on the pairs both judged", PAIR_COMPARISON_COLUMNS,
                                 pair_comparison_rows(comparison.pair_verdicts),
                                 right=PAIR_COMPARISON_COLUMNS[1:]))
    for test in comparison.pair_verdicts:
        con.print(test.verdict(), markup=False, highlight=False)
    if not comparison.pair_verdicts:
        con.print("Neither run has a judge: no comparison.", markup=False, highlight=False)
    render.print_notes(con, pair_comparison_notes())
    if comparison.config_changes:
        con.print(render.plain_table("Configuration changes", ["key", f"run {run_a}", f"run {run_b}"],
                                     [(k, json.dumps(a), json.dumps(b)) for k, a, b in comparison.config_changes]))


#: What `runs export` writes: every file format of `judge --format` (not its terminal table), jsonl and html.
EXPORT_FORMATS = tuple(f for f in FORMATS if f != "table") + ("jsonl", HTML_FORMAT)
#: Markdown and LaTeX are for reading: the columns that fit a page.
TABLE_COLUMNS = ("item_id", "judge", "repeat", "score", "normalized", "valid_mass", "error")


def run_export(args: argparse.Namespace) -> int:
    if args.folder is not None:
        return _export_files(args)
    if args.files:
        raise DialjudgeError("--file chooses what --to writes; give --to FOLDER too")
    if args.format == HTML_FORMAT:
        return _export_report(args)
    if args.output and args.format in ("csv", "jsonl"):
        # Streamed from the store into the file: a 100,000-judgment run holds no rows in memory.
        count = write_judgments_file(args.session, args.run, args.output, args.format)
        render.console(stderr=True).print(f"wrote {count} judgments to {args.output}", markup=False)
        return 0
    record, rows = judgment_rows(args.session, args.run)
    title = f"Run {record.id} judgments ({record.status})"
    text = records_text(rows, args.format, columns=TABLE_COLUMNS, title=title,
                        meta={"run": record.id, "name": record.name, "status": record.status, "total": record.total})
    if args.output:
        render.write_output(args.output, text)
        render.console(stderr=True).print(f"wrote {len(rows)} judgments to {args.output}", markup=False)
    else:
        print(text, end="")
    return 0


def _export_report(args: argparse.Namespace) -> int:
    """The run's HTML report (the use case of `dialjudge report`), into --output or to standard output."""
    result = write_html_report(args.session, HtmlReportRequest((args.run,), args.output,
                                                               metrics=args.with_metrics))
    if args.output is None:
        print(result.text, end="")
    else:
        render.console(stderr=True).print(f"wrote {result.path} ({result.bytes_written / 1e6:.1f} MB)", markup=False)
    return 0


def _export_files(args: argparse.Namespace) -> int:
    """The files the app's Runs screen writes (core/run_export), computed the same way."""
    config = args.session.config
    dataset = dataset_of_run(run_config_of(args.session, args.run), config)
    metrics = None
    if args.with_metrics:
        metrics = metric_scores(dataset)
    request = ExportRequest(args.run, args.folder, tuple(args.files or ()), metric_scores=metrics)
    result = export(args.session, request, config, current=dataset)
    con = render.console(stderr=True)
    for path in result.paths:
        con.print(f"wrote {path}", markup=False, highlight=False)
    return 0


def run_delete(args: argparse.Namespace) -> int:
    delete(args.session, args.run)
    render.console(stderr=True).print(f"deleted run {args.run}")
    return 0


def _num(x: float | None) -> str:
    return number_text(x)


def _signed(x: float | None) -> str:
    return number_text(x, signed=True)
