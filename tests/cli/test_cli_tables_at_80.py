"""Every table the command line prints, at 80 columns: no line wider than 80 and no number cut.

One module fixture runs the commands that print tables (fake judges; the shared USR file where it is
there) with ``--width 80`` and records every table they build, where it was built. The tests then
check the text against the tables' own cells: each cell of a numeric column appears whole on one
line ("-0.…", "60/…", "[.53…" cannot), and no line is wider than 80. A last test reads cli/ for every
place that builds a table and fails when one was not rendered here.
"""

from __future__ import annotations

import ast
import contextlib
import io
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from dialjudge.cli import render
from dialjudge.cli.main import main
from dialjudge.core.table_fit import ColumnKind, text_width
from judge_bench_files import small_protocol_set
from shared_data import shared_data_dir

WIDTH = 80
CLI = Path(render.__file__).resolve().parent
DATA = Path(__file__).resolve().parents[1] / "data"
BUILDERS = ("plain_table", "wide_table", "key_values")


@dataclass
class Printed:
    argv: tuple[str, ...]
    code: int
    out: str
    err: str
    tables: list[render.FittedTable] = field(default_factory=list)


@dataclass
class Session:
    printed: list[Printed] = field(default_factory=list)
    #: (file name, function) of every place that built a table.
    sites: set[tuple[str, str]] = field(default_factory=set)


CONFIG = """
[data]
dirs = ["{data}"]

[judges.fa]
backend = "fake"
model = "fake-a"

[judges.fb]
backend = "fake"
model = "fake-b"
seed = 1

[judges.fg]
backend = "fake"
model = "fake-g"
options = {{ garbage_every = 4 }}
"""

SPACE = """
[search]
quality = "overall"
first_sample = 2
finalists = 1
n_boot = 50
[defaults]
template = "likert-1to5"
aspect = "overall"
judge = "fa"
mode = "logprob"
[[variant]]
name = "plain"
[grid]
persona = ["calibrated-annotator", "strict-fact-checker"]
"""


EXPERIMENT = """
[experiment]
name = "at80"
quality = "overall"
limit = 30
metrics = false
[[datasets]]
name = "sample"
[defaults]
template = "likert-1to5"
aspect = "overall"
mode = "logprob"
[grid]
judge = ["fa", "fb"]
[gate]
min = ["spearman=-1"]
"""


def _labels_file(tmp: Path, quality: str) -> Path:
    """The humans' rounded mean rating of the sample's first four contexts (20 items): align's corrections."""
    from dialjudge.core.api import open_dataset
    from dialjudge.core.model import Aggregation
    from dialjudge.core.stats.human import human_labels

    dataset = open_dataset("sample", remember=False)
    human = human_labels(dataset.examples, quality, Aggregation.MEAN).values
    contexts = sorted({ex.group_id for ex in dataset.examples})[:4]
    labelled = [ex.id for ex in dataset.examples if ex.group_id in contexts and human.get(ex.id) is not None]
    path = tmp / "labels.csv"
    path.write_text("item_id,label\n" + "".join(f"{i},{round(float(human[i]))}\n" for i in labelled),
                    encoding="utf-8")
    return path


def _commands(tmp: Path, usr: bool) -> Iterator[tuple[str, ...]]:
    pairs = str(DATA / "pairs_generic.csv")
    protocol = str(small_protocol_set(tmp))
    space = tmp / "space.toml"
    space.write_text(SPACE, encoding="utf-8")
    yield "datasets", "list"
    yield "datasets", "show", "sample"
    yield "datasets", "show", pairs
    yield "datasets", "stats", "sample"
    yield "datasets", "stats", "incar-kpi"
    yield "metrics", "--dataset", "sample", "--bootstrap", "50", "--kendall"
    # run 1: two judges, repeated (stability), beside the metrics, on a set with adversarial candidates
    yield ("judge", "--judge", "fa", "--judge", "fb", "--template", "likert-1to5", "--aspect", "coherence",
           "--repeats", "2", "--bootstrap", "50")
    # run 2: another template on the same items, with unparseable answers (the failures table)
    yield ("judge", "--judge", "fa", "--judge", "fg", "--template", "likert-1to5", "--aspect", "coherence", "--mode",
           "generate", "--bootstrap", "50")
    # runs 3-4: random few-shot draws
    yield ("judge", "--judge", "fa", "--template", "likert-1to5", "--aspect", "coherence", "--fewshot", "random:1",
           "--fewshot-draws", "2", "--limit", "20", "--bootstrap", "50", "--no-metrics")
    # run 5: a KPI label quality, two judges (max-vote agreement, the label report)
    yield ("judge", "--dataset", "incar-kpi", "--template", "inca-kpi", "--kpi", "follow-up", "--judge", "fa",
           "--judge", "fb", "--mode", "generate", "--bootstrap", "50")
    # run 6: pairwise on the sample
    yield ("judge", "--judge", "fa", "--template", "pairwise-plain", "--mode", "pairwise", "--pairs", "2",
           "--pair-seed", "3", "--limit", "20", "--no-metrics", "--bootstrap", "50")
    # runs 7-8: pre-paired data, then the same pairs judged another way
    yield "judge", "--dataset", pairs, "--template", "pairwise-plain", "--judge", "fa", "--bootstrap", "50"
    yield ("judge", "--dataset", pairs, "--template", "likert-1to5", "--aspect", "overall", "--judge", "fa",
           "--bootstrap", "50", "--versus-run", "7")
    # runs 9-11: JUDGE-BENCH's protocol, one run per metric
    yield ("judge", "--dataset", protocol, "--protocol", "judge-bench", "--template", "likert-1to5", "--aspect",
           "coherence", "--mode", "generate", "--judge", "fa", "--bootstrap", "0")
    yield "runs", "protocol", "judge-bench", "9", "10", "11"
    yield "runs", "import", str(DATA / "imports" / "pair_verdicts.csv"), "--dataset", str(DATA / "judge_bench_pairs.json")
    yield "tune", "--dataset", "sample", "--space", str(space), "--budget", "120"
    yield "runs", "list"
    yield "runs", "list", "--unfold"
    yield "runs", "show", "1"
    yield "runs", "compare", "1", "2", "--bootstrap", "100"
    yield "runs", "compare", "1", "6"  # a pointwise run against a pairwise one: verdicts on the same pairs
    yield "leaderboard", "--dataset", "sample", "--quality", "coherence", "--bootstrap", "50"
    yield "jury", "1", "2", "--bootstrap", "50"
    yield "cascade", "1:fa", "1:fb"
    yield "align", "1", "--labels", str(_labels_file(tmp, "coherence")), "--bootstrap", "50"
    experiment = tmp / "experiment.toml"
    experiment.write_text(EXPERIMENT, encoding="utf-8")
    yield "eval", str(experiment), "--bootstrap", "50"
    if usr:
        yield "datasets", "show", "usr-topicalchat"
        yield "datasets", "stats", "usr-topicalchat"
        yield ("judge", "--dataset", "usr-topicalchat", "--template", "likert-1to5", "--aspect", "overall",
               "--quality", "Overall", "--judge", "fa", "--mode", "logprob", "--no-metrics", "--bootstrap", "0")
        usr_run = "last"
        yield "runs", "alt-test", usr_run
        yield "runs", "estimate", usr_run, "--labelled", "50", "--seed", "1"
        yield "runs", "label-next", usr_run, "--budget", "30", "--seed", "4"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory, session_cache_dir: Path) -> Session:
    tmp = tmp_path_factory.mktemp("at80")
    usr = (shared_data_dir() / "usr" / "usr_topical_chat.json").is_file()
    config = tmp / "dialjudge.toml"
    config.write_text(CONFIG.format(data=shared_data_dir()), encoding="utf-8")
    recorded = Session()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DIALJUDGE_CONFIG", str(config))
        mp.setenv("DIALJUDGE_DATA_DIR", str(tmp / "data"))
        mp.setenv("DIALJUDGE_CACHE_DIR", str(session_cache_dir))
        mp.delenv("COLUMNS", raising=False)
        current: list[render.FittedTable] = []
        for name in BUILDERS:
            mp.setattr(render, name, _recording(getattr(render, name), current, recorded.sites))
        last_run = 0
        for argv in _commands(tmp, usr):
            argv = tuple(str(last_run) if a == "last" else a for a in argv)
            current.clear()
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = main(["--width", str(WIDTH), *argv])
            recorded.printed.append(Printed(argv, code, out.getvalue(), err.getvalue(), list(current)))
            last_run = _newest_run() or last_run
    render.set_width(None)
    return recorded


def _newest_run() -> int | None:
    from dialjudge.core.api.stored import list_runs
    from dialjudge.core.judges.store.run_store import RunStore

    with RunStore() as store:
        runs = list_runs(store)
    return runs[0].id if runs else None


def _recording(build, current: list[render.FittedTable], sites: set[tuple[str, str]]):  # type: ignore[no-untyped-def]
    def recorded(*args, **kwargs):  # type: ignore[no-untyped-def]
        caller = sys._getframe(1)
        sites.add((Path(caller.f_code.co_filename).name, caller.f_code.co_name))
        table = build(*args, **kwargs)
        current.append(table)
        return table
    return recorded


def test_every_command_ran(session: Session) -> None:
    failed = [(p.argv, p.err[-400:]) for p in session.printed if p.code != 0]
    assert not failed


def test_no_line_is_wider_than_80(session: Session) -> None:
    for printed in session.printed:
        for stream in (printed.out, printed.err):
            for line in stream.splitlines():
                if line.startswith("|"):  # a Markdown report (tune's), a file format: not laid out
                    continue
                if line.startswith(("ok   ", "FAIL ", "gate passed", "gate failed")):  # a gate: one line a rule, for CI logs
                    continue
                assert text_width(line.rstrip()) <= WIDTH, (printed.argv, line)


def test_every_number_is_shown_whole_on_one_line(session: Session) -> None:
    checked = 0
    for printed in session.printed:
        lines = (printed.out + printed.err).splitlines()
        for table in printed.tables:
            layout = table.layout(WIDTH)
            shown = {i for part in layout.parts for i in part.columns}
            numbers = [i for i in shown if table.columns[i].kind is ColumnKind.NUMBER]
            for row in table.rows:
                for i in numbers:
                    for piece in row[i].plain.split("\n"):
                        if piece.strip():
                            assert any(piece in line for line in lines), (printed.argv, table.title, piece)
                            checked += 1
    assert checked > 1000


def test_a_table_too_wide_says_what_it_left_out_once(session: Session) -> None:
    listing = next(p for p in session.printed if p.argv == ("runs", "list", "--unfold"))
    assert listing.out.count("not shown at 80 columns:") == 1
    (runs,) = listing.tables
    assert set(runs.layout(WIDTH).dropped) <= {"created", "mode", "status", "judges", "dataset", "template"}


def test_every_place_that_builds_a_table_was_rendered(session: Session) -> None:
    assert _table_sites() - session.sites == set()


def _table_sites() -> set[tuple[str, str]]:
    """(file, function) of every call in cli/ that builds a table: ``render.X(...)``, or ``X(...)`` in render."""
    sites = set()
    for path in CLI.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef) or function.name in BUILDERS:
                continue
            for node in ast.walk(function):
                if not isinstance(node, ast.Call):
                    continue
                called = node.func
                if (isinstance(called, ast.Attribute) and called.attr in BUILDERS
                        and isinstance(called.value, ast.Name) and called.value.id == "render") or (
                        path.name == "render.py" and isinstance(called, ast.Name) and called.id in BUILDERS):
                    sites.add((path.name, function.name))
    return sites


def test_columns_from_the_environment_when_piped_and_width_over_it(capsys: pytest.CaptureFixture[str],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    def widest(*argv: str) -> int:
        assert main(list(argv)) == 0
        out = capsys.readouterr().out
        return max(text_width(line.rstrip()) for line in out.splitlines())

    monkeypatch.delenv("COLUMNS", raising=False)
    assert widest("datasets", "list") > 100  # piped, nothing said: tables whole
    monkeypatch.setenv("COLUMNS", "60")
    assert widest("datasets", "list") <= 60
    assert widest("--width", "100", "datasets", "list") <= 100
    assert widest("--width", "100", "datasets", "list") > 60
    render.set_width(None)


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    from dialjudge import __version__

    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"dialjudge {__version__}"

