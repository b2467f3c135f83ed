"""One stored run, two front ends: every number the command line and the app both show is the same.

The command line judges the sample with a fake judge (``--limit 30``: 6 contexts, the fewest that get intervals) and again with another;
the app opens the same run store, adds run 1 to its Scores screen and compares the two runs
on its Runs screen. The agreement row of the judge, the human ceiling with its n, the
compared deltas and the verdict lines must read the same in both (the metrics' rows too), and the exported
agreement table (``runs export --to``) must hold the app's exact numbers.
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest
from textual.widgets import Static
from tui_helpers import SIZE, make_services, settle, static_text

from dialjudge.cli.main import main
from dialjudge.core.api import CompareRequest
from dialjudge.core.api.comparison import compare
from dialjudge.core.api.formatting import verdict_line
from dialjudge.core.format import interval_text, number_text
from dialjudge.core.judges.store.run_store import RunStore, default_store_path
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.runs import RunsScreen
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.widgets.correlation_panel import CEILING

#: Items judged: 6 contexts of 5, the fewest with CIs and verdicts (core.stats.small_samples).
LIMIT = 30
JUDGE = ("judge", "--dataset", "sample", "--template", "likert-1to5", "--aspect", "overall", "--limit", str(LIMIT),
         "--kendall", "--bootstrap", "1000", "--seed", "0")
METHODS = ("pearson", "spearman", "kendall")
FAKE_JUDGES = """
[judges.fa]
backend = "fake"
model = "fake-a"

[judges.fb]
backend = "fake"
model = "fake-b"
seed = 1
"""


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def table_rows(out: str) -> dict[str, list[str]]:
    """The first line of each row of the first table printed, by its first cell."""
    first = out[: out.index("└") + 1]
    rows: dict[str, list[str]] = {}
    for line in first.splitlines():
        if line.startswith("│"):
            cells = [c.strip() for c in line.split("│")[1:-1]]
            if cells[0]:
                rows[cells[0]] = cells
    return rows


def ci_lines(out: str) -> dict[str, list[str]]:
    """The CI line (a row's second line) under each row of the first table printed, by the row's first cell."""
    lines = out[: out.index("└") + 1].splitlines()
    cis: dict[str, list[str]] = {}
    for line, below in zip(lines, lines[1:]):
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if line.startswith("│") and cells[0] and below.startswith("│"):
            cis[cells[0]] = [c.strip() for c in below.split("│")[1:-1]][1:4]
    return cis


@pytest.fixture
def two_cli_runs(capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """Runs 1 (judge fa) and 2 (judge fb) made by the command line; returns run 1's table as printed."""
    config = tmp_path / "dialjudge.toml"
    config.write_text(FAKE_JUDGES, encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    shown = cli(capsys, *JUDGE, "--judge", "fa")
    cli(capsys, *JUDGE, "--judge", "fb")
    return shown


async def test_the_command_line_and_the_app_show_the_same_numbers(
        two_cli_runs: str, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    cli_rows = table_rows(two_cli_runs)
    cli_compare = cli(capsys, "runs", "compare", "1", "2", "--seed", "0")
    cli(capsys, "runs", "export", "1", "--to", str(tmp_path / "export"), "--file", "csv")
    with (tmp_path / "export" / "run-1-agreement.csv").open(encoding="utf-8") as f:
        exported = {r["evaluator"]: r for r in csv.DictReader(f) if r["subset"] == "all"}

    services = make_services(tmp_path, n_boot=1000, seed=0).with_store_at(default_store_path())
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.datasets.choose_view(quality="overall", subset="all")
        await pilot.press("u")  # the Runs screen, newest run first
        await settle(pilot)
        runs = app.screen
        assert isinstance(runs, RunsScreen)
        runs.table.move_cursor_to(1)
        await pilot.press("a")  # run 1's judge joins the Scores screen
        await settle(pilot)
        runs.table.move_cursor_to(2)
        await pilot.press("space")  # mark run 2, then compare it with run 1
        runs.table.move_cursor_to(1)
        await pilot.press("c")
        await settle(pilot)
        app_compare = static_text(runs.query_one("#runs-comparison", Static), width=400)
        await pilot.press("s")  # the Scores screen
        await settle(pilot)
        scores = app.screen
        assert isinstance(scores, ScoresScreen)
        panel = scores.panel.rows

    judge, ceiling = panel["fa#1"], panel[CEILING]
    metrics = {name: row for name, row in panel.items() if row.kind == "metric"}
    assert metrics  # the app's metrics (a fast few) are rows of the command line's table too
    # The agreement table: what each front end prints, digit for digit, with the same n.
    for name, row in (("fa", judge), ("human ceiling", ceiling), *metrics.items()):
        shown = cli_rows[name]
        assert [cell.rstrip("*") for cell in shown[1:4]] == [number_text(row.value(m)) for m in METHODS], name
        assert shown[4] == str(row.n), name
    # The ceiling's CIs (the context bootstrap of its leave-one-out coefficients): in both, the same.
    assert set(ceiling.intervals) == set(METHODS)
    assert ci_lines(two_cli_runs)["human ceiling"] == [interval_text(*ceiling.intervals[m]) for m in METHODS]
    # One human ceiling: on the LIMIT items the judge is compared on, in the app as in the command line;
    # the metrics on every item of the view (their n says so).
    assert ceiling.n == judge.n == LIMIT
    assert all(row.n is not None and row.n > LIMIT for row in metrics.values())
    # The export holds the same numbers exactly, CIs included.
    for name, row in (("fa", judge), ("human ceiling", ceiling)):
        record = exported[name]
        assert int(record["n"]) == row.n
        for m in METHODS:
            assert float(record[m]) == pytest.approx(row.value(m), abs=1e-12), (name, m)
            if m in row.intervals:
                low, high = row.intervals[m]
                assert (float(record[f"{m}_lo"]), float(record[f"{m}_hi"])) == pytest.approx((low, high), abs=1e-12)
    assert not math.isnan(judge.pearson) and judge.intervals  # the comparison is not vacuous

    # The compared runs: the same deltas and the same verdict lines.
    with RunStore(default_store_path()) as store:
        comparison = compare(store, CompareRequest(1, 2, seed=0))
    assert comparison.paired
    app_lines = app_compare.splitlines()
    cli_lines = cli_compare.splitlines()
    def flowing(text: str) -> str:  # a long verdict wraps at the console's width (240 when piped)
        return " ".join(text.split())

    for c in comparison.paired:
        line = flowing(verdict_line(c, "spearman"))
        assert line in flowing(cli_compare) and line in flowing(app_compare), line
    for d in comparison.deltas:
        cli_row = next(r for r in (line.split("│") for line in cli_lines)
                       if len(r) > 8 and [x.strip() for x in r[1:5]] == [d.evaluator, d.quality, d.subset,
                                                                          d.coefficient])
        app_row = next(line.split() for line in app_lines if line.split()[:3] == [d.evaluator, d.quality, d.subset])
        before, after, change = (x.strip() for x in cli_row[5:8])
        i = 4 + 3 * METHODS.index(d.coefficient)
        assert app_row[i:i + 2] == [before, after], d
        assert app_row[3] == cli_row[8].strip(), d  # n of run 1 / n of run 2
        assert app_row[i + 2].replace("−", "-") == change.replace("−", "-"), d
