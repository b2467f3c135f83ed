"""A failed background task becomes a notification whose text is shown as written, never as markup."""

from __future__ import annotations

import dataclasses

from tui_helpers import SIZE, settle, toast_texts

from dialjudge.core.errors import DataError
from dialjudge.tui.app import make_app

#: The words of a real error: a config key in square brackets, which Rich markup would swallow.
MISSING = "dataset 'usr-topicalchat' is not available (no data folder configured; set [data] dirs in the config)"


async def test_a_failed_open_shows_its_error_with_its_brackets(services, worker_failures):
    def not_available(name, column_map=None):
        raise DataError(MISSING)

    app = make_app(services=dataclasses.replace(services, open_dataset=not_available), dataset="usr-topicalchat")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        shown = " ".join(" ".join(text.split()) for text in toast_texts(app))
        assert "set [data] dirs in the config" in shown, shown
        worker_failures.expect("set [data] dirs")
