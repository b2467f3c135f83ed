"""Figure 8: the run store with a 100,000-judgment run in it (issue 23: "listing, loading and exporting
a 100,000-judgment run in seconds").

A fake-judge logprob run over ``big_dataset(100_000)`` goes through the engine into a fresh store in a
temporary folder. Rows:

- the run itself (items/s), and the share of its CPU time spent in the store's writes (timed
  around ``store.judgments.add_judgments``): the run must not be dominated by committing its judgments.
  CPU time, because on shared cores the wall time of a commit is mostly waiting for a core;
- listing runs (two small runs beside the big one). Baseline: the listing query before issue 23
  (a join of every judgment, grouped by run), on the same file;
- loading the run's judgments (``load_judgments``, a Judgment per row; baseline: the loader before
  issue 23, which must give equal Judgments; the figure checks that it does), one page of 100 judgments
  from the middle, and the run's score columns as arrays (what statistics read);
- exporting the judgments, CSV and JSON Lines, as the app's export writes them (``export_run``,
  streamed from the store). Baseline: the generic writers (``to_csv``/``to_jsonl`` of
  ``export_rows``), which must give the same bytes; the figure checks that they do;
- the judgments of the 100 items a screen shows (``judgments_for_items``);
- the other judgment formats of ``runs export`` (JSON, Markdown, LaTeX: rows in memory, then text),
  and the agreement tables with their diagnostics (``export_run`` with the table formats: the
  statistics with 1,000 bootstrap resamples over 100,000 items).

Each timed step has a row of its CPU time too (no target): on the shared 2 cores the wall time
measures the others' load as much as the code. ``--quick``: 10,000 judgments. Times are single runs (the run is too long to repeat), except the
listing, the page and the columns: the best of three.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import os
import re
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

from .common import Context, Row, at_least, at_most, best_time
from .datasets import big_dataset, fake_run_config

T = TypeVar("T")

EXPORT_SECONDS = 10.0
LIST_SECONDS = 1.0
LOAD_SECONDS = 3.0
PAGE_SECONDS = 0.1
COLUMNS_SECONDS = 1.0
WRITE_SHARE = 0.25

#: The listing query before issue 23: every judgment of every run joined and grouped.
OLD_LISTING = (
    "SELECT r.*, COUNT(j.id) AS n_judgments, COALESCE(SUM(j.id IS NOT NULL AND j.score IS NULL), 0) AS n_failures "
    "FROM runs r LEFT JOIN judgments j ON j.run_id = r.id GROUP BY r.id ORDER BY r.id DESC"
)


class Steps:
    """Wall time, CPU time and peak memory of each step, logged: on a shared machine the wall time
    says as much about the others' load as about the code, the CPU time says what the step costs."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        #: The CPU seconds of the last step.
        self.cpu = 0.0

    def __call__(self, name: str, function: Callable[[], T]) -> tuple[float, T]:
        reset_peak_memory()
        cpu, started = time.process_time(), time.perf_counter()
        result = function()
        wall = time.perf_counter() - started
        self.cpu = time.process_time() - cpu
        self.ctx.log(f"  {name}: {wall:.2f} s wall, {self.cpu:.2f} s CPU, peak RSS "
                     f"{peak_memory_mb():,.0f} MB, load {os.getloadavg()[0]:.1f}")
        return wall, result


def cpu_row(what: str, seconds: float) -> Row:
    """The CPU seconds of a step, beside its wall time: what the step costs whatever the load."""
    return at_most(f"store:   {what}, CPU time (s)", seconds, None, "s")


def reset_peak_memory() -> None:
    with contextlib.suppress(OSError):  # Linux: "5" resets the peak resident set size (VmHWM)
        Path("/proc/self/clear_refs").write_text("5")


def peak_memory_mb() -> float:
    with contextlib.suppress(OSError):
        match = re.search(r"VmHWM:\s+(\d+)", Path("/proc/self/status").read_text())
        if match:
            return int(match.group(1)) / 1024
    return math.nan


def load_as_before(path: Path, run_id: int) -> dict[str, dict[str, Any]]:
    """``load_judgments`` as it was before issue 23: every row as an sqlite3.Row under the store's
    lock, each JSON column parsed on its own, the repeat chosen in Python."""
    from dialjudge.core.judges.types import Judgment, ScoringMode

    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    rows = db.execute("SELECT * FROM judgments WHERE run_id = ? ORDER BY judge, item_id, repeat", (run_id,)).fetchall()
    db.close()
    out: dict[str, dict[str, Any]] = {}
    for row in rows:
        top = row["top_logprobs"]
        j = Judgment(
            item_id=row["item_id"], judge=row["judge"], mode=ScoringMode(row["mode"]), prompt_hash=row["prompt_hash"],
            raw_output=row["raw_output"], score=row["score"], normalized=row["normalized"], error=row["error"],
            reasoning=row["reasoning"], relevancy=row["relevancy"],
            distribution=json.loads(row["distribution"]) if row["distribution"] else None,
            latency_s=row["latency"], prompt_tokens=row["prompt_tokens"], evaluated_tokens=row["evaluated_tokens"],
            completion_tokens=row["completion_tokens"], repeat=row["repeat"], cached=bool(row["cached"]),
            sampling=json.loads(row["sampling"]),
            top_logprobs=[(str(t), float(v)) for t, v in json.loads(top)] if top else None,
            valid_mass=row["valid_mass"], valid_in_top=row["valid_in_top"],
            mass_is_lower_bound=bool(row["mass_lower_bound"]))
        if j.repeat == 0:
            out.setdefault(j.judge, {})[j.item_id] = j
    return out


def timed_store(path: Path) -> Any:
    """A RunStore that adds up the seconds spent in its judgment writes."""
    from dialjudge.core.judges.store.run_store import RunStore

    class TimedStore(RunStore):
        write_s = 0.0
        write_cpu_s = 0.0

        def __init__(self, path: Path) -> None:
            super().__init__(path)
            add_judgments = self.judgments.add_judgments

            def timed_add_judgments(run_id: int, writes: Any) -> int:
                cpu, started = time.process_time(), time.perf_counter()
                try:
                    return add_judgments(run_id, writes)
                finally:
                    self.write_s += time.perf_counter() - started
                    self.write_cpu_s += time.process_time() - cpu

            self.judgments.add_judgments = timed_add_judgments  # type: ignore[method-assign]

    return TimedStore(path)


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.judges.backends.fake import FakeBackend
    from dialjudge.core.judges.run.engine import RunEngine
    from dialjudge.core.judges.run.options import EngineOptions
    from dialjudge.core.report import records_to_latex, records_to_markdown, to_csv, to_json, to_jsonl
    from dialjudge.core.run_export import TABLE_FORMATS, export_run

    n = 10_000 if ctx.quick else 100_000
    size = f"{n:,}-judgment run"
    rows: list[Row] = []
    timed = Steps(ctx)
    ctx.log(f"  load average at the start: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        dataset = big_dataset(n)
        store = timed_store(folder / "runs.sqlite3")
        small = big_dataset(50)
        for _ in range(2):  # runs beside the big one, as a store holds
            asyncio.run(RunEngine(fake_run_config(small), small, {"fake": FakeBackend("fake")}, store,
                                  EngineOptions(use_cache=False, resume=False)).run())
        store.write_s = store.write_cpu_s = 0.0
        cpu_before = time.process_time()
        run_s, summary = timed(f"the {size} through the engine", lambda: asyncio.run(
            RunEngine(fake_run_config(dataset), dataset, {"fake": FakeBackend("fake")}, store).run()))
        run_cpu_s = time.process_time() - cpu_before
        if summary.done != n:
            raise AssertionError(f"the run judged {summary.done} of {n} items")
        run_id = summary.run_id
        # CPU time, not wall time: on shared cores a commit that waits for the CPU counts as writing.
        share = store.write_cpu_s / run_cpu_s
        ctx.log(f"  run: {n / run_s:,.0f} items/s; store writes {store.write_s:.2f} s wall "
                f"({store.write_s / run_s:.0%}), {store.write_cpu_s:.2f} s CPU ({share:.0%})")
        rows.append(at_least(f"store: {size} through the engine into the store [items/s]", n / run_s, None,
                             "items/s"))
        rows.append(cpu_row("the run", run_cpu_s))
        rows.append(at_most("store: share of that run's CPU time spent writing to the store [%]", 100 * share,
                            100 * WRITE_SHARE, "%", with_ratio=False))

        with sqlite3.connect(store.path) as db:
            old_list_s, _ = best_time(lambda: db.execute(OLD_LISTING).fetchall(), 3)
        list_s, runs = best_time(store.runs.list_runs, 3)
        if runs[0].judgments != n:
            raise AssertionError(f"the listing counts {runs[0].judgments} judgments, not {n}")
        rows.append(at_most(f"store: list runs, a {size} among them (s)", list_s, LIST_SECONDS, "s",
                            baseline=old_list_s))

        load_s, loaded = timed("load_judgments", lambda: store.judgments.load_judgments(run_id))
        load_cpu = timed.cpu
        if sum(len(by_item) for by_item in loaded.values()) != n:
            raise AssertionError("load_judgments did not load every judgment")
        before_s, before = timed("load_judgments as before", lambda: load_as_before(store.path, run_id))
        if before != loaded:
            raise AssertionError("load_judgments differs from the loader before issue 23")
        del loaded, before
        rows.append(at_most(f"store: load a {size}'s judgments, a Judgment each (s)", load_s, LOAD_SECONDS, "s",
                            baseline=before_s))
        rows.append(cpu_row("load the judgments", load_cpu))
        page_s, page = best_time(lambda: store.judgments.judgment_page(run_id, offset=n // 2, limit=100), 3)
        if page.total != n or len(page.judgments) != 100:
            raise AssertionError("a page of 100 judgments from the middle was not read")
        rows.append(at_most(f"store: one page of 100 judgments from the middle of a {size} (s)", page_s,
                            PAGE_SECONDS, "s"))
        on_screen = [ex.id for ex in dataset.examples[n // 2:n // 2 + 100]]
        items_s, by_item = best_time(lambda: store.judgments.judgments_for_items(run_id, on_screen), 3)
        if len(by_item) != 100:
            raise AssertionError("the judgments of 100 items on screen were not read")
        rows.append(at_most(f"store: the judgments of 100 items on screen, of a {size} (s)", items_s,
                            PAGE_SECONDS, "s"))
        columns_s, columns = best_time(lambda: store.judgments.score_columns(run_id), 3)
        if sum(len(c) for c in columns.values()) != n:
            raise AssertionError("score_columns did not read every judgment")
        rows.append(at_most(f"store: a {size}'s score columns as arrays (s)", columns_s, COLUMNS_SECONDS, "s"))

        out = folder / "export"
        for fmt, ending, generic in (("judgments-csv", "csv", to_csv), ("judgments-jsonl", "jsonl", to_jsonl)):
            value, result = timed(f"export {ending}", lambda fmt=fmt: export_run(store, run_id, dataset, out, [fmt]))
            export_cpu = timed.cpu
            (path,) = result.paths
            baseline, text = timed(f"generic {ending} writer",
                                   lambda generic=generic: generic(store.judgments.export_rows(run_id)))
            if path.read_bytes() != text.encode("utf-8"):
                raise AssertionError(f"the streamed {ending} export differs from the generic writer's")
            del text
            ctx.log(f"  the {ending} file: {path.stat().st_size / 1e6:.0f} MB, the same bytes as the generic writer's")
            rows.append(at_most(f"store: export a {size}'s judgments, {ending.upper()} (s)", value, EXPORT_SECONDS,
                                "s", baseline=baseline))
            rows.append(cpu_row(f"export {ending.upper()}", export_cpu))

        # The other formats of `runs export`: rows in memory, then the text (cli/runs_cmd.py).
        record = store.runs.get_run(run_id)
        columns_shown = ("item_id", "judge", "repeat", "score", "normalized", "valid_mass", "error")
        others: dict[str, Callable[[list[dict[str, Any]]], str]] = {
            "JSON": lambda rows_: to_json(rows_, meta={"run": record.id}),
            "Markdown": lambda rows_: records_to_markdown(rows_, columns_shown, title="judgments"),
            "LaTeX": lambda rows_: records_to_latex(rows_, columns_shown, title="judgments"),
        }
        for name, render in others.items():
            value, text = timed(f"runs export {name}",
                                lambda render=render: render(store.judgments.export_rows(run_id)))
            ctx.log(f"  the {name} text: {len(text) / 1e6:.0f} MB")
            rows.append(at_most(f"store: runs export of a {size}, {name} (s)", value, EXPORT_SECONDS, "s"))
            rows.append(cpu_row(f"runs export {name}", timed.cpu))
            del text

        value, result = timed("agreement tables and diagnostics",
                              lambda: export_run(store, run_id, dataset, out / "tables", list(TABLE_FORMATS)))
        ctx.log(f"  the agreement tables and diagnostics: {len(result.paths)} files")
        rows.append(at_most(f"store: export a {size}'s agreement tables + diagnostics, 4 formats (s)", value,
                            EXPORT_SECONDS, "s"))
        rows.append(cpu_row("agreement tables + diagnostics", timed.cpu))
        store.close()
    ctx.log(f"  load average at the end: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
    return rows
