"""Screenshot of the Scores screen's alternative annotator test and few-label estimates at 80×24.

A simulated good judge's run on USR Topical-Chat (seeded noise, seeded draw of 50 labels and seeded
bootstrap), so the numbers are fixed; skipped where the shared data is absent. Regenerate with
``python -m pytest tests/tui/test_snapshots_label_estimates.py --snapshot-update`` and look at the SVG.
"""

from __future__ import annotations

import usr_runs
from tui_helpers import settle, wait_until

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.label_estimates_dialog import LabelEstimatesDialog
from dialjudge.tui.services import Services

# The fixtures, by name.
usr_services = usr_runs.usr_services
good_run = usr_runs.good_run


def test_label_estimates_dialog(snap_compare, usr_services: Services, good_run: int) -> None:
    async def open_dialog(pilot) -> None:
        app = pilot.app
        await settle(pilot)
        app.stored_runs.show_in_scores(good_run)
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, LabelEstimatesDialog) and app.screen.result is not None,
                         "the test and the estimates arrived")
        await settle(pilot)

    assert snap_compare(make_app("usr-topicalchat", services=usr_services), terminal_size=(80, 24),
                        run_before=open_dialog)
