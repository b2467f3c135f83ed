"""A jury and a cascade in the app (from the Runs screen, keys y and e): the same rows and method text as
``dialjudge jury`` and ``dialjudge cascade`` print, computed by the same use cases on a worker. From the jury,
key b ranks it in the leaderboard beside its members (``dialjudge leaderboard --jury``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Header, Static
from textual.worker import get_current_worker

from dialjudge.core.api import LeaderboardRequest
from dialjudge.core.api import cascade as cascade_api
from dialjudge.core.api import jury as jury_api
from dialjudge.core.errors import DialjudgeError

from ..controllers.base import start_thread_work
from ..host import dialjudge_app
from .leaderboard_view import LeaderboardScreen

PANEL_GROUP = "jury"


@dataclass
class PanelComputed(Message):
    """A jury or cascade report arrived (or the message that it could not be made)."""

    renderable: Group | Text
    report: Any = None


def _table(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]], lines: Sequence[str]) -> Group:
    table = Table(title=title, title_justify="left", pad_edge=False)
    for index, name in enumerate(columns):
        table.add_column(name, justify="left" if index == 0 else "right")
    for row in rows:
        table.add_row(*row)
    return Group(table, *(Text(f"• {line}", style="dim") for line in lines))


def render_jury(report: jury_api.JuryReport) -> Group:
    return _table(jury_api.jury_title(report), jury_api.JURY_COLUMNS, jury_api.jury_rows(report),
                  jury_api.jury_lines(report))


def render_cascade(report: cascade_api.CascadeReport) -> Group:
    return _table(cascade_api.cascade_title(report), cascade_api.CASCADE_COLUMNS, cascade_api.cascade_rows(report),
                  cascade_api.cascade_lines(report))


class _PanelScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]
    waiting = ""

    def __init__(self) -> None:
        super().__init__()
        self.report: Any = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static(Text(self.waiting, style="dim"), id="panel-body")
        yield Footer()

    def compute(self) -> tuple[Any, Group]:
        raise NotImplementedError

    def on_mount(self) -> None:
        work: Callable[[], tuple[Any, Group]] = self.compute

        def run() -> None:
            try:
                report, shown = work()
            except DialjudgeError as exc:  # a bad choice of runs is said on the screen, not raised
                message = PanelComputed(Text(str(exc), style="bold red"))
            else:
                message = PanelComputed(shown, report)
            if not get_current_worker().is_cancelled:
                self.post_message(message)

        start_thread_work(self.app, run, group=PANEL_GROUP, description=self.waiting)

    def on_panel_computed(self, message: PanelComputed) -> None:
        self.report = message.report
        self.query_one("#panel-body", Static).update(message.renderable)


class JuryScreen(_PanelScreen):
    waiting = "Pooling the judges…"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("b", "leaderboard", "Leaderboard", tooltip="Rank the jury beside its members, the metrics and the "
                "baselines (dialjudge leaderboard --jury)"),
    ]

    def __init__(self, request: jury_api.JuryRequest, leaderboard: LeaderboardRequest | None = None) -> None:
        super().__init__()
        self.request = request
        #: The leaderboard of the members' runs with this jury (None: not offered).
        self.leaderboard = leaderboard

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leaderboard":
            return True if self.leaderboard is not None else None
        return True

    def action_leaderboard(self) -> None:
        """The leaderboard of the members' runs, with the jury ranked among them."""
        if self.leaderboard is not None:
            self.app.push_screen(LeaderboardScreen(self.leaderboard))

    def compute(self) -> tuple[Any, Group]:
        host = dialjudge_app(self)
        report = jury_api.run_jury(host.services.session, self.request, host.services.config)
        return report, render_jury(report)


class CascadeScreen(_PanelScreen):
    waiting = "Choosing the cascade's thresholds…"

    def __init__(self, request: cascade_api.CascadeRequest) -> None:
        super().__init__()
        self.request = request

    def compute(self) -> tuple[Any, Group]:
        host = dialjudge_app(self)
        report = cascade_api.run_cascade(host.services.session, self.request, host.services.config)
        return report, render_cascade(report)
