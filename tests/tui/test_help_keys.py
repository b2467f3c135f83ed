"""The help lists each action once, with all of its keys."""

from __future__ import annotations

from tui_helpers import SIZE, settle, static_text

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.help import HelpScreen


async def test_an_action_on_several_keys_is_one_line(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        text = static_text(app.screen.query_one("#help-keys"), width=100)
        assert text.count("Close help") == 1
        line = next(line for line in text.splitlines() if "Close help" in line)
        assert "esc, q, ?" in line
        assert text.count("  Help") == 1 and "?, f1" in text
