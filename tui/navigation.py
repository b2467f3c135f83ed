"""The app's screens: each a mode with its own key, listed in the command palette and the help.

To add a screen, append a :class:`Destination`; the app installs it as a
mode, binds its key and lists it. Screens reach the app only through
:class:`~.host.DialjudgeHost`, so importing them here makes no cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.binding import Binding
from textual.screen import Screen

from .screens.datasets import DatasetsScreen
from .screens.plots import PlotsScreen
from .screens.prompt_lab import PromptLabScreen
from .screens.review import ReviewScreen
from .screens.run import RunScreen
from .screens.runs import RunsScreen
from .screens.scores import ScoresScreen
from .screens.tune import TuneScreen


@dataclass(frozen=True)
class Destination:
    mode: str
    title: str
    key: str
    description: str
    screen: type[Screen[None]]

    def make_screen(self) -> Screen[None]:
        return self.screen()

    def binding(self) -> Binding:
        return Binding(self.key, f"app.go({self.mode!r})", self.title, tooltip=self.description)


DESTINATIONS: tuple[Destination, ...] = (
    Destination("scores", "Scores", "s", "Every item's human and evaluator scores, with live correlations",
                ScoresScreen),
    Destination("datasets", "Datasets", "d", "Bundled, configured and recent datasets; filter and read items",
                DatasetsScreen),
    Destination("plots", "Plots", "p", "Score histograms and evaluator-versus-human scatter plots",
                PlotsScreen),
    Destination("run", "Run", "j", "Set up a judge run, start or resume it, and follow its progress",
                RunScreen),
    Destination("lab", "Prompt lab", "l", "Edit a template and see the exact prompt; try a judge on one item",
                PromptLabScreen),
    Destination("review", "Review", "v", "Review flagged items of a run: disagreements, caught adversarials, failures",
                ReviewScreen),
    Destination("runs", "Runs", "u", "Run history: compare two runs, export tables and judgments",
                RunsScreen),
    Destination("tune", "Tune", "t", "Search judge variants on tuning contexts; report the winner on held-out ones",
                TuneScreen),
)

#: The screen shown on start.
HOME = "scores"
