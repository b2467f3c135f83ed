"""Templates have identity in the app: an edited shipped template is saved under a new name unless the user
explicitly overrides it (marked in every picker, revertible); a template that hides the reply is refused;
a stale preview or trial says so."""

from __future__ import annotations

from textual.widgets import Select, Static
from tui_helpers import SIZE, settle, static_text

from dialjudge.core.judges.prompts.templates import shipped_template_dir, user_template_dir
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.prompt_lab import PREVIEW_DELAY_S, PromptLabScreen
from dialjudge.tui.screens.run import RunScreen
from dialjudge.tui.screens.save_template_dialog import SaveTemplateDialog

SHIPPED = "likert-1to5"
OLD, NEW = "Rate the response for {aspect}", "Weigh the reply for {aspect}"


async def open_lab(pilot) -> PromptLabScreen:
    await settle(pilot)
    await pilot.press("l")
    await settle(pilot)
    screen = pilot.app.screen
    assert isinstance(screen, PromptLabScreen)
    return screen


async def edit(pilot, screen: PromptLabScreen, old: str, new: str) -> None:
    text = screen.editor.text
    assert old in text
    screen.editor.load_text(text.replace(old, new))
    screen.refresh_preview()
    await pilot.pause(PREVIEW_DELAY_S + 0.1)
    await settle(pilot)


def shipped_text() -> str:
    return (shipped_template_dir() / f"{SHIPPED}.toml").read_text(encoding="utf-8")


async def test_saving_an_edited_shipped_template_asks_for_a_new_name_by_default(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        await edit(pilot, screen, OLD, NEW)
        await pilot.press("ctrl+s")
        await settle(pilot)
        dialog = app.screen
        assert isinstance(dialog, SaveTemplateDialog) and dialog.suggested == f"{SHIPPED}-edit"
        await pilot.press("enter")  # save as new, the default
        await settle(pilot)
        saved = user_template_dir() / f"{SHIPPED}-edit.toml"
        assert saved.is_file() and 'name = "likert-1to5-edit"' in saved.read_text(encoding="utf-8")
        assert NEW in saved.read_text(encoding="utf-8")
        assert not (user_template_dir() / f"{SHIPPED}.toml").exists()  # the shipped one is untouched
        choices = app.runs.judge_choices
        assert choices.templates[SHIPPED].text == shipped_text() and not choices.overridden
        assert screen.query_one("#lab-template", Select).value == f"{SHIPPED}-edit"
        assert screen.editor.text == saved.read_text(encoding="utf-8")
        assert "edited" not in static_text(screen.query_one("#lab-editor-title"))


async def test_overriding_is_explicit_marked_in_every_picker_and_revertible(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        await edit(pilot, screen, OLD, NEW)
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert isinstance(app.screen, SaveTemplateDialog)
        await pilot.press("ctrl+o")
        await settle(pilot)
        override = user_template_dir() / f"{SHIPPED}.toml"
        assert NEW in override.read_text(encoding="utf-8")
        choices = app.runs.judge_choices
        assert choices.overridden == {SHIPPED} and choices.label(SHIPPED) == f"{SHIPPED} (your override)"
        lab_select = screen.query_one("#lab-template", Select)
        assert (f"{SHIPPED} (your override)", SHIPPED) in lab_select._options

        await pilot.press("j")
        await settle(pilot)
        run_screen = app.screen
        assert isinstance(run_screen, RunScreen)
        assert (f"{SHIPPED} (your override)", SHIPPED) in run_screen.query_one("#run-template", Select)._options
        run_screen.query_one("#run-template", Select).value = SHIPPED
        await pilot.pause()
        assert "your override of the shipped template" in static_text(run_screen.query_one("#run-template-info"))

        await pilot.press("l")
        await settle(pilot)
        await pilot.press("f4")
        await settle(pilot)
        assert not override.exists() and (user_template_dir() / f"{SHIPPED}.toml.overridden").is_file()
        choices = app.runs.judge_choices
        assert not choices.overridden and choices.templates[SHIPPED].text == shipped_text()
        assert screen.editor.text == shipped_text()


async def test_a_template_that_hides_the_reply_is_refused_and_the_preview_is_marked_stale(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        await edit(pilot, screen, 'name = "likert-1to5"', 'name = "blind"')
        await edit(pilot, screen, "{response}", "(the reply is not shown)")
        error = static_text(screen.query_one("#lab-error", Static))
        assert "no message shows the reply being judged: use {response}" in error
        assert "stale" in static_text(screen.query_one("#lab-preview-title"))
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not (user_template_dir() / "blind.toml").exists()


async def test_a_trial_is_marked_stale_once_the_item_or_template_changes(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_lab(pilot)
        screen.query_one("#lab-judge", Select).value = "fake"
        await pilot.pause()
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert static_text(screen.query_one("#lab-trial-title")).strip() == "Trial"
        await pilot.press("ctrl+n")
        await settle(pilot)
        assert "stale" in static_text(screen.query_one("#lab-trial-title"))
        await pilot.press("ctrl+t")
        await settle(pilot)
        assert "stale" not in static_text(screen.query_one("#lab-trial-title"))
        await edit(pilot, screen, OLD, NEW)
        assert "stale" in static_text(screen.query_one("#lab-trial-title"))
