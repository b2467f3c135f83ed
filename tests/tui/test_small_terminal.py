"""At 80×24 no number is cut to "0.…": the Scores and Runs screens' tables of numbers narrow their
layout instead (fewer columns, one row per coefficient) and the screens reflow.

Each check reads what a widget shows at the width it really has on an 80-column screen.
"""

from __future__ import annotations

import re
from typing import Any

from test_snapshots_part2 import edited_template, fake_judges, run_config
from textual.widget import Widget
from textual.widgets import Static
from tui_helpers import make_services, settle, static_text

from dialjudge.tui.app import make_app

SMALL = (80, 24)
#: A digit or a decimal point right before an ellipsis: a number Rich cut to fit (a CI's " … " has spaces).
CUT_NUMBER = re.compile(r"[0-9.]…")


def shown_at_its_width(widget: Static) -> str:
    return static_text(widget, width=widget.content_region.width)


def cut_numbers(text: str) -> list[str]:
    return [line for line in text.splitlines() if CUT_NUMBER.search(line)]


async def two_runs(pilot: Any) -> None:
    app = pilot.app
    await settle(pilot)
    app.runs.start(run_config(app.workspace.dataset, judges=("fake", "fake2")))
    await settle(pilot)
    app.runs.start(run_config(app.workspace.dataset, template=edited_template()))
    await settle(pilot)


async def test_the_runs_comparison_keeps_every_number_whole_at_80_columns(tmp_path):
    app = make_app(services=make_services(tmp_path, make_backend=fake_judges))
    async with app.run_test(size=SMALL) as pilot:
        await two_runs(pilot)
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("space", "down", "space", "c")
        await settle(pilot)
        comparison = app.screen.query_one("#runs-comparison", Static)
        assert comparison.content_region.width < 80
        text = shown_at_its_width(comparison)
        assert "A = run 1, B = run 2 on sample" in text
        assert "-0.036" in text  # run 1's fake r, whole (the wide table cut it to "-0.…")
        assert cut_numbers(text) == []


async def test_the_scores_panels_keep_every_number_whole_at_80_columns(tmp_path):
    app = make_app(services=make_services(tmp_path, make_backend=fake_judges))
    async with app.run_test(size=SMALL) as pilot:
        await two_runs(pilot)
        await pilot.press("u")
        await settle(pilot)
        await pilot.press("down", "a", "s")  # run 1's judges join the Scores screen
        await settle(pilot)
        screen = app.screen
        table = screen.query_one("#scores-table", Widget)
        panel = screen.query_one("#correlations", Widget)
        # Both visible: the table above the correlations, each at least a few rows and the full width.
        assert table.region.height >= 5 and panel.region.height >= 5
        assert table.region.width == panel.region.width == 80
        bodies = [w for w in screen.query(Static) if w.id in ("correlation-body", "discernment-body")
                  or w.has_class("decision-part")]
        assert bodies
        for body in bodies:
            if body.content_region.width:
                assert cut_numbers(shown_at_its_width(body)) == [], body.id


async def test_the_plots_discernment_table_keeps_every_number_whole_at_80_columns(services):
    app = make_app(services=services)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        body = app.screen.query_one("#discernment-body", Static)
        text = shown_at_its_width(body)
        assert "ROC-AUC" in text and "BLEU-1" in text
        assert cut_numbers(text) == []
