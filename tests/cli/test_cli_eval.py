"""`dialjudge eval EXPERIMENT`: the matrix judged through the judge use case, reused and resumed; its
validation names the key; `dialjudge check EXPERIMENT` gates the runs it made."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.core.api import Session
from dialjudge.core.api.experiments import plan_experiment, read_experiment, run_experiment
from dialjudge.core.tuning.experiment import packaged_experiments

DEADLINE_S = 120.0

EXPERIMENT = """
[experiment]
name = "small"
quality = "overall"
limit = 30
n_boot = 200
metrics = false
{report}
[[datasets]]
name = "sample"

[judges.fast]
backend = "fake"
model = "fake-a"
{fast_options}
[judges.sim]
backend = "fake"
model = "sim"
options = {{ agreement = 0.8, dataset = "sample", quality = "overall" }}

[defaults]
template = "likert-1to5"
aspect = "overall"
mode = "logprob"

[grid]
judge = ["fast", "sim"]

[gate]
judge = "sim"
min = ["spearman=0.3"]
max_failures = "2%"
"""


def write_experiment(folder: Path, *, report: str = "", fast_options: str = "") -> Path:
    path = folder / "small.toml"
    path.write_text(EXPERIMENT.format(report=report, fast_options=fast_options), encoding="utf-8")
    return path


def store_path() -> Path:
    store = Session().open_store()
    store.close()
    return Path(store.path)


def judgments(path: Path | None = None) -> int:
    path = path or store_path()
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=5) as db:
            return int(db.execute("SELECT COUNT(*) FROM judgments").fetchone()[0])
    except sqlite3.OperationalError:  # the tables are not made yet
        return 0


def test_eval_runs_the_matrix_ranks_and_gates_then_reuses_the_runs(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    experiment = write_experiment(tmp_path)
    code, out, err = run(capsys, "eval", str(experiment))
    assert code == 0, err
    assert "experiment 'small': 2 runs (1 datasets × 2 variants)" in err
    assert "Leaderboard: sample · overall · global" in out and "run 1 fast" in out and "run 2 sim" in out
    assert "ok   spearman ≥ 0.3 (lower CI bound) — run 2 sim · overall" in out
    assert "gate passed: 2 of 2 checks hold" in out
    assert judgments() == 60

    code, out_again, err = run(capsys, "eval", str(experiment))
    assert code == 0, err
    assert judgments() == 60  # nothing judged anew
    assert err.count("reused (finished before)") == 2
    gate_lines = [line for line in out.splitlines() if line.startswith(("ok", "FAIL", "gate"))]
    assert [line for line in out_again.splitlines() if line.startswith(("ok", "FAIL", "gate"))] == gate_lines

    # The gate of the file on the runs eval made, and a rule typed on top that the fake judge misses.
    code, out, _ = run(capsys, "check", str(experiment))
    assert code == 0 and "gate passed" in out
    code, out, _ = run(capsys, "check", str(experiment), "--judge", "fast")
    assert code == 1 and out.count("FAIL") == 1 and "FAIL spearman ≥ 0.3 (lower CI bound) — run 1 fast" in out


def test_check_of_an_experiment_not_yet_run_exits_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, "check", str(write_experiment(tmp_path)))
    assert code == 2 and out == ""
    assert "sample · judge=fast: it has not been run; run `dialjudge eval" in err


def test_eval_applies_rules_of_the_command_line_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "eval", str(write_experiment(tmp_path)), "--min", "kendall=0.9")
    assert code == 1
    (line,) = [x for x in out.splitlines() if x.startswith("FAIL")]
    assert line.startswith("FAIL kendall ≥ 0.9 (lower CI bound) — run 2 sim · overall: τ = ")


def test_the_report_step_is_called_with_the_runs_and_the_files_path(tmp_path: Path) -> None:
    experiment = read_experiment(write_experiment(tmp_path, report='report = "out/report.html"'))
    session = Session()
    plan = plan_experiment(session, experiment)
    calls = []
    outcome = run_experiment(session, plan, write_report=lambda s, ids, path: calls.append((s, ids, path)))
    assert calls == [(session, (1, 2), tmp_path / "out" / "report.html")]
    assert outcome.report == tmp_path / "out" / "report.html" and outcome.finished
    # By default the step is the HTML report of the experiment's runs, as `dialjudge report 1 2` writes it.
    default = run_experiment(session, plan)
    page = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert default.report == tmp_path / "out" / "report.html" and default.report_note is None
    assert "Content-Security-Policy" in page and "run 1" in page and "run 2" in page


def bad(text: str, old: str, new: str) -> str:
    assert old in text, old
    return text.replace(old, new, 1)


BASE = EXPERIMENT.format(report="", fast_options="")


@pytest.mark.parametrize(("text", "message"), [
    (bad(BASE, 'mode = "logprob"', 'mode = "foo"'),
     "small.toml: defaults.mode must be one of generate, logprob, yesno, not 'foo'"),
    (bad(BASE, "[grid]", '[[variant]]\nname = "x"\nmode = "foo"\n[grid]'),
     "small.toml: variant[0].mode must be one of generate, logprob, yesno, not 'foo'"),
    (bad(BASE, "limit = 30", "limit = 0"), "small.toml: experiment.limit must be at least 1 item, not 0"),
    (bad(BASE, "limit = 30", 'limit = "30"'), "small.toml: experiment.limit must be a whole number, not '30'"),
    (bad(BASE, "metrics = false", "metrics = 1"), "small.toml: experiment.metrics must be true or false, not 1"),
    (bad(BASE, "metrics = false", 'report = "report.pdf"'),
     "small.toml: experiment.report must name an .html file, not 'report.pdf'"),
    (bad(BASE, "metrics = false", 'level = "turn"'), "experiment.level 'turn' is not one of global, context, system"),
    (bad(BASE, '[[datasets]]\nname = "sample"', '[[datasets]]\nname = "sample"\n[[datasets]]\nlimit = 3'),
     "small.toml: datasets[1] needs either name (a dataset of the catalogue) or path (a file)"),
    (bad(BASE, 'name = "sample"', 'name = "sample"\nlimt = 3'),
     "small.toml: datasets[0].limt is not a known key (known: limit, map, name, path, quality, subset)"),
    (bad(BASE, 'name = "sample"', 'name = "sample"\nmap = { reply = "candidate" }'),
     "small.toml: datasets[0].map reads a table file's columns: give path, not name"),
    (bad(BASE, 'name = "sample"', 'path = "nowhere.csv"'), "small.toml: datasets[0].path: no such file"),
    (bad(BASE, 'name = "sample"', 'name = "nosuch"'), "small.toml: datasets[0] (nosuch): "),
    (bad(BASE, 'backend = "fake"\nmodel = "fake-a"', 'backend = "fakes"\nmodel = "fake-a"'),
     "small.toml: judges.fast.backend must be one of"),
    (bad(BASE, 'judge = ["fast", "sim"]', 'judge = ["fast", "nobody"]'),
     "small.toml: variant 'judge=nobody' on datasets[0] (sample): "),
    (bad(BASE, 'aspect = "overall"', 'aspect = "charm"'), "small.toml: variant 'judge=fast' on datasets[0] (sample): "
     "template 'likert-1to5' has no aspect 'charm'"),
    (bad(BASE, 'quality = "overall"', 'quality = "charm"'),
     "small.toml: experiment.quality: sample has no quality 'charm'"),
    (bad(BASE, 'min = ["spearman=0.3"]', 'min = ["spearmann=0.3"]'),
     "small.toml: gate.min 'spearmann=0.3': 'spearmann' is not one of spearman, pearson, kendall, kappa, agreement"),
    (bad(BASE, 'min = ["spearman=0.3"]', "min = [0.3]"), "small.toml: gate.min[0] must be \"spearman=0.3\", not 0.3"),
    (bad(BASE, 'max_failures = "2%"', 'max_failures = "2"'), "small.toml: gate.max_failures '2': a share is at most 1"),
    (bad(BASE, "[gate]", "[gate]\ncoefficient = \"kappa\""), "gate.coefficient 'kappa' is not one of spearman"),
    (bad(BASE, "[experiment]", "[search]\nbudget = 3\n[experiment]"),
     "small.toml: search is a tuning search's table (dialjudge tune); an experiment's settings go in [experiment]"),
    (bad(BASE, "[experiment]", "[experimint]\n[experiment]"), "small.toml: experimint is not a known key"),
    (bad(BASE, "[grid]", '[[variant]]\nname = "x"\naspect_definition = "nice"\n[grid]'),
     "small.toml: variant 'x': aspect_definition rewrites a template for a tuning search"),
    ("[experiment\n", "small.toml: not valid TOML"),
])
def test_validation_names_the_key_at_fault(capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str,
                                           message: str) -> None:
    path = tmp_path / "small.toml"
    path.write_text(text, encoding="utf-8")
    code, out, err = run(capsys, "eval", str(path))
    assert code == 2 and message in err and "Traceback" not in err, err
    assert judgments() == 0  # refused before anything is judged


OTHER_NAMES = """item,history,reply,gold,rater1,rater2
x1,A: hi,how are you,fine thanks,4,5
x2,A: yo,sup,hey,2,
x3,A: hm,ok,okay,1,3
x4,A: so,right,yes,5,5
"""


def test_a_column_map_reads_a_table_with_other_column_names(capsys: pytest.CaptureFixture[str],
                                                            tmp_path: Path) -> None:
    (tmp_path / "other.csv").write_text(OTHER_NAMES, encoding="utf-8")
    text = bad(BASE, '[[datasets]]\nname = "sample"', '[[datasets]]\npath = "other.csv"  # beside the file\n'
               'map = { item = "id", history = "context", reply = "candidate", gold = "reference", '
               'rater1 = "Overall:r1", rater2 = "Overall:r2" }')
    text = bad(text, "[gate]", "[gate]\nquality = \"Overall\"")
    text = bad(text, 'min = ["spearman=0.3"]', 'min = ["spearman=-1"]')
    path = tmp_path / "mapped.toml"
    path.write_text(bad(text, 'options = { agreement = 0.8, dataset = "sample", quality = "overall" }', ""),
                    encoding="utf-8")
    experiment = read_experiment(path)
    assert experiment.datasets[0].target == str(tmp_path / "other.csv")
    assert experiment.datasets[0].column_map is not None and experiment.datasets[0].column_map.as_text() == [
        "item=id", "history=context", "reply=candidate", "gold=reference", "rater1=Overall:r1", "rater2=Overall:r2"]
    code, out, err = run(capsys, "eval", str(path))
    assert "Traceback" not in err and "run 2 sim · Overall" in out, err
    bad_map = bad(path.read_text(encoding="utf-8"), 'rater2 = "Overall:r2"', 'rater2 = "Overall"')
    path.write_text(bad_map, encoding="utf-8")
    code, _, err = run(capsys, "eval", str(path))
    assert code == 2 and "mapped.toml: datasets[0].map: " in err, err


def test_the_packaged_example_parses_and_plans() -> None:
    assert "sample" in packaged_experiments()
    experiment = read_experiment("sample")
    assert [v.judge for v in experiment.variants] == ["smollm2", "fake", "simulated"]
    assert [j.name for j in experiment.judges] == ["fake", "simulated"]
    assert experiment.gate.judge == "simulated" and experiment.gate.rules
    assert experiment.settings.report is not None and experiment.settings.report.name == "sample-example.html"
    plan = plan_experiment(Session(), experiment)  # the bundled judge's configuration needs no model loaded
    assert [r.label for r in plan.runs] == ["sample · judge=smollm2", "sample · judge=fake",
                                            "sample · judge=simulated"]
    assert all(len(r.plan.config.select_items(r.dataset)) == 30 for r in plan.runs)


def test_the_packaged_example_is_in_the_package_data() -> None:
    pyproject = (Path(__file__).parents[2] / "pyproject.toml").read_text(encoding="utf-8")
    assert '"experiments/*.toml"' in pyproject


# -- Ctrl+C, then a rerun resumes -----------------------------------------------------------------

def start_eval(experiment: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.Popen([sys.executable, "-m", "dialjudge.cli.main", "eval", str(experiment)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def wait_until_stored(process: subprocess.Popen[str], path: Path, at_least: int) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while time.monotonic() < deadline:
        if judgments(path) >= at_least:
            return
        try:
            process.wait(timeout=0.02)  # doubles as the pause between polls
        except subprocess.TimeoutExpired:
            continue
        _, err = process.communicate()
        pytest.fail(f"eval ended (code {process.returncode}) before {at_least} judgments: {err}")
    process.kill()
    pytest.fail(f"fewer than {at_least} judgments within {DEADLINE_S:g} s")


def test_ctrl_c_stops_cleanly_and_a_rerun_resumes(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The fake judge answers one request at a time, each after 20 ms: the interrupt lands in the second run.
    experiment = write_experiment(tmp_path, fast_options="concurrency = 1\noptions = { delay_s = 0.02 }\n")
    text = experiment.read_text(encoding="utf-8")
    experiment.write_text(bad(text, 'judge = ["fast", "sim"]', 'judge = ["sim", "fast"]'), encoding="utf-8")
    path = store_path()
    child = start_eval(experiment)
    wait_until_stored(child, path, 35)  # run 1 (30 judgments) done, run 2 started
    child.send_signal(signal.SIGINT)
    try:
        _, err = child.communicate(timeout=DEADLINE_S)
    except subprocess.TimeoutExpired:
        child.kill()
        pytest.fail("eval did not stop after Ctrl+C")
    assert child.returncode == 130, err
    assert "interrupted: the run in flight is cancelled and keeps what it stored" in err and "Traceback" not in err
    before = judgments(path)
    assert 35 <= before < 60
    with sqlite3.connect(path) as db:
        statuses = dict(db.execute("SELECT id, status FROM runs ORDER BY id"))
    assert statuses == {1: "finished", 2: "cancelled"}

    code, out, err = run(capsys, "eval", str(experiment))
    assert code == 0, err
    assert judgments(path) == 60  # each judgment once: the stored ones kept, only the rest asked
    rows = [line for line in err.splitlines() if line.startswith("│sample")]
    assert "reused (finished before)" in rows[0] and f"resumed, {60 - before} asked" in rows[1], err
    with sqlite3.connect(path) as db:
        assert dict(db.execute("SELECT id, status FROM runs ORDER BY id")) == {1: "finished", 2: "finished"}


def test_the_experiment_file_format_is_documented() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "experiments.md").read_text(encoding="utf-8")
    for key in ("[experiment]", "[[datasets]]", "[judges.", "[defaults]", "[[variant]]", "[grid]", "[gate]",
                "max_failures", "no_worse_than", "report"):
        assert key in docs, key
    assert textwrap.dedent(EXPERIMENT).strip().splitlines()[0] == "[experiment]"
