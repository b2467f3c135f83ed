"""A local judge leaves the cores other work of the session takes: the compute process says when it computes,
and the judge process tells its local judges (tests/judges/test_llama_threads.py: llama.cpp then computes
with the rest from its next evaluation)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from dialjudge.core.api import Session
from dialjudge.core.api import compute_worker as compute_module
from dialjudge.core.api.compute_worker import close_compute_worker, describe_in_worker
from dialjudge.core.api.prompt_lab import PromptSetup, prepare_prompt, trial_request
from dialjudge.core.api.run_worker import (
    _CoresTaken,
    _Server,
    ask_in_worker,
    close_judge_worker,
    judge_log,
    judge_worker,
)
from dialjudge.core.config import Config, bundled_judge, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.prompts.templates import shipped_template_dir
from dialjudge.core.model import Dataset


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", Config())


# -- the judge process ------------------------------------------------------------------------------------------


class SharingJudge:
    """A judge that records what it was told about the cores."""

    name = "recorder"

    def __init__(self) -> None:
        self.told: list[int] = []

    def share_cores(self, taken: int) -> None:
        self.told.append(taken)


def test_the_judge_process_tells_its_open_judges_and_the_ones_it_opens_later(tmp_path: Path):
    config = parse_config({"judges": {"fake": {"backend": "fake"}}})
    server = _Server(None, config, tmp_path / "runs.sqlite3")  # type: ignore[arg-type]  # no pipe is read here
    opened = SharingJudge()
    server._backends["open"] = opened  # type: ignore[assignment]
    server._start(0, _CoresTaken(1))
    assert opened.told == [1]
    later = SharingJudge()
    server._session = server._session.with_backend_factory(lambda judge: later)
    backend, new = server._backend(config.judges["fake"])
    assert new and backend is later and later.told == [1]
    server._start(0, _CoresTaken(0))
    assert opened.told == [1, 0] and later.told == [1, 0]


# -- the compute process ----------------------------------------------------------------------------------------


def test_a_computation_takes_a_core_from_the_judges_while_it_runs(tmp_path: Path, sample: Dataset, monkeypatch):
    told: list[int] = []
    monkeypatch.setattr(compute_module, "share_cores_with_judges", lambda session, taken: told.append(taken))
    session = Session(Config(), store_path=tmp_path / "runs.sqlite3")
    try:
        describe_in_worker(session, sample)
        assert told == [1, 0]
        # Two at once take one core between them (the process computes one at a time on the interpreter).
        threads = [threading.Thread(target=describe_in_worker, args=(session, sample)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert told[2:] in ([1, 0], [1, 0, 1, 0])
        assert told[-1] == 0
    finally:
        close_compute_worker(session)


def test_the_bundled_judge_in_its_process_is_told_and_says_so_in_its_log(tmp_path: Path, sample: Dataset):
    judge = bundled_judge()
    session = Session(Config(judges={judge.name: judge}), store_path=tmp_path / "runs.sqlite3")
    example = sample.examples[0]
    text = (shipped_template_dir() / "likert-1to5.toml").read_text(encoding="utf-8")
    prepared = prepare_prompt(PromptSetup(text, sample, example, aspect="overall"))
    request = trial_request(prepared, example.id, judge)
    try:
        first = ask_in_worker(session, judge, request)  # opens the model in the judge process
        judge_worker(session).share_cores(1)
        second = ask_in_worker(session, judge, request)  # the pipe is in order: the note came before this
        judge_worker(session).share_cores(0)
        ask_in_worker(session, judge, request)
        log = "\n".join(judge_log(session).lines)
    finally:
        close_judge_worker(session)
    assert f"other work takes 1 core: {judge.name} computes with the rest" in log
    assert f"other work takes 0 cores: {judge.name} computes with the rest" in log
    assert first.result.choice_probs == pytest.approx(second.result.choice_probs, abs=1e-4)


def test_asking_without_a_judge_process_starts_none(tmp_path: Path):
    from dialjudge.core.api.run_worker import share_cores_with_judges

    session = Session(Config(), store_path=tmp_path / "runs.sqlite3")
    share_cores_with_judges(session, 1)
    assert judge_worker(session).pid is None
    close_judge_worker(session)
