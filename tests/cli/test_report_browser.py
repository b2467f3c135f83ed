"""The HTML report of a run on USR Topical-Chat, opened in headless Chromium (Debian's ``chromium``, driven
by Playwright without a downloaded browser): no console error, no request leaving the file, and the
agreement table's numbers the ones ``dialjudge judge`` prints for the same run."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest
from cli_helpers import run

from shared_data import require_file, shared_data_dir

#: The first items of USR Topical-Chat (ten contexts of six replies), judged by a simulated judge.
LIMIT = 60
BOOTSTRAP = "200"


def _browser_executable() -> str:
    executable = shutil.which("chromium")
    if executable is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium; .ci/run installs it)")
    return executable


def _cli_rows(table: str) -> dict[str, tuple[list[str], list[str]]]:
    """The CLI's agreement table (Rich's box drawing) as {evaluator: (value cells, CI cells)}."""
    lines = [[cell.strip() for cell in line.strip().strip("│┃").split("│")] for line in table.splitlines()
             if line.strip().startswith("│")]
    rows: dict[str, tuple[list[str], list[str]]] = {}
    for first, second in zip(lines, lines[1:]):
        if first[0] and not second[0]:
            rows.setdefault(first[0], (first[1:], second[1:]))
    return rows


def test_the_report_renders_offline_without_errors_and_shows_the_cli_s_numbers(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    executable = _browser_executable()
    sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed (the test extra)")
    shared = shared_data_dir()
    require_file(shared, "usr/usr_topical_chat.json")
    config = tmp_path / "dialjudge.toml"
    config.write_text(textwrap.dedent(f"""\
        [data]
        dirs = ["{shared}"]

        [judges.sim]
        backend = "fake"
        options = {{ agreement = 0.6, dataset = "usr-topicalchat", quality = "Overall" }}
        """), encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    monkeypatch.setenv("COLUMNS", "200")
    judge = ("judge", "--dataset", "usr-topicalchat", "--judge", "sim", "--template", "likert-1to5", "--aspect",
             "overall", "--limit", str(LIMIT), "--no-metrics", "--bootstrap", BOOTSTRAP)
    code, printed, err = run(capsys, *judge)
    assert code == 0, err
    report = tmp_path / "report.html"
    code, _, err = run(capsys, "report", "1", "--output", str(report), "--no-metrics", "--bootstrap", BOOTSTRAP)
    assert code == 0, err
    cli = _cli_rows(printed)
    assert {"sim", "human ceiling"} <= set(cli)

    url = report.as_uri()
    requests: list[str] = []
    errors: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.on("request", lambda request: requests.append(request.url))

            def only_the_file(route: object) -> None:
                request_url = route.request.url  # type: ignore[attr-defined]
                if request_url == url or request_url.startswith("data:"):
                    route.continue_()  # type: ignore[attr-defined]
                else:
                    route.abort()  # type: ignore[attr-defined]

            page.route("**/*", only_the_file)
            page.goto(url, wait_until="load")
            table = page.locator("#agreement-run1-0")
            shown: dict[str, tuple[list[str], list[str]]] = {}
            for row in table.locator("tbody tr").all():
                name = row.locator("th").inner_text().strip()
                cells = row.locator("td").all()
                values = [c.locator(".value").inner_text().strip() if c.locator(".value").count()
                          else c.inner_text().strip() for c in cells]
                cis = [c.locator(".ci").inner_text().strip() if c.locator(".ci").count() else "" for c in cells]
                shown[name] = (values, cis)

            # The item table's script ran: one page of rows, a search narrows them, a heading sorts them.
            assert page.locator("#items-table tbody tr.item").count() == 25
            assert page.locator("#items-browser .count").inner_text() == f"{LIMIT} of {LIMIT} items"
            # (Waited on with locators: the page's policy forbids evaluating strings, as it should.)
            count = page.locator("#items-browser .count")
            page.locator("#items-browser input[type=search]").fill("zzz-no-such-text")
            sync_api.expect(count).to_have_text(f"0 of {LIMIT} items")
            page.locator("#items-browser input[type=search]").fill("")
            sync_api.expect(count).to_have_text(f"{LIMIT} of {LIMIT} items")
            page.locator("#items-table thead th", has_text="sim").click()
            assert page.locator("#items-table thead th[aria-sort]").count() == 1
            page.locator("#items-table tbody tr.item").first.click()
            assert page.locator("#items-table tbody tr.details").count() == 1
        finally:
            browser.close()

    assert errors == []
    assert requests and all(r == url or r.startswith("data:") for r in requests), requests
    assert set(shown) == {"sim", "response length", "human ceiling"} <= set(cli)
    for name, (values, cis) in shown.items():
        cli_values, cli_cis = cli[name]
        assert values == cli_values, name
        assert [c for c in cis if c] == [c for c in cli_cis if c], name
