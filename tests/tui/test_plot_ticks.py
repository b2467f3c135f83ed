"""The histogram counts items: its y axis is labelled with whole numbers only."""

from __future__ import annotations

import re

import pytest
from textual_plotext import PlotextPlot
from tui_helpers import settle

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.plots import count_ticks


@pytest.mark.parametrize("largest", [0, 1, 2, 3, 4, 5, 7, 11, 12, 13, 99, 360, 1001])
def test_count_ticks_are_whole_evenly_spaced_and_reach_the_largest_count(largest):
    ticks = count_ticks(largest)
    assert ticks[0] == 0 and ticks[-1] >= max(largest, 1)
    assert all(isinstance(t, int) for t in ticks)
    assert 2 <= len(ticks) <= 5
    assert len({b - a for a, b in zip(ticks, ticks[1:], strict=False)}) == 1


@pytest.mark.parametrize("size", [(80, 24), (140, 40), (200, 50)])
async def test_the_histograms_y_labels_are_whole_numbers(services, size):
    app = make_app(services=services)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("p")
        await settle(pilot)
        plot = app.screen.query_one("#histogram", PlotextPlot)
        text = plot.render().plain  # type: ignore[union-attr]
        labels = [m.group(1) for m in re.finditer(r"^\s*(\S+)┤", text, flags=re.MULTILINE)]
        assert labels, text
        assert all(label.isdigit() for label in labels), labels
        counts = [int(label) for label in labels]
        assert len({a - b for a, b in zip(counts, counts[1:], strict=False)}) <= 1, labels  # evenly spaced
