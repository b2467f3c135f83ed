"""Batch runs on the command line: ``judge ... --batch-out FILE`` writes a run's requests for the OpenAI
Batch API or vLLM's run-batch, ``runs answers RUN FILE...`` imports their answers, ``runs retry RUN
--batch-out FILE`` writes the failed judgments again; a live ``judge`` of a run that awaits answers says so."""

from __future__ import annotations

import argparse
from pathlib import Path

from dialjudge.core.api import (
    RunPlan,
    dataset_of_run,
    run_config_of,
)
from dialjudge.core.api.batch import (
    AnswersImport,
    BatchExport,
    awaiting_run,
    batch_state,
    import_answers,
    retry_batch,
    write_batch,
)
from dialjudge.core.errors import ConfigError
from dialjudge.core.model import Dataset

from . import render

#: Problems listed one by one before the rest are only counted.
SHOWN_PROBLEMS = 12


def add_judge_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch-out", type=Path, metavar="FILE",
                   help="write the run's requests to FILE for the OpenAI Batch API or vLLM's run-batch instead of "
                        "judging (split at 50,000 requests or 200 MB); then: runs answers RUN RESULTS.jsonl")
    p.add_argument("--continue-live", action="store_true",
                   help="a run of the same settings awaits batch answers: judge its unanswered judgments here")


def register_runs(rsub: argparse._SubParsersAction) -> None:
    p = rsub.add_parser("answers", help="import a batch engine's answer files into a run written with --batch-out",
                        description="Match each line's custom_id to the run's judgments and score the answers as a "
                                    "live run does. Repeatable, in any order, with partial files; a file given "
                                    "twice is harmless. Lines that cannot be used are counted and named.")
    p.add_argument("run", type=int)
    p.add_argument("files", type=Path, nargs="+", metavar="RESULTS.jsonl")
    p.set_defaults(handler=answers_cmd)


def add_retry_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batch-out", type=Path, metavar="FILE",
                   help="a batch run: write its failed judgments into a new batch file instead of asking live")


def write(args: argparse.Namespace, plans: list[RunPlan], dataset: Dataset) -> int:
    """``judge --batch-out``: write the run's requests; nothing is judged."""
    if len(plans) > 1:
        raise ConfigError("--batch-out writes one run; it cannot be combined with --fewshot-draws")
    if args.stop_when_ci_width is not None or args.baseline_run is not None:
        raise ConfigError("a stop rule watches a run as it is judged; a batch file is answered all at once")
    exported = write_batch(args.session, plans[0], dataset, args.batch_out, order_seed=args.order_seed)
    _print_export(exported, "continued: its unanswered judgments" if exported.continued else "")
    return 0


def awaiting_decision(args: argparse.Namespace, plans: list[RunPlan]) -> tuple[int | None, bool]:
    """A live ``judge`` of settings written to a batch file: (the run to continue with ``--continue-live``,
    whether to stop instead: without it, the command says so and exits 2). (None, False): no such run."""
    if args.fresh or len(plans) != 1:
        return None, False
    record = awaiting_run(args.session, plans[0])
    if record is None:
        return None, False
    if args.continue_live:
        return record.id, False
    render.console(stderr=True).print(
        f"run {record.id} has these settings and was written to a batch file ({batch_state(record)}): import "
        f"its answers with `dialjudge runs answers {record.id} RESULTS.jsonl`, or give --continue-live to judge "
        "its unanswered judgments here (or --fresh for a new run)", markup=False, highlight=False)
    return None, True


def retry(args: argparse.Namespace) -> int:
    dataset = dataset_of_run(run_config_of(args.session, args.run), args.session.config)
    _print_export(retry_batch(args.session, args.run, dataset, args.batch_out), "its failed judgments")
    return 0


def _print_export(exported: BatchExport, what: str) -> None:
    con = render.console()
    files = ", ".join(f"{f.path} ({f.requests} requests)" for f in exported.files) or "no file (nothing to ask)"
    con.print(f"run {exported.run_id}{f' ({what})' if what else ''}: wrote {exported.requests} of "
              f"{exported.total} requests to {files}", markup=False, highlight=False)
    if exported.too_long:
        con.print(f"{exported.too_long} prompts are longer than the judge's window: stored as failed, not written",
                  markup=False, highlight=False)
    con.print(f"submit to the OpenAI Batch API or run `vllm run-batch -i FILE -o RESULTS.jsonl --model ...`, then "
              f"`dialjudge runs answers {exported.run_id} RESULTS.jsonl`", markup=False, highlight=False)


def answers_cmd(args: argparse.Namespace) -> int:
    for path in args.files:
        if not path.is_file():
            raise ConfigError(f"{path}: no such answer file")
    dataset = dataset_of_run(run_config_of(args.session, args.run), args.session.config)
    report = import_answers(args.session, args.run, list(args.files), dataset)
    _print_import(report)
    return 0 if report.problems == [] and not report.other_models else 1


def _print_import(report: AnswersImport) -> None:
    con = render.console()
    out = render.console(stderr=True)
    for entry in report.files:
        out.print(f"{entry['file']}: {entry['lines']} lines, provider {entry['provider']}, sha256 "
                  f"{entry['sha256'][:16]}…", markup=False, highlight=False)
    for problem in report.problems[:SHOWN_PROBLEMS]:
        out.print(f"  {problem.kind}: {problem}", markup=False, highlight=False)
    if len(report.problems) > SHOWN_PROBLEMS:
        out.print(f"  … and {len(report.problems) - SHOWN_PROBLEMS} more", markup=False, highlight=False)
    if report.counts:
        out.print("lines not scored: " + ", ".join(f"{n} {kind}" for kind, n in sorted(report.counts.items())),
                  markup=False, highlight=False)
    for model, n in report.other_models.items():
        planned = ", ".join(sorted(set(report.planned_models.values())))
        out.print(f"warning: {n} answers say model {model!r} answered them; the run planned {planned}",
                  markup=False, highlight=False)
    state = ("finished: every judgment has an answer" if report.awaiting == 0 else
             f"awaiting {report.awaiting} of {report.total} answers (for example {', '.join(report.missing)})")
    con.print(f"run {report.run_id}: {report.scored_now} answers scored now; {state}", markup=False,
              highlight=False)
