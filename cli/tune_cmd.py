"""`dialjudge tune`: a tuning search over judge variants, reported on held-out contexts."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from dialjudge.core.api import (
    TuningReport,
    open_search,
    read_space,
    save_search_record,
    save_winner,
)
from dialjudge.core.api.events import (
    JudgingProgressed,
    RoundStarted,
    SearchEvent,
    SearchStarted,
    VariantScored,
)
from dialjudge.core.api.tune import HELDOUT_COLUMNS, LEADERBOARD_COLUMNS, render_report
from dialjudge.core.api.tune import REPORT_FORMATS as FORMATS
from dialjudge.core.format import number_text

from . import render
from .dataset_args import add_column_map_option, open_dataset_of
from .signals import sigterm_as_interrupt


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tune", help="search judge variants on tuning contexts, report the winner on held-out ones")
    p.add_argument("--dataset", required=True, help="dataset name or path")
    add_column_map_option(p)
    p.add_argument("--space", required=True, type=Path, help="search space TOML (see prompts/search/README.md)")
    p.add_argument("--quality", help="the human-rated quality to agree with (default: the space's, else Overall)")
    p.add_argument("--budget", type=int, help="most judgments the search may make, tuning and held-out together")
    p.add_argument("--seed", type=int, help="seed of the context split and the sampling order")
    p.add_argument("--format", choices=(TABLE, *FORMATS), default=None,
                   help=f"report format (default: {TABLE}, fitted to the terminal, when printed; markdown with --out)")
    p.add_argument("--out", type=Path, help="write the report here instead of printing it")
    p.add_argument("--save-winner", metavar="NAME",
                   help="save the winning variant's template as NAME in your templates folder")
    p.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    config = args.session.config
    dataset = open_dataset_of(args, args.dataset, config)
    space = read_space(args.space, quality=args.quality, budget=args.budget, seed=args.seed)
    con = render.console(stderr=True)
    search = open_search(args.session, space, dataset, on_event=_Printer(con))
    with sigterm_as_interrupt():
        report = search.run_to_end()
    record = save_search_record(report)
    con.print(f"search stored in {record}", markup=False, highlight=False)
    if args.save_winner:
        path = save_winner(report, config, args.save_winner)
        con.print(f"saved the winner {report.winner!r} as template {args.save_winner!r}: {path}",
                  markup=False, highlight=False)
    fmt = args.format or ("markdown" if args.out else TABLE)
    if fmt == TABLE and not args.out:
        _print_report(report)
        return 0
    text = render_report(report, "markdown" if fmt == TABLE else fmt)
    if args.out:
        render.write_output(args.out, text)
        con.print(f"wrote the report to {args.out}", markup=False, highlight=False)
    else:
        print(text, end="")
    return 0


#: The report as the terminal's tables (the other formats are files' and are printed as they are).
TABLE = "table"


def _print_report(report: TuningReport) -> None:
    con = render.console()
    render.print_notes(con, report.summary_lines())
    con.print(render.plain_table(f"Tuning leaderboard ({report.coefficient})", LEADERBOARD_COLUMNS,
                                 _cells(report.leaderboard_records(), LEADERBOARD_COLUMNS),
                                 right=("rank", "round", "contexts", "items", "tuning")))
    con.print(render.plain_table(f"Held-out ({report.coefficient}, 95% CI over contexts)", HELDOUT_COLUMNS,
                                 _cells(report.heldout_records(), HELDOUT_COLUMNS), right=HELDOUT_COLUMNS[1:]))


def _cells(records: list[dict[str, object]], columns: tuple[str, ...]) -> list[tuple[str, ...]]:
    def text(key: str, value: object) -> str:
        if isinstance(value, float) or value is None:
            return number_text(value, signed=key == "gap")
        return str(value)

    return [tuple(text(k, r.get(k)) for k in columns) for r in records]


class _Printer:
    """Live progress on stderr: a line per round and per scored variant, a status line while judging."""

    def __init__(self, con: Console) -> None:
        self.con = con
        self.budget = 0
        self._last_status = ""

    def __call__(self, event: SearchEvent) -> None:
        if isinstance(event, SearchStarted):
            self.budget = event.budget
            self.con.print(f"{event.n_variants} variants; {event.tuning_contexts} tuning and "
                           f"{event.heldout_contexts} held-out contexts; budget "
                           f"{event.budget or 'unlimited'} judgments", markup=False)
        elif isinstance(event, RoundStarted):
            r = event.round
            self.con.print(f"round {r.index + 1}: {len(r.variants)} variants on {r.n_contexts} contexts "
                           f"({r.n_items} items, {r.cost} new judgments)", markup=False)
        elif isinstance(event, VariantScored):
            self.con.print(f"  {event.stage:>9}  {number_text(event.score):>7}  {event.variant}  "
                           f"[{event.n_items} items; judgments {self._spent(event.spent)}; "
                           f"model calls {event.model_calls}]", markup=False, highlight=False)
        elif isinstance(event, JudgingProgressed) and self.con.is_terminal:
            self._status(f"{event.stage}: {event.variant} {event.done}/{event.total}")

    def _spent(self, spent: int) -> str:
        return f"{spent}/{self.budget}" if self.budget else str(spent)

    def _status(self, text: str) -> None:
        if text != self._last_status:
            self._last_status = text
            self.con.print(text, end="\r", markup=False, highlight=False)


#: The search's live progress, as `dialjudge align` prints it too.
SearchPrinter = _Printer
