"""`dialjudge runs import FILE --dataset D`: judge scores made elsewhere become a stored run of kind "imported"."""

from __future__ import annotations

import argparse
from pathlib import Path

from dialjudge.core.api import (
    AGREEMENT_COLUMNS,
    IMPORT_FORMATS,
    ImportRefused,
    ImportReport,
    ImportRequest,
    PreferenceRequest,
    RunStore,
    agreement_notes,
    agreement_rows,
    import_scores,
    on_prepaired_items,
    open_dataset,
    stored_preference_report,
)

from . import render


def register(rsub: argparse._SubParsersAction) -> None:
    formats = "; ".join(f"{name}: {description}" for name, description in IMPORT_FORMATS.items())
    p = rsub.add_parser(
        "import", help="store judge scores made elsewhere (CSV/JSONL, a dialjudge export, Inspect AI, promptfoo) "
                       "as a run of kind imported",
        description="Read FILE, match its rows to the dataset's items (by item id, or by context and response "
                    "text) and store the scores as a finished run that every statistic, comparison and export "
                    f"reads like a judged one. Formats: {formats}.")
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--dataset", required=True, help="the dataset the scores are for (name or path)")
    p.add_argument("--template", default="likert-1to5",
                   help="the template whose scale the scores are on and whose parser reads imported answers "
                        "(default: likert-1to5; pairwise verdicts: pairwise-plain)")
    p.add_argument("--quality", help="the human-rated quality the scores are compared with (default: Overall)")
    p.add_argument("--judge-name", help="the judge's name in the run (a file holding one judge)")
    p.add_argument("--name", default="", help="the run's name")
    p.add_argument("--format", choices=tuple(IMPORT_FORMATS), help="the file's format (default: detected)")
    p.add_argument("--scale", metavar="LOW-HIGH",
                   help="the scores' own scale, mapped linearly onto the template's (e.g. 1-10); without it, a "
                        "score outside the template's scale refuses the import")
    p.add_argument("--strict", action="store_true",
                   help="refuse the import on any unmatched or duplicate row, missing score or value outside the "
                        "scale")
    p.set_defaults(handler=run_import)


def run_import(args: argparse.Namespace) -> int:
    request = ImportRequest(file=args.file, dataset=args.dataset, template=args.template, quality=args.quality,
                            judge_name=args.judge_name, name=args.name, strict=args.strict, scale=args.scale,
                            format=args.format)
    with RunStore() as store:
        try:
            result = import_scores(store, request)
        except ImportRefused as refused:
            _print_report(refused.report)
            raise
        _print_report(result.report)
        _print_preferences(store, result.run_id, args.dataset)
    con = render.console()
    con.print(f"run {result.run_id}: imported from {args.file.name} ({result.report.format}), kind imported",
              markup=False, highlight=False)
    con.print(f"see it: dialjudge runs show {result.run_id}; compare: dialjudge runs compare RUN {result.run_id}",
              markup=False, highlight=False, style="dim")
    return 0


def _print_report(report: ImportReport) -> None:
    con = render.console()
    for line in report.summary_lines():
        con.print(line, markup=False, highlight=False)


def _print_preferences(store: RunStore, run_id: int, dataset_name: str) -> None:
    """Verdicts on pre-paired data: the agreement table ``judge`` prints for a native pairwise run."""
    config = store.runs.get_run(run_id).run_config
    if config.pairs is None:
        return
    dataset = open_dataset(dataset_name, remember=False)
    if not on_prepaired_items(config, dataset):
        return
    report = stored_preference_report(store, run_id, dataset, PreferenceRequest())
    con = render.console()
    con.print(render.plain_table(f"Judges vs the humans' preferences — {dataset.name}, run {run_id}",
                                 AGREEMENT_COLUMNS, agreement_rows(report), right=AGREEMENT_COLUMNS[1:]))
    render.print_notes(con, agreement_notes(report))
