"""docs/report.png: the HTML report of two simulated judges on USR Topical-Chat, at 1280x900 in Chromium.

    PYTHONPATH=src python -m bench.report_screenshot [--output docs/report.png] [--html report.html]

Two runs of the fake backend's simulated judge (no model: its scores agree with the humans' Overall to a
set degree, 0.7 and 0.4) over the whole set go into a temporary store; ``dialjudge report``'s use case
writes their report, and Debian's ``chromium`` (driven by Playwright, no downloaded browser) takes the
screenshot. The data is read from ../shared/data (or $DIALJUDGE_SHARED_DATA).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.report_screenshot", description=__doc__.splitlines()[0])
    parser.add_argument("--output", type=Path, default=REPO_ROOT / "docs" / "report.png")
    parser.add_argument("--html", type=Path, help="keep the report here too")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from dialjudge.core.api import RunRequest, Session, judge, open_dataset, plan_run
    from dialjudge.core.api.html_report import HtmlReportRequest, write_html_report
    from dialjudge.core.config import parse_config

    shared = Path(os.environ.get("DIALJUDGE_SHARED_DATA", REPO_ROOT.parent / "shared" / "data"))
    chromium = shutil.which("chromium")
    if chromium is None:
        print("needs Debian's chromium (apt-get install chromium)", file=sys.stderr)
        return 2
    folder = Path(tempfile.mkdtemp(prefix="report-shot-"))
    (folder / "dialjudge.toml").write_text(f'[data]\ndirs = ["{shared}"]\n', encoding="utf-8")
    os.environ["DIALJUDGE_CONFIG"] = str(folder / "dialjudge.toml")  # the simulated judge reads its labels there
    judges = {f"sim-{int(a * 10)}": {"backend": "fake", "options": {"agreement": a, "dataset": "usr-topicalchat",
                                                                      "quality": "Overall"}} for a in (0.7, 0.4)}
    config = parse_config({"data": {"dirs": [str(shared)]}, "judges": judges}, folder / "dialjudge.toml")
    session = Session(config, store_path=folder / "runs.sqlite3")
    dataset = open_dataset("usr-topicalchat", config, remember=False)
    ids = []
    for name in judges:
        plan = plan_run(RunRequest("likert-1to5", judges=(name,), aspect="overall", quality="Overall"), dataset,
                        config)
        ids.append(judge(session, [plan], dataset).summaries[0].run_id)
    html = args.html or folder / "report.html"
    result = write_html_report(session, HtmlReportRequest(tuple(ids), html, metrics=True), current=dataset)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(html.resolve().as_uri())
        page.screenshot(path=str(args.output))
        browser.close()
    print(f"{args.output}: the report of runs {ids} ({result.bytes_written / 1e6:.1f} MB, sections "
          f"{', '.join(result.sections)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
