"""Figure 6: peak resident memory (RSS) of a 10,000-item fake-judge run through the engine and
the store; of opening a 100,000-item dataset in a bare process (``open_dataset``); and of the app
holding a 100,000-item dataset, shown, with its metric columns, summary and statistics computed
(target: 1 GB). --quick: 300 and 3,000 items.

Each is measured in a fresh Python process (its own peak RSS); the baseline is a process
that only imports the same modules, so the value minus the baseline is what the items cost.
The items are bench.datasets.big_dataset's: the bundled sample repeated, so contexts, ratings and
candidates repeat as in no real dataset; the loaders share equal values, which makes these items
cheaper than distinct texts would be (about 1.5 KB of JSON an item, each held once).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from .common import Context, Row, at_most
from .figure_app import isolated_env

# VmHWM, the peak RSS of this process image: ru_maxrss would carry the benchmark's own peak
# over into the child, since Linux keeps it across fork and exec.
PEAK = ("import re; print(int(re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))"
        " / 1024)")

ENGINE_IMPORTS = textwrap.dedent(f"""
    import bench.datasets, dialjudge.core.judges.run.engine, dialjudge.core.judges.store.run_store
    import dialjudge.core.judges.backends.fake, dialjudge.core.dataset_catalogue
    {PEAK}
""")

OPEN_IMPORTS = textwrap.dedent(f"""
    import bench.datasets, dialjudge.core.dataset_catalogue, dialjudge.core.loaders
    {PEAK}
""")

OPEN_BARE = textwrap.dedent(f"""
    import sys
    from pathlib import Path
    from bench.datasets import save_big_dataset
    from dialjudge.core.dataset_catalogue import open_dataset

    path = save_big_dataset(int(sys.argv[1]), Path(sys.argv[2]) / "big.jsonl")
    import gc; gc.collect()
    # The peak so far is the writing of the file: start counting from here.
    open("/proc/self/clear_refs", "w").write("5")
    dataset = open_dataset(str(path), remember=False)
    assert len(dataset) == int(sys.argv[1])
    {PEAK}
""")

APP_IMPORTS = textwrap.dedent(f"""
    import bench.datasets, dialjudge.tui.app, dialjudge.tui.services
    {PEAK}
""")

ENGINE_RUN = textwrap.dedent(f"""
    import asyncio, sys
    from pathlib import Path
    from bench.datasets import big_dataset, fake_run_config
    from dialjudge.core.judges.backends.fake import FakeBackend
    from dialjudge.core.judges.run.engine import RunEngine
    from dialjudge.core.judges.store.run_store import RunStore

    dataset = big_dataset(int(sys.argv[1]))
    store = RunStore(Path(sys.argv[2]) / "runs.sqlite3")
    summary = asyncio.run(RunEngine(fake_run_config(dataset), dataset, {{"fake": FakeBackend("fake")}}, store).run())
    assert summary.done == len(dataset), summary
    judgments = store.judgments.load_judgments(summary.run_id)
    assert sum(len(j) for j in judgments.values()) == len(dataset)
    store.close()
    {PEAK}
""")

APP_HOLDING = textwrap.dedent(f"""
    import asyncio, sys
    from pathlib import Path
    from bench.datasets import save_big_dataset
    from dialjudge.tui.app import make_app
    from dialjudge.tui.services import Services

    path = save_big_dataset(int(sys.argv[1]), Path(sys.argv[2]) / "big.jsonl")

    import gc; gc.collect()
    open("/proc/self/clear_refs", "w").write("5")  # the peak of writing the file is not the app's

    async def main():
        app = make_app(services=Services.default(show_timings=False))
        async with app.run_test(size=(160, 45)) as pilot:
            app.datasets.open(str(path))
            # Opened: shown, its metric columns scored, its summary and its statistics computed.
            while (app.workspace.dataset is None or app.workspace.dataset.source != str(path)
                   or not app.workspace.evaluators or app.datasets.dataset_summary is None
                   or app.datasets.stats is None or any(w.is_running for w in app.workers)):
                await pilot.pause(0.05)
            await pilot.pause(0.5)
    asyncio.run(main())
    {PEAK}
""")


def peak_mb(code: str, *args: str) -> float:
    with tempfile.TemporaryDirectory() as home:
        out = subprocess.run([sys.executable, "-c", code, *args, home], env=isolated_env(home),
                             capture_output=True, text=True, cwd=Path(__file__).resolve().parents[1])
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip().splitlines()[-1] if out.stderr.strip() else "failed")
    return float(out.stdout.strip().splitlines()[-1])


#: The app holding this many items must stay under APP_LIMIT_MB (issue 23).
APP_ITEMS, QUICK_APP_ITEMS = 100_000, 3_000
APP_LIMIT_MB = 1024.0


def run(ctx: Context) -> list[Row]:
    n_items = 300 if ctx.quick else 10_000
    n_app = QUICK_APP_ITEMS if ctx.quick else APP_ITEMS
    # The baselines (imports only) change with the code, not with the items: --quick skips them.
    engine_base = None if ctx.quick else peak_mb(ENGINE_IMPORTS)
    open_base = None if ctx.quick else peak_mb(OPEN_IMPORTS)
    app_base = None if ctx.quick else peak_mb(APP_IMPORTS)
    engine = peak_mb(ENGINE_RUN, str(n_items))
    bare = peak_mb(OPEN_BARE, str(n_app))  # one 100,000-item process at a time
    app = peak_mb(APP_HOLDING, str(n_app))
    per_item = "" if app_base is None else f" ({(app - app_base) * 1024 / n_app:.1f} KB an item over the imports)"
    ctx.log(f"  engine: imports {engine_base} MB, run {engine:.0f} MB; open_dataset: imports {open_base} MB, "
            f"{n_app:,} items {bare:.0f} MB; app: imports {app_base} MB, holding the items {app:.0f} MB{per_item}")
    return [
        at_most(f"memory peak RSS, {n_items:,}-item fake-judge run via engine + store [MB]", engine, None, "MB",
                baseline=engine_base, with_ratio=False),
        at_most(f"memory peak RSS, open_dataset of {n_app:,} items, bare process [MB]", bare, None, "MB",
                baseline=open_base, with_ratio=False),
        at_most(f"memory peak RSS, app holding {n_app:,} items (shown, metrics, statistics) [MB]", app,
                APP_LIMIT_MB, "MB", baseline=app_base, with_ratio=False),
    ]
