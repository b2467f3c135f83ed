"""Figure 11: the HTML report of a 100,000-item run (issue 37: "paged so a 100,000-item run stays usable",
"charts with a stated and measured size budget").

A fake-judge logprob run over ``big_dataset(100_000)`` goes through the engine into a fresh store; then
``dialjudge report``'s use case writes its report (no reference metrics: the bundled sample's repeated
replies would only time the metrics; 1,000 bootstrap resamples, as the command's default). Rows:

- the time to write the report (every figure, the review queue, the charts, the item table's data);
- the file's size, and the charts' (target: at most 1.5 MB, core/reports_html/charts.py's budget);
- the largest chart (target: at most 60 KB whatever the items: above 250 items a chart is a 2-D histogram);
- where Debian's ``chromium`` and Playwright are installed, the page in headless Chromium: opened until the
  item table shows its first page, sorted by the judge's column, and searched (the first search builds
  the search text of every row), each in seconds (no target).

``--quick``: 10,000 items.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
import time
from pathlib import Path

from .common import Context, Row, at_most
from .datasets import big_dataset, fake_run_config

WRITE_SECONDS = 60.0


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.api.html_report import HtmlReportRequest, report_on_store
    from dialjudge.core.judges.backends.fake import FakeBackend
    from dialjudge.core.judges.run.engine import RunEngine
    from dialjudge.core.judges.store.run_store import RunStore
    from dialjudge.core.reports_html.charts import CHART_BUDGET_BYTES, CHARTS_BUDGET_BYTES

    n = 10_000 if ctx.quick else 100_000
    size = f"{n:,}-item run"
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        dataset = big_dataset(n)
        store = RunStore(folder / "runs.sqlite3")
        summary = asyncio.run(RunEngine(fake_run_config(dataset), dataset, {"fake": FakeBackend("fake")}, store).run())
        ctx.log(f"  judged {summary.done:,} items")
        started, cpu_started = time.perf_counter(), time.process_time()
        result = report_on_store(store, HtmlReportRequest((summary.run_id,), folder / "report.html", metrics=False),
                                 current=dataset)
        seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - cpu_started
        charts = re.findall(r'<div class="chart">(.*?)</div>', result.text, re.S)
        largest = max(len(c.encode("utf-8")) for c in charts)
        ctx.log(f"  report: {result.bytes_written / 1e6:.1f} MB in {seconds:.1f} s ({cpu_seconds:.1f} s CPU); "
                f"{len(charts)} charts, "
                f"{result.chart_bytes / 1e3:.0f} KB, the largest {largest / 1e3:.0f} KB; sections {result.sections}")
        store.close()
        browser_rows = _in_the_browser(ctx, folder / "report.html", n)
    return [at_most(f"report: write the HTML report of a {size} (s)", seconds, WRITE_SECONDS, "s"),
            at_most("report: its CPU time (s; on shared cores the wall time measures the others' load too)",
                    cpu_seconds, None, "s"),
            at_most("report: its file (MB; data grows with the items, the page shows 25 rows at a time)",
                    result.bytes_written / 1e6, None, "MB"),
            at_most("report: its charts (KB)", result.chart_bytes / 1e3, CHARTS_BUDGET_BYTES / 1e3, "KB"),
            at_most("report: the largest chart (KB)", largest / 1e3, CHART_BUDGET_BYTES / 1e3, "KB"), *browser_rows]


def _in_the_browser(ctx: Context, page_path: Path, n: int) -> list[Row]:
    """Open, sort and search the report in Debian's chromium; no rows where it or Playwright is absent."""
    executable = shutil.which("chromium")
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        executable = None
    if executable is None:
        ctx.log("  no chromium or no playwright: the page is not opened")
        return []
    everything = f"{n:,} of {n:,} items"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        count = page.locator("#items-browser .count")
        started = time.perf_counter()
        page.goto(page_path.as_uri())
        expect(count).to_have_text(everything, timeout=120_000)
        opened = time.perf_counter() - started
        started = time.perf_counter()
        page.locator("#items-table thead th", has_text="fake").click()
        expect(page.locator("#items-table thead th[aria-sort]")).to_have_count(1, timeout=120_000)
        sorted_s = time.perf_counter() - started
        started = time.perf_counter()
        page.locator("#items-browser input[type=search]").fill("(variation 777)")
        expect(count).not_to_have_text(everything, timeout=120_000)
        searched = time.perf_counter() - started
        ctx.log(f"  in chromium: opened {opened:.1f} s, sorted {sorted_s:.1f} s, searched {searched:.1f} s "
                f"({count.inner_text()})")
        browser.close()
    return [at_most("report: open its page in Chromium until the item table shows (s)", opened, None, "s"),
            at_most(f"report: sort the {n:,} items by the judge (s)", sorted_s, None, "s"),
            at_most(f"report: the first search over the {n:,} items (s)", searched, None, "s")]
