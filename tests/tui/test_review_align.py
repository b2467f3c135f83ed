"""Review's align key (g): the run's judge aligned to the own ratings and notes given in Review, and the report
(winner, held-out verdict with its CI, overfitting gap) shown with the numbers the command line prints."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import signal
import threading

from textual.widgets import Static
from tui_helpers import FAKE_JUDGE, SIZE, make_services, settle, static_text, toast_texts, wait_until

from dialjudge.core.api import list_runs, save_review
from dialjudge.core.api.align import AlignRequest, open_align
from dialjudge.core.api.runs import execute_run
from dialjudge.core.api.types import RunStatus
from dialjudge.core.config import Config, JudgeConfig
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.model import Aggregation
from dialjudge.core.stats.human import human_labels
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.align_dialog import AlignResultDialog, report_text
from dialjudge.tui.screens.review import ReviewScreen


async def test_g_aligns_the_judge_to_the_reviews_and_shows_the_heldout_verdict(tmp_path):
    sample = open_dataset("sample", remember=False)
    labels = {k: float(v) for k, v in human_labels(sample.examples, "overall", Aggregation.MEAN).values.items()}
    responses = {ex.id: ex.candidate or "" for ex in sample.examples}

    def make(config: JudgeConfig) -> FakeBackend:
        return FakeBackend(name=config.name, agreement=0.4, correction_gain=0.3, labels=labels, responses=responses,
                           label_scale=(1.0, 5.0))

    services = make_services(tmp_path, make_backend=make)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        config = RunConfig.build(app.workspace.dataset, get_template("likert-1to5"),
                                 [JudgeConfig(name="fake", backend="fake")], aspect="overall", quality="overall",
                                 mode=ScoringMode.LOGPROB)
        app.runs.start(config)
        await settle(pilot)
        run_id = app.runs.state.run_id
        corrected = sorted({ex.group_id for ex in sample.examples})[:4]  # 20 items in 4 of the 12 contexts
        for ex in sample.examples:
            if ex.group_id in corrected:
                save_review(services.session, run_id, ex.id, "judge-wrong", own_rating=float(round(labels[ex.id])),
                            note="Off-topic replies are poor however fluent." if ex.id.endswith("-hum") else "")
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        await pilot.press("g")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, AlignResultDialog)
        shown = " ".join(static_text(dialog.query_one("#align-text", Static), width=300).split())
        assert "Verdict:" in shown and "95% CI [" in shown and "overfitting gap" in shown
        assert "the 8 contexts no correction touched" in shown
        assert dialog.report.corrections.notes == ("Off-topic replies are poor however fluent.",)  # once
        assert "notes" in {v.name for v in dialog.report.tuning.variants}
        # The command line's use case, on the same store: the same report, line for line.
        again = await open_align(services.session, AlignRequest(run_id), dataset=app.workspace.dataset).run()
        assert report_text(again) == report_text(dialog.report)
        await pilot.press("escape")
        assert isinstance(app.screen, ReviewScreen)


async def test_esc_cancels_an_alignment_and_a_second_g_reuses_what_was_judged(tmp_path):
    sample = open_dataset("sample", remember=False)
    labels = {k: float(v) for k, v in human_labels(sample.examples, "overall", Aggregation.MEAN).values.items()}
    responses = {ex.id: ex.candidate or "" for ex in sample.examples}
    held = threading.Event()  # set: the judge's answers wait until the test lets them go
    released = threading.Event()
    answered: list[str] = []

    async def gate(request) -> None:
        if held.is_set():
            await asyncio.to_thread(released.wait, 30)
        answered.append(request.item_id)

    def make(config: JudgeConfig) -> FakeBackend:
        return FakeBackend(name=config.name, agreement=0.4, correction_gain=0.3, labels=labels, responses=responses,
                           label_scale=(1.0, 5.0), delay=gate)

    services = make_services(tmp_path, make_backend=make)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        config = RunConfig.build(app.workspace.dataset, get_template("likert-1to5"),
                                 [JudgeConfig(name="fake", backend="fake")], aspect="overall", quality="overall",
                                 mode=ScoringMode.LOGPROB)
        app.runs.start(config)
        await settle(pilot)
        run_id = app.runs.state.run_id
        for ex in sample.examples:
            if ex.group_id in sorted({e.group_id for e in sample.examples})[:4]:
                save_review(services.session, run_id, ex.id, "judge-wrong", own_rating=float(round(labels[ex.id])))
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen)
        held.set()
        await pilot.press("g")
        await wait_until(pilot, lambda: app.review.aligning, "the alignment started")
        await pilot.press("escape")  # Esc on Review while aligning: cancel it (the binding shows only then)
        released.set()
        await settle(pilot)
        assert not app.review.aligning
        assert isinstance(app.screen, ReviewScreen)  # no report: the search stopped
        assert any("cancelled" in n.message for n in app._notifications)
        # A second g finishes the alignment and reuses the judgments the cancelled one stored.
        held.clear()
        await pilot.press("g")
        await settle(pilot)
        assert isinstance(app.screen, AlignResultDialog)
        complete = await open_align(services.session, AlignRequest(run_id), dataset=app.workspace.dataset).run()
        assert report_text(complete) == report_text(app.screen.report)


async def test_g_aligns_in_the_judge_process_and_a_killed_process_leaves_the_app_up(tmp_path, services_factory,
                                                                                    worker_failures):
    """With the judges the user's configuration makes, g aligns in the session's judge process, not the app's:
    killing that process leaves the app up and saying so, and g again finishes the alignment, reusing what was
    stored, with the report the command line's use case gives on the same store."""
    slow = dataclasses.replace(FAKE_JUDGE, concurrency=1, extra={"delay_s": 0.05})  # to stop the alignment mid-way
    services = services_factory().with_config(Config(judges={"fake": slow}))
    sample = open_dataset("sample", remember=False)
    config = RunConfig.build(sample, get_template("likert-1to5"), [slow], aspect="overall", quality="overall",
                             mode=ScoringMode.LOGPROB)

    def judge_at_full_speed() -> int:  # the run to align, judged here (on a thread: it runs its own loop)
        with services.session.store() as store:
            return execute_run(config, sample, store, {"fake": FakeBackend(name="fake")}).run_id

    run_id = await asyncio.to_thread(judge_at_full_speed)
    labels = {k: float(v) for k, v in human_labels(sample.examples, "overall", Aggregation.MEAN).values.items()}
    for ex in sample.examples:
        if ex.group_id in sorted({e.group_id for e in sample.examples})[:4]:
            save_review(services.session, run_id, ex.id, "judge-wrong", own_rating=float(round(labels[ex.id])))
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        assert isinstance(app.screen, ReviewScreen) and app.screen.run_id == run_id
        await pilot.press("g")
        await wait_until(pilot, lambda: app.review.align_process_id is not None and stored(services, run_id) >= 3,
                         "the judge process stored judgments of the alignment")
        pid = app.review.align_process_id
        assert pid is not None and pid != os.getpid()
        os.kill(pid, signal.SIGKILL)
        await wait_until(pilot, lambda: not app.review.aligning, "the app saw the process end")
        await settle(pilot)
        assert app.is_running and isinstance(app.screen, ReviewScreen)
        worker_failures.expect("the judge process ended with signal 9 (SIGKILL) during the alignment")
        assert any("signal 9" in text for text in toast_texts(app))
        assert not any(r.status is RunStatus.RUNNING for r in list_runs(services.session))

        await pilot.press("g")  # a new judge process, resuming what the killed one stored
        await wait_until(pilot, lambda: isinstance(app.screen, AlignResultDialog), "the alignment reports")
        complete = await open_align(services.session, AlignRequest(run_id), dataset=app.workspace.dataset).run()
        assert report_text(complete) == report_text(app.screen.report)


def stored(services, run_id: int) -> int:
    """Judgments in the store beyond run ``run_id``'s (those of the variants aligning it)."""
    return sum(record.judgments for record in list_runs(services.session) if record.id != run_id)
