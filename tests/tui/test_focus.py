"""Focus rules on every screen with text fields: letters typed in a field are text, Esc leaves the field
(never cancelling a run from inside one), and screen keys act again once outside."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Input, SelectionList, TextArea
from tui_helpers import SIZE, settle, wait_until

from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.tui.app import make_app

#: (screen key, mode, text fields on it)
FIELDS = [
    ("d", "datasets", ("#open-file", "#item-search")),
    ("j", "run", ("#run-gguf", "#run-limit", "#run-repeats", "#run-fewshot-k")),
    ("l", "lab", ("#lab-item", "#lab-fewshot-k", "#lab-editor")),
    ("t", "tune", ("#tune-space-path", "#tune-budget", "#tune-winner-name")),
]


@pytest.mark.parametrize(("key", "mode", "fields"), FIELDS, ids=[f[1] for f in FIELDS])
async def test_letters_are_text_esc_leaves_the_field_then_screen_keys_work(services, key, mode, fields):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press(key)
        await settle(pilot)
        assert app.current_mode == mode
        for selector in fields:
            field = app.screen.query_one(selector)
            assert isinstance(field, (Input, TextArea))
            if field.disabled:
                continue
            field.focus()
            await pilot.pause()
            before = field.value if isinstance(field, Input) else field.text
            await pilot.press("s", "p", "l", "e")  # screen keys elsewhere: here they are typed
            await pilot.pause()
            after = field.value if isinstance(field, Input) else field.text
            assert app.current_mode == mode, f"{selector}: a letter switched the screen"
            if not (isinstance(field, Input) and field.type == "integer"):
                assert "sple" in after and after != before, f"{selector}: the letters were not typed"
            else:
                assert after == before  # an integer field refuses letters, and they act on nothing else
            await pilot.press("escape")
            await pilot.pause()
            assert app.focused is not field and not isinstance(app.focused, (Input, TextArea)), selector
            assert app.current_mode == mode
        await pilot.press("s")  # outside the fields the screen keys work again
        await settle(pilot)
        assert app.current_mode == "scores"


async def test_esc_in_a_field_leaves_it_and_only_a_second_esc_cancels_the_run(services_factory):
    async def forever(request) -> None:
        if len(backend_requests) >= 3:
            await asyncio.Event().wait()
        backend_requests.append(request)

    backend_requests: list[object] = []
    services = services_factory(make_backend=lambda config: FakeBackend(name=config.name, delay=forever,
                                                                        max_concurrency=1))
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("j")
        await settle(pilot)
        judges = app.screen.query_one("#run-judges", SelectionList)
        judges.deselect_all()
        judges.select("fake")
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: app.runs.state is not None and app.runs.state.done >= 3, "3 judgments")
        limit = app.screen.query_one("#run-limit", Input)
        limit.focus()
        await pilot.pause()
        await pilot.press("escape")
        await pilot.pause()
        assert app.focused is not limit and app.runs.active  # left the field, the run goes on
        await pilot.press("escape")
        await wait_until(pilot, lambda: not app.runs.active, "the run is cancelled")
        assert app.runs.state.status == "cancelled"


async def test_esc_in_a_dialog_field_still_closes_the_dialog(services):
    from dialjudge.tui.screens.dialogs import PersonaEditor

    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("l")
        await settle(pilot)
        await pilot.press("f3")
        await settle(pilot)
        assert isinstance(app.screen, PersonaEditor) and isinstance(app.focused, Input)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, PersonaEditor)
