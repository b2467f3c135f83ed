"""`dialjudge`: with no arguments it opens the app; subcommands run headless."""

from __future__ import annotations

import argparse
import sys
from typing import Callable, Sequence

from dialjudge import __version__
from dialjudge.core.api import Session
from dialjudge.core.errors import DialjudgeError

from . import (
    adversarial_cmd,
    align_cmd,
    check_cmd,
    datasets_cmd,
    eval_cmd,
    judge_cmd,
    jury_cmd,
    leaderboard_cmd,
    metrics_cmd,
    render,
    report_cmd,
    runs_cmd,
    tune_cmd,
)
from .dataset_args import add_column_map_option, column_map_of

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dialjudge",
        description="Build and check judges of dialogue responses against human ratings. "
        "Without a command, opens the terminal app.",
    )
    parser.add_argument("--version", action="version", version=f"dialjudge {__version__}")
    parser.add_argument("--width", type=int, metavar="N",
                        help="render tables N columns wide (default: COLUMNS, else the terminal's width; "
                             f"piped output without either: {render.PIPED_WIDTH})")
    parser.add_argument("--dataset", help="dataset to open in the app (name or path)")
    add_column_map_option(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    datasets_cmd.register(sub)
    metrics_cmd.register(sub)
    judge_cmd.register(sub)
    runs_cmd.register(sub)
    leaderboard_cmd.register(sub)
    jury_cmd.register(sub)
    report_cmd.register(sub)
    adversarial_cmd.register(sub)
    tune_cmd.register(sub)
    align_cmd.register(sub)
    eval_cmd.register(sub)
    check_cmd.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    # One session a command: every use case it calls shares the configuration, the store and the judges.
    args.session = Session()
    try:
        render.set_width(args.width)
        if handler is None:
            return open_app(args)
        return handler(args)
    except DialjudgeError as exc:
        print(f"dialjudge: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("dialjudge: interrupted", file=sys.stderr)
        return 130


def open_app(args: argparse.Namespace) -> int:
    # Textual loads only when the app opens: the headless commands start without it.
    from dialjudge.tui.app import end_process_promptly, make_app

    app = make_app(dataset=args.dataset, column_map=column_map_of(args))
    app.run()
    code = int(app.return_code or 0)
    end_process_promptly(code)  # a model still loading must not keep the process alive
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
