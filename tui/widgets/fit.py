"""A Rich renderable that shows the first of several layouts that fits the width it is given.

Rich narrows a table that is too wide by cutting its cells ("0.…"); a table of
numbers that must stay whole offers a narrower layout instead (fewer columns,
or one row per coefficient), and the widest one that fits is shown.
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement


class FirstThatFits:
    """Renders the first of ``layouts`` (widest first) whose natural width fits; else the last one."""

    def __init__(self, *layouts: Callable[[], RenderableType]) -> None:
        if not layouts:
            raise ValueError("FirstThatFits needs at least one layout")
        self.layouts = layouts

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for make in self.layouts[:-1]:
            layout = make()
            if Measurement.get(console, options.update(width=10_000), layout).maximum <= options.max_width:
                yield layout
                return
        yield self.layouts[-1]()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        # As wide as the widest layout wants, as narrow as the narrowest allows.
        widest = Measurement.get(console, options, self.layouts[0]())
        narrowest = Measurement.get(console, options, self.layouts[-1]())
        return Measurement(min(widest.minimum, narrowest.minimum), widest.maximum)
