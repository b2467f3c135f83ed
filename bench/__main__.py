"""python -m bench [--quick] [--json PATH] [--only metrics,judge,api,cache,app,memory,pairs,store,worker,report] [--data DIR]

Runs every figure (see bench/__init__.py) and prints one table: figure, baseline,
value, ratio, target, pass/fail. Progress goes to stderr, the table to stdout.
The exit status is 0 when every figure with a target passes, 1 otherwise.
"""

from __future__ import annotations

import argparse
import importlib
import json
import platform
import sys
import time
import traceback
from pathlib import Path

from .common import REPO_ROOT, Context, Row, default_data_dir, failed, render_table

FIGURES = ("metrics", "judge", "api", "cache", "app", "memory", "pairs", "store", "batch", "worker", "report",
           "sharing")


def measure_this_checkout() -> None:
    """Import dialjudge from this checkout's src/, not from wherever else it is installed."""
    src = str(REPO_ROOT / "src")
    if src not in sys.path:
        sys.path.insert(0, src)


def main(argv: list[str] | None = None) -> int:
    measure_this_checkout()
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a reduced version (under a minute)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the table as a JSON list")
    parser.add_argument("--only", default=",".join(FIGURES),
                        help=f"comma-separated figures to run (default: all of {', '.join(FIGURES)})")
    parser.add_argument("--data", type=Path, default=default_data_dir(), help="the shared data folder")
    args = parser.parse_args(argv)
    chosen = [name.strip() for name in args.only.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in FIGURES]
    if unknown:
        parser.error(f"unknown figure(s) {', '.join(unknown)}; known: {', '.join(FIGURES)}")

    ctx = Context(quick=args.quick, data_dir=args.data)
    import dialjudge

    ctx.log(f"[bench] dialjudge {dialjudge.__version__} from {Path(dialjudge.__file__).parent}")
    started = time.perf_counter()
    rows: list[Row] = []
    for name in chosen:
        ctx.log(f"[bench] {name} ...")
        figure_started = time.perf_counter()
        try:
            module = importlib.import_module(f".figure_{name}", __package__)
            rows.extend(module.run(ctx))
        except Exception as exc:  # one broken figure must not hide the others
            ctx.log(traceback.format_exc())
            rows.append(failed(name, f"{type(exc).__name__}: {exc}"))
        ctx.log(f"[bench] {name} done in {time.perf_counter() - figure_started:.1f} s")

    print(f"dialjudge benchmark{' (quick)' if args.quick else ''}: {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}, {time.perf_counter() - started:.0f} s")
    print(render_table(rows))
    if args.quick:
        print("--quick: reduced sizes (see each figure's module); the targets are set for the full run.")
    if args.json:
        args.json.write_text(json.dumps([r.to_dict() for r in rows], indent=2) + "\n", encoding="utf-8")
    return 0 if all(r.passed is not False for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
