"""The HTML report: escaping of data and model output, the CSP hash of its script, the sections of one and
two runs with the use cases' own texts, the item table's data at many items, the charts' size budget."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest

from dialjudge.core.api import (
    AgreementRequest,
    CompareRequest,
    ExportRequest,
    RunRequest,
    Session,
    export,
    judge,
    plan_run,
)
from dialjudge.core.api.formatting import verdict_line, wide_table
from dialjudge.core.api.html_report import HtmlReportRequest, HtmlReportResult, write_html_report
from dialjudge.core.api.stored_use_cases import compare
from dialjudge.core.config import Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError, DialjudgeError
from dialjudge.core.format import interval_text
from dialjudge.core.model import Dataset, Example, Rating, Scale, ScaleKind, Turn
from dialjudge.core.reports_html import escape
from dialjudge.core.reports_html.charts import (
    CHART_BUDGET_BYTES,
    CHARTS_BUDGET_BYTES,
    SCATTER_LIMIT,
    evaluator_chart,
)
from dialjudge.core.reports_html.items import ItemColumns, item_table
from dialjudge.core.reports_html.page import csp, script_hash
from dialjudge.core.reports_html.script import SCRIPT

#: What a dataset or a model may hold that must never become markup or end a script block.
HOSTILE = ("</script><script>alert(1)</script> <!-- <img src=x onerror=alert(2)> \u2028\u2029 "
           "&amp; \"quoted\" 'single' </SCRIPT >")

CONFIG = {"judges": {"fa": {"backend": "fake", "model": "fa"}, "fb": {"backend": "fake", "model": "fb", "seed": 1}}}


class _Page(HTMLParser):
    """The parts of a page a test reads: scripts (attributes and text), the CSP, table cells by table id."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.csp = ""
        self.texts: list[str] = []
        self._script: dict[str, str | None] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "script":
            self._script = found
            self.scripts.append((found, ""))
        if tag == "meta" and found.get("http-equiv") == "Content-Security-Policy":
            self.csp = found.get("content") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        else:
            self.texts.append(data)


def parse(text: str) -> _Page:
    page = _Page()
    page.feed(text)
    page.close()
    return page


@pytest.fixture(scope="module")
def config() -> Config:
    return parse_config(CONFIG)


@pytest.fixture(scope="module")
def hostile_sample(config: Config) -> Dataset:
    """The bundled sample with hostile text in one item's context, reply and reference."""
    sample = open_dataset("sample", config, remember=False)
    first = sample.examples[0]
    changed = dataclasses.replace(first, candidate=f"reply {HOSTILE}", references=(f"reference {HOSTILE}",),
                                  context=(Turn("User", f"context {HOSTILE}"),))
    return Dataset(sample.name, [changed, *sample.examples[1:]], sample.source, sample.description, dict(sample.meta))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, config: Config, hostile_sample: Dataset) -> tuple[Session, int, int]:
    """Two fake-judge runs on the sample: one judge, then two."""
    session = Session(config, store_path=tmp_path_factory.mktemp("store") / "runs.sqlite3")
    ids = []
    for judges in (("fa",), ("fa", "fb")):
        plan = plan_run(RunRequest("likert-1to5", judges=judges, aspect="overall"), hostile_sample, config)
        ids.append(judge(session, [plan], hostile_sample).summaries[0].run_id)
    return session, ids[0], ids[1]


def _report(runs: tuple[Session, int, int], run_ids: tuple[int, ...], path: Path, dataset: Dataset,
            **options: object) -> HtmlReportResult:
    session = runs[0]
    return write_html_report(session, HtmlReportRequest(run_ids, path, n_boot=100, **options),  # type: ignore[arg-type]
                             current=dataset)


@pytest.fixture(scope="module")
def two_run_report(tmp_path_factory: pytest.TempPathFactory, runs: tuple[Session, int, int],
                   hostile_sample: Dataset) -> HtmlReportResult:
    return _report(runs, (runs[1], runs[2]), tmp_path_factory.mktemp("report") / "two.html", hostile_sample)


# -- escaping ------------------------------------------------------------------------------------

def test_json_for_a_script_block_holds_no_closing_tag_comment_or_line_separator_and_reads_back() -> None:
    data = {"text": HOSTILE, "list": [HOSTILE, None, 0.5]}
    written = escape.script_json(data)
    for forbidden in ("<", ">", "\u2028", "\u2029"):
        assert forbidden not in written
    assert json.loads(written) == data
    assert escape.text(HOSTILE).count("<") == 0 and "&lt;/script&gt;" in escape.text(HOSTILE)


def test_hostile_dataset_text_and_model_output_stay_text_in_the_page_and_its_data(
        two_run_report: HtmlReportResult) -> None:
    text = two_run_report.text
    page = parse(text)
    # Exactly the report's two script elements: the data block and the script; nothing the data opened.
    assert [attrs for attrs, _ in page.scripts] == [{"type": "application/json", "id": "items-data"}, {}]
    assert "alert(" not in page.scripts[1][1]
    assert "<img" not in text and "\u2028" not in text
    data = json.loads(page.scripts[0][1])
    assert data["rows"][0][2] == f"reply {HOSTILE}"
    assert data["rows"][0][3] == f"reference {HOSTILE}"
    assert data["contexts"][data["rows"][0][1]] == f"User: context {HOSTILE}"


def test_model_output_in_the_item_table_reads_back_exactly() -> None:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    examples = [Example("a", "g", (Turn("User", "hi"),), "hello", ratings={"overall": Rating((4, 5), scale)})]
    columns = ItemColumns(judges={"j": {"a": 0.75}}, raw={"j": {"a": HOSTILE}}, flags={"a": [HOSTILE]},
                          findings={"a": HOSTILE})
    data = item_table(examples, "overall", columns)
    written = escape.script_json(data)
    assert "<" not in written and json.loads(written) == data
    assert data["rows"] == [["a", 0, "hello", 4.5, "4, 5", [HOSTILE], 0.75, HOSTILE, HOSTILE]]


# -- the content security policy -------------------------------------------------------------------

def test_the_policy_fetches_nothing_and_allows_exactly_the_page_s_script(two_run_report: HtmlReportResult) -> None:
    page = parse(two_run_report.text)
    policy = dict(part.strip().split(" ", 1) for part in page.csp.split(";"))
    assert policy["default-src"] == "'none'"
    assert policy["img-src"] == "data:" and policy["style-src"] == "'unsafe-inline'"
    script = page.scripts[1][1]
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    assert policy["script-src"] == f"'sha256-{digest}'" == script_hash(SCRIPT)
    assert page.csp == csp()
    # Nothing in the page names another address to fetch.
    assert not re.search(r"""(src|href)=["']?(https?:|//)""", two_run_report.text)


# -- the sections ----------------------------------------------------------------------------------

def test_one_run_has_no_leaderboard_and_no_paired_verdict(tmp_path: Path, runs: tuple[Session, int, int],
                                                          hostile_sample: Dataset) -> None:
    result = _report(runs, (runs[1],), tmp_path / "one.html", hostile_sample, metrics=False)
    assert result.sections == ("agreement", "charts", "discernment", "items", "settings")
    assert result.path == tmp_path / "one.html" and result.path.stat().st_size == result.bytes_written
    assert result.items == 60


def test_two_runs_add_the_leaderboard_and_the_paired_verdict_of_the_compare_use_case(
        two_run_report: HtmlReportResult, runs: tuple[Session, int, int], hostile_sample: Dataset) -> None:
    assert two_run_report.sections == ("agreement", "leaderboard", "paired", "charts", "discernment", "items",
                                       "settings")
    session, a, b = runs
    comparison = compare(session, CompareRequest(a, b, qualities=("overall",), paired_boot=100), current=hostile_sample)
    page_text = " ".join(" ".join(parse(two_run_report.text).texts).split())
    assert comparison.paired
    for paired in comparison.paired:
        assert " ".join(verdict_line(paired, "spearman").split()) in page_text


def test_the_agreement_cells_are_the_command_line_s_texts(two_run_report: HtmlReportResult,
                                                          runs: tuple[Session, int, int], config: Config,
                                                          hostile_sample: Dataset) -> None:
    """The run's agreement as `dialjudge judge` computes and prints it (the judge use case's reports)."""
    session, _, b = runs
    plan = plan_run(RunRequest("likert-1to5", judges=("fa", "fb"), aspect="overall"), hostile_sample, config)
    outcome = judge(session, [plan], hostile_sample)  # finished with these settings: shown again
    assert outcome.summaries[0].run_id == b
    report = outcome.reports(AgreementRequest(n_boot=100)).agreement
    assert report is not None
    table = wide_table(report.records, title="", level="turn", subset="all")
    page_text = two_run_report.text
    for row, cells in zip(table.rows, table.text_rows(with_ci=False)):
        r, rho = row.cells[("overall", "pearson")], row.cells[("overall", "spearman")]
        expected = (f'<th scope="row">{escape.text(row.evaluator)}</th>'
                    f'<td class="num"><span class="value">{cells[1]}</span><span class="ci">{interval_text(r.low, r.high)}'
                    f'</span></td><td class="num"><span class="value">{cells[2]}</span><span class="ci">'
                    f"{interval_text(rho.low, rho.high)}</span></td>")
        assert expected in page_text, row.evaluator


def test_bad_requests_are_refused_with_a_message(tmp_path: Path, runs: tuple[Session, int, int],
                                                 hostile_sample: Dataset) -> None:
    with pytest.raises(ConfigError, match="at least one run"):
        HtmlReportRequest(())
    with pytest.raises(ConfigError, match="named twice"):
        HtmlReportRequest((1, 1))
    with pytest.raises(ConfigError, match="no such quality"):
        _report(runs, (runs[1],), tmp_path / "x.html", hostile_sample, quality="charm")
    with pytest.raises(DialjudgeError, match="no run with id 99"):
        _report(runs, (99,), tmp_path / "x.html", hostile_sample)
    with pytest.raises(DialjudgeError, match="is a folder"):
        _report(runs, (runs[1],), tmp_path, hostile_sample, metrics=False)


def test_the_export_use_case_writes_the_report_as_one_more_format(tmp_path: Path, runs: tuple[Session, int, int],
                                                                  hostile_sample: Dataset) -> None:
    session, a, _ = runs
    result = export(session, ExportRequest(a, tmp_path, ("html", "csv"), n_boot=0), current=hostile_sample)
    names = [p.name for p in result.paths]
    assert names[-1] == f"run-{a}-report.html" and f"run-{a}-agreement.csv" in names and len(names) == len(set(names))
    assert "items-data" in (tmp_path / f"run-{a}-report.html").read_text(encoding="utf-8")


# -- many items: the table's data and the charts' budget -------------------------------------------

def test_the_item_table_holds_every_row_and_each_context_once_at_many_items() -> None:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    n = 20_000
    examples = [Example(f"i{k}", f"g{k // 5}", (Turn("User", f"context {k // 5}"),), f"reply {k}",
                        ratings={"overall": Rating((1 + k % 5,), scale)}) for k in range(n)]
    scores = {f"i{k}": (k % 100) / 100 for k in range(n)}
    data = item_table(examples, "overall", ItemColumns(judges={"j": scores}, raw={"j": {"i3": "4"}}))
    columns, rows, contexts = data["columns"], data["rows"], data["contexts"]
    assert isinstance(rows, list) and isinstance(columns, list) and isinstance(contexts, list)
    assert len(rows) == n and len(contexts) == n // 5
    assert {len(r) for r in rows} == {len(columns)}
    assert rows[3] == ["i3", 0, "reply 3", 4.0, "4", [], 0.03, "4"]
    assert contexts[rows[12_345][1]] == "User: context 2469"


@pytest.mark.parametrize("n", [SCATTER_LIMIT, 100_000])
def test_a_chart_stays_within_its_budget_whatever_the_items(n: int) -> None:
    rng = np.random.default_rng(0)
    human = rng.random(n)
    judge_scores = np.clip(human + rng.normal(0, 0.2, n), 0, 1)
    svg = evaluator_chart("judge", human, judge_scores, chart_id="c")
    size = len(svg.encode("utf-8"))
    assert size <= CHART_BUDGET_BYTES
    assert svg.startswith("<svg") and "<?xml" not in svg and "<script" not in svg
    # Every id is the chart's own, so two charts in one page cannot clash.
    assert all(i.startswith("c-") for i in re.findall(r'\bid="([^"]+)"', svg))
    # Twelve judges' charts fit the report's budget.
    assert 12 * size <= CHARTS_BUDGET_BYTES
