"""The Prompt lab: a live preview that follows edits, inline template errors, trials, saving."""

from __future__ import annotations

import pytest
from textual.widgets import Input, Select, Static
from tui_helpers import SIZE, settle, static_text, toast_texts

from dialjudge.core.config import JudgeConfig
from dialjudge.core.errors import TemplateError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.personas import Persona, user_persona_dir
from dialjudge.core.judges.prompts.render import render_prompt
from dialjudge.core.judges.prompts.templates import (
    get_template,
    parse_template,
    shipped_template_dir,
    user_template_dir,
)
from dialjudge.core.judges.run.scoring import score_result
from dialjudge.core.judges.types import JudgeRequest, ScoringMode
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.dialogs import PersonaEditor
from dialjudge.tui.screens.prompt_lab import PREVIEW_DELAY_S, PromptLabScreen
from dialjudge.tui.screens.run import RunScreen
from dialjudge.tui.widgets.judgment_view import JudgmentView
from dialjudge.tui.widgets.prompt_preview import PromptPreview


async def open_lab(pilot) -> PromptLabScreen:
    await settle(pilot)
    await pilot.press("l")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, PromptLabScreen)
    return screen


def preview_text(screen: PromptLabScreen) -> str:
    return static_text(screen.query_one(PromptPreview).query_one("#prompt-body", Static))


def error_text(screen: PromptLabScreen) -> str:
    return static_text(screen.query_one("#lab-error", Static))


async def wait_for_preview(pilot) -> None:
    """Past the typing pause, then until the render worker has answered."""
    await pilot.pause(PREVIEW_DELAY_S + 0.1)
    await settle(pilot)


async def test_the_preview_is_the_exact_prompt_and_follows_edits(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        dataset = app.workspace.dataset
        example = dataset.examples[0]
        expected = render_prompt(get_template("likert-1to5"), example, aspect="overall", quality="overall")
        text = preview_text(screen)
        for message in expected.messages:
            for line in message.content.splitlines()[:3]:
                assert line.split()[0] in text
        assert f"likert-1to5 on {example.id}" in text

        editor = screen.editor
        start, end = _find(editor.text, "Rate the response for {aspect}")
        editor.replace("Weigh the reply for {aspect}", start, end)
        await pilot.pause()
        assert "Weigh the reply" not in preview_text(screen)  # not before the typing pause
        assert "edited, not saved" in static_text(screen.query_one("#lab-editor-title"))
        await wait_for_preview(pilot)
        assert "Weigh the reply for overall" in preview_text(screen)

        await pilot.press("ctrl+n")
        await settle(pilot)
        assert screen.example.id == dataset.examples[1].id
        assert f"likert-1to5 on {dataset.examples[1].id}" in preview_text(screen)


async def test_a_broken_edit_shows_the_error_with_its_position(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        editor = screen.editor
        start, end = _find(editor.text, "{aspect_definition}")
        editor.replace("{aspect_defnition}", start, end)
        await wait_for_preview(pilot)
        with pytest.raises(TemplateError) as caught:
            parse_template(editor.text, "prompt lab")
        error = caught.value
        assert error.line == start[0] + 1 and error.column is not None
        shown = error_text(screen)
        assert f"line {error.line}, column {error.column}" in shown
        assert "aspect_defnition" in shown
        assert screen.query_one(PromptPreview).has_class("stale")

        editor.replace("{aspect_definition}", start, (start[0], start[1] + len("{aspect_defnition}")))
        await wait_for_preview(pilot)
        assert error_text(screen).strip() == ""
        assert not screen.query_one(PromptPreview).has_class("stale")


async def test_trying_a_judge_shows_raw_output_score_and_distribution(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        screen.query_one("#lab-judge", Select).value = "fake"
        screen.query_one("#lab-mode", Select).value = "logprob"
        await settle(pilot)
        await pilot.press("ctrl+t")
        await settle(pilot)
        example = app.workspace.dataset.examples[0]
        prompt = render_prompt(get_template("likert-1to5"), example, aspect="overall", quality="overall")
        request = JudgeRequest(example.id, prompt, ScoringMode.LOGPROB, JudgeConfig("fake", "fake").sampling)
        backend = FakeBackend.from_config(JudgeConfig(name="fake", backend="fake", model="fake-judge"))
        expected = score_result(request, await backend.complete(request), "fake")
        shown = static_text(screen.query_one(JudgmentView).query_one("#judgment-body", Static))
        assert f"score {expected.score:.3f}" in shown
        assert "answer probabilities" in shown
        for p in expected.distribution.values():
            assert f"{p:.3f}" in shown
        assert "raw output" in shown and expected.raw_output in shown


async def test_a_failing_judge_says_why(services_factory, worker_failures):
    def broken(config):
        return FakeBackend(name=config.name, fail_every=1)

    app = make_app(services=services_factory(make_backend=broken))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_lab(pilot)
        screen.query_one("#lab-judge", Select).value = "fake"
        await pilot.press("ctrl+t")
        await settle(pilot)
        shown = static_text(screen.query_one(JudgmentView).query_one("#judgment-body", Static))
        assert "fake failed" in shown and "injected failure" in shown
        assert any("injected failure" in text for text in toast_texts(app))
        worker_failures.expect("injected failure")


async def test_saving_writes_the_user_folder_never_the_shipped_file(services):
    shipped = (shipped_template_dir() / "likert-1to5.toml").read_text(encoding="utf-8")
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        editor = screen.editor
        start, end = _find(editor.text, 'name = "likert-1to5"')
        editor.replace('name = "likert-mine"', start, end)
        await wait_for_preview(pilot)
        await pilot.press("ctrl+s")
        await settle(pilot)
        saved = user_template_dir() / "likert-mine.toml"
        assert saved.read_text(encoding="utf-8") == editor.text
        assert (shipped_template_dir() / "likert-1to5.toml").read_text(encoding="utf-8") == shipped
        assert "likert-mine" in app.runs.judge_choices.templates
        assert screen.query_one("#lab-template", Select).value == "likert-mine"
        assert "edited" not in static_text(screen.query_one("#lab-editor-title"))

        await pilot.press("j")
        await settle(pilot)
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen)
        run_screen.query_one("#run-template", Select).value = "likert-mine"  # offered for runs at once


async def test_a_new_persona_is_saved_and_used_in_the_prompt(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        await pilot.press("f3")
        await pilot.pause()
        editor = app.screen
        assert isinstance(editor, PersonaEditor)
        editor.query_one("#persona-name", Input).value = "grumpy-teacher"
        editor.query_one("#persona-description", Input).value = "Marks everything down."
        editor.query_one("#persona-text").load_text("Act like a grumpy teacher who dislikes small talk.")
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, PromptLabScreen)
        saved = user_persona_dir() / "grumpy-teacher.toml"
        assert "grumpy teacher" in saved.read_text(encoding="utf-8")
        assert app.runs.judge_choices.personas["grumpy-teacher"] == Persona(
            "grumpy-teacher", "Marks everything down.", "Act like a grumpy teacher who dislikes small talk.")
        assert screen.query_one("#lab-persona", Select).value == "grumpy-teacher"
        await settle(pilot)
        assert "Act like a grumpy teacher who dislikes small talk." in preview_text(screen)


def _find(text: str, needle: str) -> tuple[tuple[int, int], tuple[int, int]]:
    """The TextArea location (row, column) of ``needle`` in ``text``, start and end."""
    for row, line in enumerate(text.split("\n")):
        column = line.find(needle)
        if column >= 0:
            return (row, column), (row, column + len(needle))
    raise AssertionError(f"{needle!r} is not in the template")
