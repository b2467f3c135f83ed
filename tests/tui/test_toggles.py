"""Toggles show their state in the glyph ("[x]" / "[ ]"), readable without colour."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.widgets import SelectionList
from tui_helpers import SIZE, settle

from dialjudge.tui.app import make_app
from dialjudge.tui.widgets.toggles import StateCheckbox, StateSelectionList


class ToggleApp(App[None]):
    def compose(self) -> ComposeResult:
        yield StateCheckbox("strict", False, id="box")
        yield StateSelectionList[str](("one", "one", True), ("two", "two", False), id="list")


async def test_a_check_box_reads_x_when_on_and_blank_when_off():
    app = ToggleApp()
    async with app.run_test() as pilot:
        box = app.query_one("#box", StateCheckbox)
        assert box.render().plain.startswith("[ ]")
        box.value = True
        await pilot.pause()
        assert box.render().plain.startswith("[x]")


async def test_a_selection_list_reads_its_state_and_follows_a_toggle():
    app = ToggleApp()
    async with app.run_test() as pilot:
        selections = app.query_one("#list", StateSelectionList)
        assert selections.render_line(0).text.startswith("[x] one")
        assert selections.render_line(1).text.startswith("[ ] two")
        selections.toggle("one")
        await pilot.pause()
        assert selections.render_line(0).text.startswith("[ ] one")


async def test_the_run_screens_judges_and_personas_show_their_state(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        judges = app.screen.query_one("#run-judges", SelectionList)
        personas = app.screen.query_one("#run-personas", SelectionList)
        assert isinstance(judges, StateSelectionList) and isinstance(personas, StateSelectionList)
        lines = [judges.render_line(i).text for i in range(judges.option_count)]
        marks = {line[4:].split()[0]: line[:3] for line in lines}
        assert marks == {str(v): "[x]" if v in judges.selected else "[ ]"
                         for v in (judges.get_option_at_index(i).value for i in range(judges.option_count))}
        assert set(marks.values()) == {"[x]", "[ ]"}  # the bundled judge ticked, the fake one not
        assert all(personas.render_line(i).text.startswith("[ ]") for i in range(personas.option_count))
