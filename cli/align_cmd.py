"""`dialjudge align RUN`: judge variants made from your corrections, reported on contexts none of them touched."""

from __future__ import annotations

import argparse
from pathlib import Path

from dialjudge.core.api import align as al
from dialjudge.core.api.labels_estimates import read_labels_file
from dialjudge.core.format import number_text

from . import render
from .signals import sigterm_as_interrupt
from .tune_cmd import SearchPrinter

TABLE = "table"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "align", help="align a run's judge to your corrections; report the winner on contexts they did not touch",
        description="Propose variants of run RUN's judge that use your corrections (few-shot examples from your "
                    "labels, chosen by BM25 or at random; your notes added to the rubric; a persona), pick the one "
                    "that agrees best with your labels, and report it beside the starting judge on the contexts no "
                    "correction touched: the paired verdict with its CI and the overfitting gap (docs/align.md). "
                    "Without --labels, the corrections are your own ratings in Review, and the notes its notes.")
    p.add_argument("run", type=int)
    p.add_argument("--labels", type=Path, metavar="FILE",
                   help="your labels: CSV or JSON Lines with item_id and label (as `runs estimate` reads them)")
    p.add_argument("--notes", type=Path, metavar="FILE",
                   help="rubric notes: a text file, one note per paragraph (default: the run's review notes)")
    p.add_argument("--judge", help="the run's judge to align (default: its first)")
    p.add_argument("--k", type=int, default=3, help="few-shot examples per prompt (default 3)")
    p.add_argument("--persona", help="a persona to try, or none (default: the one your corrections point to)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random few-shot draw and the bootstrap")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples for the CIs")
    p.add_argument("--save", metavar="NAME", help="save the winner's template as NAME in your templates folder")
    p.add_argument("--format", choices=(TABLE, *al.FORMATS), default=None,
                   help=f"report format (default: {TABLE}; markdown with --out)")
    p.add_argument("--out", type=Path, help="write the report here instead of printing it")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    labels = read_labels_file(args.labels) if args.labels is not None else None
    notes = al.read_notes_file(args.notes) if args.notes is not None else None
    request = al.AlignRequest(args.run, labels=labels, labels_source=f"labels file {args.labels}" if labels else "",
                              notes=notes, judge=args.judge, k=args.k, persona=args.persona, seed=args.seed,
                              n_boot=args.bootstrap, save_as=args.save)
    con = render.console(stderr=True)
    handle = al.open_align(args.session, request, on_event=SearchPrinter(con))
    with sigterm_as_interrupt():
        report = handle.run_to_end()
    fmt = args.format or ("markdown" if args.out else TABLE)
    if fmt == TABLE and not args.out:
        out = render.console()
        render.print_notes(out, report.summary_lines())
        out.print(render.plain_table("Held-out (spearman, 95% CI over contexts)", al.COLUMNS,
                                     [tuple(_cell(k, r.get(k)) for k in al.COLUMNS) for r in report.records()],
                                     right=al.COLUMNS[1:]))
        return 0
    text = al.render_align(report, "markdown" if fmt == TABLE else fmt)
    if args.out:
        render.write_output(args.out, text)
        con.print(f"wrote the report to {args.out}", markup=False, highlight=False)
    else:
        print(text, end="")
    return 0


def _cell(key: str, value: object) -> str:
    if isinstance(value, float) or value is None:
        return number_text(value, signed=key == "gap")
    return str(value)
