"""The Prompt lab asks the bundled judge about an item exactly as a run does (issue 32: one decision per
concept): the same least valid mass (the judge's threshold), mode, constraint, top-K and prompt. The judge's
model is replaced by the fake backend (recording what it is asked) in both places; the settings are the
bundled judge's own (core/config.py: bundled_judge)."""

from __future__ import annotations

from textual.widgets import Select, SelectionList
from tui_helpers import SIZE, make_services, settle

from dialjudge.core.config import BUNDLED_JUDGE, BUNDLED_MIN_VALID_MASS
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.types import JudgeRequest
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.prompt_lab import PromptLabScreen
from dialjudge.tui.screens.run import RunScreen


class RecordingJudge(FakeBackend):
    """The fake judge in the bundled judge's place, able to hold answers to a format as the GGUF is."""

    async def check_constraint(self, request: JudgeRequest) -> None:
        return None


async def test_the_labs_threshold_and_settings_are_the_runs_for_the_bundled_judge(tmp_path) -> None:
    asked: dict[str, list[JudgeRequest]] = {"lab": [], "run": []}
    made: list[RecordingJudge] = []

    def recording(config):
        judge = RecordingJudge(name=config.name)
        made.append(judge)
        return judge

    services = make_services(tmp_path, make_backend=recording)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        lab = app.screen
        assert isinstance(lab, PromptLabScreen)
        lab.query_one("#lab-template", Select).value = "likert-1to5"
        lab.query_one("#lab-judge", Select).value = BUNDLED_JUDGE
        await settle(pilot)
        item = lab.example.id
        await pilot.press("ctrl+t")
        await settle(pilot)
        asked["lab"] = [r for judge in made for r in judge.requests]
        made.clear()

        await pilot.press("j")
        await settle(pilot)
        run = app.screen
        assert isinstance(run, RunScreen)
        run.query_one("#run-template", Select).value = "likert-1to5"
        judges = run.query_one("#run-judges", SelectionList)
        judges.deselect_all()
        judges.select(BUNDLED_JUDGE)
        await settle(pilot)
        run.query_one("#run-target", Select).value = lab.query_one("#lab-target", Select).value
        await settle(pilot)
        await pilot.press("ctrl+r")
        await settle(pilot)
        assert app.runs.state is not None and app.runs.state.status == "finished"
        asked["run"] = [r for judge in made for r in judge.requests if r.item_id == item]

    (trial,) = asked["lab"]
    (same_item,) = asked["run"]
    assert trial.item_id == item
    assert trial.min_valid_mass == same_item.min_valid_mass == BUNDLED_MIN_VALID_MASS
    assert (trial.mode, trial.constrain, trial.top_k) == (same_item.mode, same_item.constrain, same_item.top_k)
    assert trial.prompt.hash == same_item.prompt.hash and trial.sampling == same_item.sampling
