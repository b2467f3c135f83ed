"""A judge run (and a tuning search, an alignment) in a worker process: the same events as in-process, cancelled
by its job alone, and a worker killed mid-run leaves an interrupted run that resumes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from align_fixtures import judge_the_sample

import dialjudge
from dialjudge.cli.main import main as cli_main
from dialjudge.core.api import (
    EngineOptions,
    Session,
    list_runs,
    open_search,
    start_run,
)
from dialjudge.core.api.align import AlignRequest, align, render_align
from dialjudge.core.api.prompt_lab import PromptSetup, prepare_prompt, trial_request
from dialjudge.core.api.run_worker import (
    JudgeProcessDied,
    WorkerAlignHandle,
    WorkerRunHandle,
    WorkerSearchHandle,
    ask_in_worker,
    close_judge_worker,
    judge_log,
    judge_log_dir,
    judge_worker,
    runs_in_worker,
    start_align_in_worker,
    start_run_in_worker,
    start_search_in_worker,
)
from dialjudge.core.api.types import RunStatus
from dialjudge.core.config import Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import shipped_template_dir
from dialjudge.core.judges.run.events import (
    JudgmentScored,
    RunEvent,
    RunFailed,
    RunFinished,
    RunProgress,
    RunStarted,
)
from dialjudge.core.judges.store.run_store import RunStore, process_is_alive
from dialjudge.core.model import Dataset
from dialjudge.core.planning import plan_run
from dialjudge.core.tuning.align import START
from dialjudge.core.tuning.search import JudgingProgressed, SearchCancelled, SearchFinished
from dialjudge.core.tuning.space import parse_space

#: Seconds a wait may take before the test fails (the machine may be busy; nothing asserts a timing).
WAIT_S = 120.0


@pytest.fixture(autouse=True)
def close_workers(monkeypatch: pytest.MonkeyPatch):
    """Every session a test opens has its judge worker closed when the test ends."""
    opened: list[Session] = []
    original = Session.__init__

    def tracked(self, *args, **kwargs):
        original(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(Session, "__init__", tracked)
    yield
    for session in opened:
        close_judge_worker(session)


def judges(delay_s: float = 0.0) -> Config:
    return parse_config({"judges": {"fake": {"backend": "fake", "model": "fake-model", "concurrency": 1,
                                             "options": {"delay_s": delay_s}}}})


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", Config())


class Events(list[RunEvent]):
    """A display that keeps every event and says when ``judged`` judgments arrived."""

    def __init__(self, judged: int = 0) -> None:
        super().__init__()
        self.judged = judged
        self.enough = threading.Event()

    def on_event(self, event: RunEvent) -> None:
        self.append(event)
        if sum(isinstance(e, JudgmentScored) for e in self) >= self.judged:
            self.enough.set()

    def scored(self) -> list[JudgmentScored]:
        return [e for e in self if isinstance(e, JudgmentScored)]


def raised_in_thread(handle: WorkerSearchHandle | WorkerAlignHandle) -> tuple[threading.Thread, list[BaseException]]:
    """A search's or an alignment's ``handle`` run to its end on a thread; what it raised."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            handle.run_to_end()
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    return thread, errors


def run_in_thread(handle: WorkerRunHandle) -> tuple[threading.Thread, list]:
    result: list = []
    thread = threading.Thread(target=lambda: result.append(handle.run_to_end()))
    thread.start()
    return thread, result


def plan(sample: Dataset, config: Config):
    return plan_run(sample, config, template="adv-0to1", judges=["fake"], aspect="coherence", limit=40).config


def test_a_worker_run_reports_what_an_in_process_run_does(tmp_path: Path, sample: Dataset) -> None:
    config = judges()
    session = Session(config, store_path=tmp_path / "runs.sqlite3")
    run_config = plan(sample, config)
    assert runs_in_worker(session, EngineOptions())
    here, there = Events(), Events()
    options = EngineOptions(resume=False, use_cache=False)  # both ask the judge
    expected = start_run(session, run_config, sample, display=here, options=options).run_to_end()
    summary = start_run_in_worker(session, run_config, sample, display=there, options=options).run_to_end()
    assert summary.status is RunStatus.FINISHED and summary.run_id != expected.run_id
    assert (summary.done, summary.total, summary.failures) == (expected.done, expected.total, expected.failures)
    # The same events in the same order (progress reports are timed, so their number may differ).
    assert [type(e).__name__ for e in there if not isinstance(e, (JudgmentScored, RunProgress))] == \
        [type(e).__name__ for e in here if not isinstance(e, (JudgmentScored, RunProgress))]
    # Every judgment reaches the display once, read from the store the child wrote, with its running count.
    assert sorted(e.judgment.item_id for e in there.scored()) == sorted(e.judgment.item_id for e in here.scored())
    assert [e.done for e in there.scored()] == list(range(1, expected.total + 1))
    with RunStore(session.store_path) as store:
        stored = {j.item_id: j.score for j in store.judgments.iter_judgments(summary.run_id)}
    assert {e.judgment.item_id: e.judgment.score for e in there.scored()} == stored


def test_a_killed_worker_leaves_an_interrupted_run_that_resumes(tmp_path: Path, sample: Dataset,
                                                               monkeypatch: pytest.MonkeyPatch,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    config = judges(delay_s=0.05)
    session = Session(config, store_path=tmp_path / "runs.sqlite3")
    run_config = plan(sample, config)
    events = Events(judged=5)
    handle = start_run_in_worker(session, run_config, sample, display=events, options=EngineOptions(resume=False))
    thread, result = run_in_thread(handle)
    assert events.enough.wait(WAIT_S), "the worker stored no judgments"
    assert handle.pid is not None and handle.pid != os.getpid()
    os.kill(handle.pid, signal.SIGKILL)
    thread.join(WAIT_S)
    assert not thread.is_alive()
    summary = result[0]
    assert summary.status is RunStatus.INTERRUPTED
    failed = [e for e in events if isinstance(e, RunFailed)]
    seen = len(events.scored())
    assert len(failed) == 1 and f"ended with signal 9 (SIGKILL) after {seen} judgments" in failed[0].error
    assert isinstance(events[-1], RunFinished) and events[-1].status is RunStatus.INTERRUPTED
    record = next(r for r in list_runs(session) if r.id == summary.run_id)
    assert record.status is RunStatus.INTERRUPTED and record.failures == 0 and record.wall_s > 0
    assert seen <= record.judgments < record.total  # what was stored before the kill, nothing failed
    assert handle.log_path is not None and handle.log_path.exists()
    monkeypatch.setenv("DIALJUDGE_DATA_DIR", str(tmp_path))  # the command line's store is the session's
    assert cli_main(["runs", "list"]) == 0
    (row,) = [line for line in capsys.readouterr().out.splitlines() if line.startswith("│")]
    cells = [cell.strip() for cell in row.split("│")[1:-1]]
    assert "interrupted" in cells and f"{record.judgments}/{record.total}" in cells

    resumed = Events()
    finished = start_run_in_worker(session, run_config, sample, display=resumed,
                                   options=EngineOptions(run_id=summary.run_id)).run_to_end()
    assert finished.status is RunStatus.FINISHED and finished.run_id == summary.run_id
    started = next(e for e in resumed if isinstance(e, RunStarted))
    assert started.resumed and started.done == record.judgments
    assert len(resumed.scored()) == record.total - record.judgments
    record = next(r for r in list_runs(session) if r.id == summary.run_id)
    assert record.status is RunStatus.FINISHED and record.judgments == record.total and record.failures == 0


def test_cancel_stops_the_run_and_keeps_what_is_stored(tmp_path: Path, sample: Dataset) -> None:
    config = judges(delay_s=0.05)
    session = Session(config, store_path=tmp_path / "runs.sqlite3")
    events = Events(judged=3)
    handle = start_run_in_worker(session, plan(sample, config), sample, display=events,
                                 options=EngineOptions(resume=False))
    thread, result = run_in_thread(handle)
    assert events.enough.wait(WAIT_S)
    handle.cancel()
    thread.join(WAIT_S)
    summary = result[0]
    assert summary.status is RunStatus.CANCELLED and not any(isinstance(e, RunFailed) for e in events)
    record = next(r for r in list_runs(session) if r.id == summary.run_id)
    assert record.status is RunStatus.CANCELLED and 3 <= record.judgments == summary.done < record.total


def test_an_error_in_the_worker_is_raised_in_the_parent(tmp_path: Path, sample: Dataset) -> None:
    config = judges()
    session = Session(config, store_path=tmp_path / "runs.sqlite3")
    handle = start_run_in_worker(session, plan(sample, config), sample, options=EngineOptions(run_id=999))
    with pytest.raises(Exception, match="no run with id 999"):
        handle.run_to_end()


def test_a_judge_made_in_this_process_keeps_the_run_here(tmp_path: Path) -> None:
    session = Session(judges(), store_path=tmp_path / "runs.sqlite3")
    assert not runs_in_worker(session.with_backend_factory(lambda config: FakeBackend(name=config.name)))
    assert not runs_in_worker(session, EngineOptions(clock=lambda: 0.0))


def test_the_worker_dies_with_its_parent(tmp_path: Path) -> None:
    """The parent is killed outright (kill -9): its worker ends too, and the run is interrupted."""
    script = tmp_path / "parent.py"
    script.write_text(f"""
import sys, threading
from dialjudge.core.api import EngineOptions, Session
from dialjudge.core.api.run_worker import start_run_in_worker
from dialjudge.core.config import Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.planning import plan_run

class Display:
    def on_event(self, event):
        if type(event).__name__ == "RunStarted":
            print(handle.pid, flush=True)

if __name__ == "__main__":
    config = parse_config({{"judges": {{"fake": {{"backend": "fake", "model": "m", "concurrency": 1,
                                                "options": {{"delay_s": 0.05}}}}}}}})
    sample = open_dataset("sample", Config())
    run = plan_run(sample, config, template="adv-0to1", judges=["fake"], aspect="coherence").config
    session = Session(config, store_path={str(tmp_path / "runs.sqlite3")!r})
    handle = start_run_in_worker(session, run, sample, display=Display(), options=EngineOptions(resume=False))
    handle.run_to_end()
""")
    # The dialjudge these tests import (this checkout's), not whichever one is installed.
    env = {**os.environ, "PYTHONPATH": str(Path(dialjudge.__file__).resolve().parents[1])}
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True, env=env)
    try:
        assert parent.stdout is not None
        child_pid = int(parent.stdout.readline())
        parent.kill()
        parent.wait(WAIT_S)
        gone = threading.Event()
        deadline_checks = int(WAIT_S / 0.1)
        for _ in range(deadline_checks):  # bounded: the kernel's SIGTERM, then the child's own cancel
            if not process_is_alive(child_pid) or _is_zombie(child_pid):
                gone.set()
                break
            gone.wait(0.1)
        assert gone.is_set(), "the worker outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
    session = Session(judges(), store_path=tmp_path / "runs.sqlite3")
    assert [r.status for r in list_runs(session)] in ([RunStatus.CANCELLED], [RunStatus.INTERRUPTED])


def _is_zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z")
    except (OSError, IndexError):
        return False


def shipped_text(name: str) -> str:
    return (shipped_template_dir() / f"{name}.toml").read_text(encoding="utf-8")


def trial(session: Session, sample: Dataset, judge_name: str = "fake"):
    example = sample.examples[0]
    prepared = prepare_prompt(PromptSetup(shipped_text("likert-1to5"), sample, example, aspect="overall"))
    judge = session.config.judges[judge_name]
    return ask_in_worker(session, judge, trial_request(prepared, example.id, judge))


def test_a_trial_after_a_run_uses_the_judge_the_run_opened(tmp_path: Path, sample: Dataset) -> None:
    config = judges()
    session = Session(config, store_path=tmp_path / "runs.sqlite3")
    handle = start_run_in_worker(session, plan(sample, config), sample, options=EngineOptions(resume=False))
    assert handle.run_to_end().status is RunStatus.FINISHED
    worker = judge_worker(session).pid
    answer = trial(session, sample)
    assert not answer.opened and answer.result.raw_output  # the run's judge, still open, answered
    assert judge_worker(session).pid == worker  # in the same process


def test_a_run_after_a_trial_uses_the_judge_the_trial_opened(tmp_path: Path, sample: Dataset) -> None:
    config = judges()
    session = Session(config, store_path=tmp_path / "runs.sqlite3")
    assert trial(session, sample).opened  # the first use of the judge opens it
    assert not trial(session, sample).opened
    worker = judge_worker(session).pid
    events = Events()
    start_run_in_worker(session, plan(sample, config), sample, display=events,
                        options=EngineOptions(resume=False)).run_to_end()
    assert judge_worker(session).pid == worker
    assert not trial(session, sample).opened


def test_a_trial_in_a_worker_that_was_killed_starts_another(tmp_path: Path, sample: Dataset) -> None:
    session = Session(judges(), store_path=tmp_path / "runs.sqlite3")
    trial(session, sample)
    first = judge_worker(session).pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    ended = threading.Event()
    for _ in range(int(WAIT_S / 0.05)):  # the worker's thread in this process notices and collects it
        if judge_worker(session).pid is None:
            ended.set()
            break
        ended.wait(0.05)
    assert ended.is_set()
    assert trial(session, sample).opened  # a new process, with its own judge
    assert judge_worker(session).pid not in (None, first)


SEARCH_SPACE = """
[search]
quality = "overall"
first_sample = 2
finalists = 1
n_boot = 100
[defaults]
template = "likert-1to5"
aspect = "overall"
judge = "fake"
mode = "logprob"
[[variant]]
name = "plain"
[[variant]]
name = "calibrated"
persona = "calibrated-annotator"
[[variant]]
name = "strict"
persona = "strict-fact-checker"
"""


def test_a_search_in_the_worker_reports_what_an_in_process_search_does(tmp_path: Path, sample: Dataset) -> None:
    config = judges()
    space = parse_space(SEARCH_SPACE)
    here, there = [], []
    expected = open_search(Session(config, store_path=tmp_path / "here.sqlite3"), space, sample,
                           on_event=here.append).run_to_end()
    session = Session(config, store_path=tmp_path / "there.sqlite3")
    assert trial(session, sample).opened  # the worker opens the judge for a trial first
    handle = start_search_in_worker(session, space, sample, on_event=there.append)
    report = handle.run_to_end()
    assert handle.opened_judge is False  # the search judged with the judge the trial opened
    assert not trial(session, sample).opened  # and left it open
    # The same search, event for event (progress reports are timed, so their number may differ).
    assert [e for e in there if not isinstance(e, (JudgingProgressed, SearchFinished))] == \
        [e for e in here if not isinstance(e, (JudgingProgressed, SearchFinished))]
    assert isinstance(there[-1], SearchFinished) and there[-1].report.winner == report.winner
    assert (report.winner, report.spent, report.model_calls, report.leaderboard) == \
        (expected.winner, expected.spent, expected.model_calls, expected.leaderboard)
    assert [h.tuning for h in report.heldout] == [h.tuning for h in expected.heldout]
    # Every run of the search is in the session's store, written by the worker.
    stored = {r.id for r in list_runs(session)}
    assert {i for ids in report.run_ids.values() for i in ids} <= stored and stored


def test_a_search_in_the_worker_is_cancelled_by_its_job_alone(tmp_path: Path, sample: Dataset) -> None:
    """Cancelling the search stops it (SearchCancelled, what it stored kept); a run beside it goes on."""
    config = judges(delay_s=0.05)
    session = Session(config, store_path=tmp_path / "runs.sqlite3")
    progressed = threading.Event()
    search = start_search_in_worker(session, parse_space(SEARCH_SPACE), sample,
                                    on_event=lambda e: progressed.set() if isinstance(e, JudgingProgressed) else None)
    thread, errors = raised_in_thread(search)
    events = Events(judged=3)
    run = start_run_in_worker(session, plan(sample, config), sample, display=events,
                              options=EngineOptions(resume=False, use_cache=False))
    run_thread, result = run_in_thread(run)
    assert progressed.wait(WAIT_S) and events.enough.wait(WAIT_S)
    search.cancel()
    thread.join(WAIT_S)
    assert not thread.is_alive() and len(errors) == 1 and isinstance(errors[0], SearchCancelled)
    run_thread.join(WAIT_S)
    assert result[0].status is RunStatus.FINISHED  # the run in the same process was not cancelled with it
    statuses = {r.status for r in list_runs(session) if r.id != result[0].run_id}
    assert statuses and statuses <= {RunStatus.CANCELLED, RunStatus.FINISHED}


def test_the_judge_log_is_the_end_of_the_newest_log_whole_lines_only(tmp_path: Path) -> None:
    session = Session(judges(), store_path=tmp_path / "runs.sqlite3")
    assert judge_log(session).path is None and judge_log(session).lines == ()  # no process has run
    folder = judge_log_dir(session)
    folder.mkdir()
    older = folder / "judge-1.log"
    older.write_text("an earlier process\n", encoding="utf-8")
    newest = folder / "judge-2.log"
    newest.write_text("".join(f"line {n:04d}\n" for n in range(1000)), encoding="utf-8")  # 10 bytes a line
    os.utime(older, (1, 1))
    whole = judge_log(session)
    assert whole.path == newest and not whole.cut and len(whole.lines) == 1000
    end = judge_log(session, tail_bytes=95)  # the last 9 lines and half of the one before
    assert end.cut and end.lines == tuple(f"line {n:04d}" for n in range(991, 1000))


def corrections(run_id: int, items: list[str], **settings) -> AlignRequest:
    """An alignment of run ``run_id`` to labels given on ``items`` (1 to 5 in turn) and one note."""
    return AlignRequest(run_id, labels={item: float(1 + n % 5) for n, item in enumerate(items)},
                        labels_source="labels.csv", notes=("Be strict.",), n_boot=100, **settings)


def test_an_alignment_in_the_worker_reports_what_an_in_process_one_does(tmp_path: Path, sample: Dataset) -> None:
    config = judges()
    here_events, there_events = [], []
    here = Session(config, store_path=tmp_path / "here.sqlite3")
    expected = align(here, corrections(*judge_the_sample(here), seed=3, record_folder=tmp_path / "here"),
                     dataset=sample, on_event=here_events.append)
    session = Session(config, store_path=tmp_path / "there.sqlite3")
    request = corrections(*judge_the_sample(session), seed=3, record_folder=tmp_path / "there")
    assert trial(session, sample).opened  # the worker opens the judge for a trial first
    handle = start_align_in_worker(session, request, dataset=sample, on_event=there_events.append)
    report = handle.run_to_end()
    assert handle.opened_judge is False  # the alignment judged with the judge the trial opened
    assert not trial(session, sample).opened  # and left it open
    # The same search, event for event (progress reports are timed, so their number may differ).
    assert [e for e in there_events if not isinstance(e, (JudgingProgressed, SearchFinished))] == \
        [e for e in here_events if not isinstance(e, (JudgingProgressed, SearchFinished))]
    # The same report, number for number, and its record written by the worker where the request said
    # (the record's folder, which the report names, is the one difference).
    assert report.record_path is not None and Path(report.record_path).parent == tmp_path / "there"

    def moved(text: str) -> str:
        return text.replace(str(tmp_path / "here"), str(tmp_path / "there"))

    assert render_align(report, "markdown") == moved(render_align(expected, "markdown"))
    assert Path(report.record_path).read_text(encoding="utf-8") == \
        moved(Path(expected.record_path or "").read_text(encoding="utf-8"))
    assert report.winner_template == expected.winner_template and report.n_labelled == expected.n_labelled == 15
    stored = {r.id for r in list_runs(session)}
    assert {i for ids in report.tuning.run_ids.values() for i in ids} <= stored


def slow_alignment(tmp_path: Path, sample: Dataset) -> tuple[Session, int, list[str], WorkerAlignHandle,
                                                                   threading.Event]:
    """A run judged at full speed, and its alignment in the worker with a judge slow enough to stop mid-way
    (not sent yet); the event is set once a proposed variant's run is under way, with at least half a second
    to go (the starting variant's run is the judged run again: the judge's cache answers it at once)."""
    store_path = tmp_path / "runs.sqlite3"
    run_id, items = judge_the_sample(Session(judges(), store_path=store_path))
    session = Session(judges(delay_s=0.1), store_path=store_path)
    under_way = threading.Event()

    def on_event(event: object) -> None:
        if isinstance(event, JudgingProgressed) and event.variant != START and 0 < event.done <= event.total - 5:
            under_way.set()

    handle = start_align_in_worker(session, corrections(run_id, items), dataset=sample, on_event=on_event)
    return session, run_id, items, handle, under_way




def test_an_alignment_in_the_worker_is_cancelled_or_refused_as_in_process(tmp_path: Path, sample: Dataset) -> None:
    """Cancel stops it (SearchCancelled, what it stored kept); a request open_align refuses is refused with the
    same ConfigError, raised here, and the worker goes on."""
    session, run_id, items, handle, under_way = slow_alignment(tmp_path, sample)
    thread, errors = raised_in_thread(handle)
    assert under_way.wait(WAIT_S)
    handle.cancel()
    thread.join(WAIT_S)
    assert not thread.is_alive() and len(errors) == 1 and isinstance(errors[0], SearchCancelled)
    statuses = {r.status for r in list_runs(session) if r.id != run_id}
    assert RunStatus.CANCELLED in statuses and statuses <= {RunStatus.CANCELLED, RunStatus.FINISHED}
    worker = judge_worker(session).pid
    refused = start_align_in_worker(session, corrections(run_id, items[:9]), dataset=sample)
    with pytest.raises(ConfigError, match=f"labels.csv: 9 corrections on items of run {run_id}; align needs at least"):
        refused.run_to_end()
    assert worker is not None and judge_worker(session).pid == worker


def test_an_alignment_whose_worker_is_killed_says_so_and_interrupts_its_run(tmp_path: Path, sample: Dataset) -> None:
    session, run_id, _items, handle, under_way = slow_alignment(tmp_path, sample)
    thread, errors = raised_in_thread(handle)
    assert under_way.wait(WAIT_S) and handle.pid is not None and handle.pid != os.getpid()
    os.kill(handle.pid, signal.SIGKILL)
    thread.join(WAIT_S)
    assert not thread.is_alive() and len(errors) == 1 and isinstance(errors[0], JudgeProcessDied)
    assert "ended with signal 9 (SIGKILL) during the alignment" in str(errors[0])
    assert "aligning again reuses it" in str(errors[0])
    statuses = {r.status for r in list_runs(session) if r.id != run_id}
    assert RunStatus.INTERRUPTED in statuses and RunStatus.RUNNING not in statuses
