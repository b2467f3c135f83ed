"""The app's screens: each a mode with its own key, listed in the command palette and the help.

To add a screen, append a :class:`Destination`; the app installs it as a
mode, binds its key and lists it. The screen class is imported only when the
screen is first shown.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.binding import Binding

if TYPE_CHECKING:
    from textual.screen import Screen


@dataclass(frozen=True)
class Destination:
    mode: str
    title: str
    key: str
    description: str
    #: "module:Class" of the screen, imported on first use.
    screen: str

    def screen_class(self) -> type[Screen]:
        module, _, name = self.screen.partition(":")
        return getattr(importlib.import_module(module), name)

    def make_screen(self) -> Screen:
        return self.screen_class()()

    def binding(self) -> Binding:
        return Binding(self.key, f"app.go({self.mode!r})", self.title, tooltip=self.description)


DESTINATIONS: tuple[Destination, ...] = (
    Destination("scores", "Scores", "s", "Every item's human and evaluator scores, with live correlations",
                "dialjudge.tui.screens.scores:ScoresScreen"),
    Destination("datasets", "Datasets", "d", "Bundled, configured and recent datasets; filter and read items",
                "dialjudge.tui.screens.datasets:DatasetsScreen"),
    Destination("plots", "Plots", "p", "Score histograms and evaluator-versus-human scatter plots",
                "dialjudge.tui.screens.plots:PlotsScreen"),
    Destination("run", "Run", "j", "Set up a judge run, start or resume it, and follow its progress",
                "dialjudge.tui.screens.run:RunScreen"),
    Destination("lab", "Prompt lab", "l", "Edit a template and see the exact prompt; try a judge on one item",
                "dialjudge.tui.screens.prompt_lab:PromptLabScreen"),
    Destination("review", "Review", "v", "Review flagged items of a run: disagreements, caught adversarials, failures",
                "dialjudge.tui.screens.review:ReviewScreen"),
    Destination("runs", "Runs", "u", "Run history: compare two runs, export tables and judgments",
                "dialjudge.tui.screens.runs:RunsScreen"),
    Destination("tune", "Tune", "t", "Search judge variants on tuning contexts; report the winner on held-out ones",
                "dialjudge.tui.screens.tune:TuneScreen"),
)

#: The screen shown on start.
HOME = "scores"

