"""The leaderboard in the app (from the Runs screen, key b): the same rows, method text and notes as
``dialjudge leaderboard`` prints, computed by the same use case on a worker."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

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

from dialjudge.core.api import (
    Leaderboard,
    LeaderboardRequest,
    leaderboard,
)
from dialjudge.core.api.leaderboards import LEVELS, columns_of, table_rows, title_of
from dialjudge.core.errors import DataError

from ..controllers.base import start_thread_work
from ..host import dialjudge_app

LEADERBOARD_GROUP = "leaderboard"


@dataclass
class LeaderboardComputed(Message):
    board: Leaderboard


@dataclass
class LeaderboardRefused(Message):
    """The level asked for cannot be computed on this data (no systems named, no context to rank)."""

    request: LeaderboardRequest
    reason: str


class LeaderboardScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("l", "next_level", "Level", tooltip="Rank at the next level: global, within-context, system"),
    ]

    def __init__(self, request: LeaderboardRequest) -> None:
        super().__init__()
        self.request = request
        self.board: Leaderboard | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with VerticalScroll():
            yield Static(Text(f"Ranking every evaluator on {self.request.dataset} · {self.request.quality}…",
                              style="dim"), id="leaderboard-body")
        yield Footer()

    def on_mount(self) -> None:
        self._compute(self.request)

    def _compute(self, request: LeaderboardRequest) -> None:
        host = dialjudge_app(self)
        session, config = host.services.session, host.services.config

        def compute() -> None:
            try:
                board = leaderboard(session, request, config)
            except DataError as exc:  # a level the data cannot give: said on the screen, the last board kept
                if not get_current_worker().is_cancelled:
                    self.post_message(LeaderboardRefused(request, str(exc)))
                return
            if not get_current_worker().is_cancelled:
                self.post_message(LeaderboardComputed(board))

        start_thread_work(self.app, compute, group=LEADERBOARD_GROUP, description="Ranking the evaluators")

    def action_next_level(self) -> None:
        """Rank the same evaluators at the next level (global, within-context, system, then global again)."""
        if self.board is not None and self.board.level not in LEVELS:
            self.notify("Pre-paired replies rank at one level only (the humans' preference)")
            return
        level = LEVELS[(LEVELS.index(self.request.level) + 1) % len(LEVELS)]
        self.request = dataclasses.replace(self.request, level=level)
        self.board = None
        self.query_one("#leaderboard-body", Static).update(
            Text(f"Ranking every evaluator on {self.request.dataset} · {self.request.quality} at the {level} level…",
                 style="dim"))
        self._compute(self.request)

    def on_leaderboard_computed(self, message: LeaderboardComputed) -> None:
        if message.board.level != self.request.level and message.board.level in LEVELS:
            return  # a level the user has moved past
        self.board = message.board
        self.query_one("#leaderboard-body", Static).update(render_leaderboard(message.board))

    def on_leaderboard_refused(self, message: LeaderboardRefused) -> None:
        if message.request != self.request:
            return
        self.query_one("#leaderboard-body", Static).update(
            Text(f"{message.reason}\nPress l for the next level.", style="bold"))


def render_leaderboard(board: Leaderboard) -> Group:
    """The table as the command line prints it, then the method lines, notes and runs."""
    columns = columns_of(board)
    table = Table(title=title_of(board), title_justify="left", pad_edge=False)
    for name in columns:
        table.add_column(name, justify="left" if name == "evaluator" else "right")
    for row in table_rows(board):
        table.add_row(*row)
    lines = [Text(f"• {line}", style="dim") for line in (*board.method_lines(), *board.notes)]
    runs = [Text(f"run {r.run_id} ({r.kind}): template {r.template} #{r.template_hash}; {r.settings}")
            for r in board.runs]
    return Group(table, *lines, *runs)
