"""How fast the app is ready, and how it copes with a 10,000-item dataset.

Prints, measured in this one run:
- cold start: from a fresh Python process to the first screen showing the bundled
  sample's items, and to its reference-metric columns filled in (imports, app start,
  loading, then scoring in a worker: METEOR's WordNet load dominates that part);
- the time to load and display a 10,000-item dataset (made by repeating the bundled
  sample with new ids and contexts), and the longest stall of the UI thread
  meanwhile (the app must stay responsive: loading and scoring run in workers).

Run: python bench/bench_tui.py [--items 10000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

COLD_START = textwrap.dedent("""
    import asyncio, os, sys, time
    started = float(os.environ["BENCH_T0"])
    from dialjudge.tui.app import make_app
    from dialjudge.tui.services import Services

    async def main():
        app = make_app(services=Services.default(show_timings=False))
        async with app.run_test(size=(160, 45)) as pilot:
            while app.workspace.dataset is None:
                await pilot.pause(0.01)
            await pilot.pause()
            items_shown = time.time() - started
            while not app.workspace.evaluators:
                await pilot.pause(0.01)
            await pilot.pause()
            print(items_shown, time.time() - started)
    asyncio.run(main())
""")


def cold_start_seconds() -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "DIALJUDGE_DATA_DIR": home, "DIALJUDGE_CONFIG": str(Path(home) / "none.toml")}
        Path(env["DIALJUDGE_CONFIG"]).write_text("", encoding="utf-8")
        env["BENCH_T0"] = repr(time.time())
        out = subprocess.run([sys.executable, "-c", COLD_START], env=env, capture_output=True, text=True,
                             check=True)
    items, metrics = out.stdout.strip().splitlines()[-1].split()
    return float(items), float(metrics)


def big_dataset(n: int, path: Path) -> Path:
    from dialjudge.core.loaders import save_dataset
    from dialjudge.core.model import Dataset, Turn
    from dialjudge.core.registry import open_dataset

    sample = open_dataset("sample", remember=False)
    examples = []
    copy = 0
    while len(examples) < n:
        for ex in sample.examples:
            if len(examples) == n:
                break
            context = ex.context + (Turn("User", f"(variation {copy})"),)
            examples.append(dataclasses.replace(ex, id=f"{ex.id}~{copy}", group_id=f"{ex.group_id}~{copy}",
                                                context=context, adversarial=None))
        copy += 1
    return save_dataset(Dataset(f"sample-x{n}", examples, meta={"illustrative": True}), path)


async def load_big(path: Path) -> tuple[float, float]:
    from dialjudge.tui.app import make_app
    from dialjudge.tui.services import Services

    with tempfile.TemporaryDirectory() as home:
        os.environ["DIALJUDGE_DATA_DIR"] = home
        app = make_app(services=Services.default(show_timings=False))
        async with app.run_test(size=(160, 45)) as pilot:
            while not app.workspace.evaluators:
                await pilot.pause(0.01)
            longest = 0.0
            last = time.perf_counter()

            def tick() -> None:
                nonlocal longest, last
                now = time.perf_counter()
                longest = max(longest, now - last)
                last = now

            timer = app.set_interval(0.01, tick)
            started = time.perf_counter()
            app.open_dataset(str(path))
            while (app.workspace.dataset is None or app.workspace.dataset.source != str(path)
                   or not app.workspace.evaluators or getattr(app.screen, "table", None) is None
                   or app.screen.table.row_count != len(app.workspace.dataset)):
                await pilot.pause(0.01)
            shown = time.perf_counter() - started
            timer.stop()
    return shown, longest


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    starts = [cold_start_seconds() for _ in range(args.repeats)]
    items = [s[0] for s in starts]
    metrics = [s[1] for s in starts]
    print(f"cold start to first screen with the sample's items: median {statistics.median(items):.2f} s; "
          f"with its 9 reference metrics scored: median {statistics.median(metrics):.2f} s "
          f"({args.repeats} runs)")
    with tempfile.TemporaryDirectory() as tmp:
        path = big_dataset(args.items, Path(tmp) / "big.jsonl")
        shown, stall = asyncio.run(load_big(path))
    print(f"load and display {args.items:,} items (with all reference metrics scored): {shown:.2f} s; "
          f"longest UI-thread stall meanwhile: {stall * 1000:.0f} ms")


if __name__ == "__main__":
    main()
