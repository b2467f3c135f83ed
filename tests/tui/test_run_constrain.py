"""The Run screen's Answers field: constrained generate runs from the app."""

from __future__ import annotations

from dataclasses import dataclass, field

from textual.widgets import Select, SelectionList, Static
from tui_helpers import SIZE, settle, static_text, toast_texts

from dialjudge.core.config import BUNDLED_JUDGE
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.constraint import AnswerConstraint
from dialjudge.core.judges.types import JudgeRequest
from dialjudge.core.planning import default_scoring, preferred_mode
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.run import RunScreen


@dataclass
class ConstrainingFake(FakeBackend):
    """The fake judge, able to constrain (it answers "Score: N" anyway); keeps what it was asked."""

    asked: list[JudgeRequest] = field(default_factory=list)
    checked: list[JudgeRequest] = field(default_factory=list)

    async def check_constraint(self, request: JudgeRequest) -> None:
        self.checked.append(request)

    async def complete(self, request: JudgeRequest):  # type: ignore[no-untyped-def]
        self.asked.append(request)
        return await super().complete(request)


async def open_run_screen(pilot) -> RunScreen:
    await settle(pilot)
    await pilot.press("j")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, RunScreen)
    judges = screen.query_one("#run-judges", SelectionList)
    judges.deselect_all()
    judges.select("fake")
    screen.query_one("#run-target", Select).value = "coherence"
    await pilot.pause()
    return screen


async def test_a_constrained_run_needs_generate_mode_and_reaches_the_judge(services_factory):
    backends: list[ConstrainingFake] = []

    def make_backend(config):
        backends.append(ConstrainingFake(name=config.name))
        return backends[-1]

    services = services_factory(make_backend=make_backend)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run_screen(pilot)
        assert screen.query_one("#run-constrain", Select).value == "off"
        screen.query_one("#run-mode", Select).value = "logprob"
        screen.query_one("#run-constrain", Select).value = "answer"
        await pilot.pause()
        plan = static_text(screen.query_one("#run-plan", Static))
        assert "Not ready: constrained answers need the generate mode." in plan

        screen.query_one("#run-mode", Select).value = "generate"
        await pilot.pause()
        plan = static_text(screen.query_one("#run-plan", Static))
        assert "likert-1to5 · generate (constrained) · aspect coherence" in plan
        await pilot.press("ctrl+r")
        await settle(pilot)
        state = app.runs.state
        assert state is not None and state.status == "finished" and state.done == 60
        with services.session.store() as store:
            assert store.runs.get_run(state.run_id).run_config.constrain is AnswerConstraint.ANSWER
        (backend,) = backends
        assert len(backend.checked) == 1 and len(backend.asked) == 60
        assert {r.constrain for r in backend.asked} == {AnswerConstraint.ANSWER}


async def test_a_judge_that_cannot_constrain_is_named_before_anything_runs(services, worker_failures):
    app = make_app(services=services)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_run_screen(pilot)
        screen.query_one("#run-mode", Select).value = "generate"
        screen.query_one("#run-constrain", Select).value = "reasoning"
        await pilot.pause()
        assert "generate (reasoning, then constrained)" in static_text(screen.query_one("#run-plan", Static))
        await pilot.press("ctrl+r")
        await settle(pilot)
        toasts = toast_texts(app)
        assert any("judge 'fake': its backend cannot constrain answers" in text for text in toasts), toasts
        worker_failures.expect("cannot constrain answers")
        with services.session.store() as store:
            assert store.runs.list_runs() == []


async def test_the_form_shows_the_ticked_judges_way_of_scoring_the_template(services_factory):
    services = services_factory()
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_run_screen(pilot)  # the fake judge ticked: the template's preferred mode
        mode, constrain = screen.query_one("#run-mode", Select), screen.query_one("#run-constrain", Select)
        template = screen._template
        assert template is not None and template.name == "likert-1to5"
        assert (mode.value, constrain.value) == (preferred_mode(template.output.modes).value, "off")
        judges = screen.query_one("#run-judges", SelectionList)
        judges.deselect_all()
        judges.select(BUNDLED_JUDGE)
        await pilot.pause()
        bundled = default_scoring(template, [services.config.judge(BUNDLED_JUDGE)])
        assert bundled.constrain is AnswerConstraint.ANSWER  # as a run with no mode named would score
        assert (mode.value, constrain.value) == (bundled.mode.value, bundled.constrain.value)
        plan = static_text(screen.query_one("#run-plan", Static))
        assert "likert-1to5 · generate (constrained)" in plan
        mode.value = "logprob"  # the user's mode: the default constraint goes with the default mode
        await pilot.pause()
        assert constrain.value == "off"
        judges.select("fake")  # the user chose: ticking judges no longer changes the fields
        await pilot.pause()
        assert (mode.value, constrain.value) == ("logprob", "off")
