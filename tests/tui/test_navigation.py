"""Keys, help, command palette, the Plots screen and the item view over the Scores screen."""

from __future__ import annotations

from textual.widgets import Static
from tui_helpers import SIZE, settle, static_text

from dialjudge.core.subsets import Subset
from dialjudge.tui.app import make_app
from dialjudge.tui.commands import DialjudgeCommands
from dialjudge.tui.keys import key_display, key_sections
from dialjudge.tui.navigation import DESTINATIONS
from dialjudge.tui.screens.help import HelpScreen
from dialjudge.tui.screens.item import ItemScreen
from dialjudge.tui.screens.plots import PlotsScreen
from dialjudge.tui.widgets.item_view import ItemView


async def test_every_key_has_a_description_and_is_in_the_help(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        sections = key_sections(app)
        assert {s.title for s in sections} >= {f"{d.title} screen" for d in DESTINATIONS} | {"Everywhere"}
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = static_text(app.screen.query_one("#help-keys", Static))
        for section in sections:
            for binding in section.bindings:
                assert binding.description, f"{section.title}: key {binding.key} has no description"
                assert binding.description in text and key_display(app, binding) in text
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_palette_lists_screens_and_hidden_keys(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        provider = DialjudgeCommands(app.screen)
        titles = {c.title for c in provider.commands()}
        assert {f"Go to {d.title}" for d in DESTINATIONS} <= titles
        # Keys the footer leaves out are reachable by name.
        for section in key_sections(app)[:2]:  # the app's and the Scores screen's
            for binding in section.bindings:
                # Leaving a text field only means something inside one (the palette takes the focus).
                if not binding.show and "cancel" not in binding.action and binding.action not in (
                        "app.command_palette", "leave_field"):
                    assert binding.description in titles or binding.action.startswith(("app.focus", "screen.")), binding
        assert "Cancel run" not in titles  # no run to cancel

        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"go to plots")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        assert isinstance(app.screen, PlotsScreen)


async def test_plots_follow_the_evaluator_and_the_subset(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, PlotsScreen)
        ws = app.workspace

        def expected(name: str, subset: str) -> tuple[float, ...]:
            scores = ws.scores_of(name)
            return tuple(scores[ex.id] for ex in Subset(subset).select(ws.dataset.examples) if ex.id in scores)

        assert screen.plotted.evaluator == "BLEU-1"
        assert screen.plotted.scores == expected("BLEU-1", "all")
        await pilot.press("e")
        await pilot.pause()
        assert screen.plotted.evaluator == "BLEU-4"
        await pilot.press("right_square_bracket")  # subset: open
        await settle(pilot)
        assert screen.plotted.scores == expected("BLEU-4", "open")
        humans = [ws.human_label(ex) for ex in Subset("open").select(ws.dataset.examples)
                  if ex.id in ws.scores_of("BLEU-4")]
        assert [human for human, _ in screen.plotted.pairs] == humans


async def test_enter_on_a_score_row_opens_the_item(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        table = app.screen.table
        table.focus()
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert isinstance(app.screen, ItemScreen)
        view = app.screen.query_one(ItemView)
        assert view.example.id == table.cursor_key == "sample-c01-s2s"
        assert set(view.metric_scores) == {"BLEU-1", "BLEU-4", "ROUGE-L", "chrF++"}
        await pilot.press("escape")
        assert not isinstance(app.screen, ItemScreen)
