"""The Tune screen: load a search space, run the tuning search with a live leaderboard and the
judgments spent, read the held-out result when it ends, and save the winner as a template."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Footer, Header, Input, Label, Static

from dialjudge.core.format import number_text

from ..state import Change, WorkspaceChange
from .base import WorkspaceScreen, no_dataset_text

if TYPE_CHECKING:
    from ..controllers.tune import TuneState

#: The search space shipped with dialjudge (found by name, in a checkout or an installed copy).
DEFAULT_SPACE = "example"


def heldout_text(state: TuneState) -> RenderableType:
    """The search's closing report (summary lines and the held-out table), or a hint."""
    report = state.report
    if report is None:
        return Text("The held-out result appears here when the search ends.", style="dim")
    lines = [Text(line) for line in report.summary_lines()]
    table = Text()
    for h in report.heldout:
        mark = " (winner)" if h.variant == report.winner else " (baseline)" if h.variant == report.baseline else ""
        table.append(f"\n{h.variant}{mark}: held-out {h.heldout_text()}, tuning {number_text(h.tuning)}, "
                     f"gap {number_text(h.gap, signed=True)}")
    return Group(Text("Held-out result", style="bold"), *lines, table)


class TuneScreen(WorkspaceScreen):
    CSS_PATH = "tune.tcss"
    AUTO_FOCUS = "#tune-leaderboard"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("o", "load_space", "Load space", tooltip="Read the search space file named in the path box"),
        Binding("r", "start", "Start search", tooltip="Run the search on the open dataset"),
        Binding("escape", "cancel", "Cancel search", tooltip="Stop the search; judgments so far stay stored"),
        Binding("w", "save_winner", "Save winner", tooltip="Save the winning variant as a template (name box)"),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="tune-inputs"):
            yield Label("Space file", classes="tune-label")
            yield Input(DEFAULT_SPACE, id="tune-space-path", placeholder="path to a search space .toml")
            yield Label("Budget", classes="tune-label")
            yield Input("", id="tune-budget", placeholder="from space", type="integer")
            yield Label("Winner name", classes="tune-label")
            yield Input("tuned-judge", id="tune-winner-name")
        yield Static(id="tune-status")
        yield DataTable(id="tune-leaderboard", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="tune-heldout-box"):
            yield Static(id="tune-heldout")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#tune-leaderboard", DataTable)
        table.add_columns("#", "variant", "stage", "agreement", "items", "settings")
        self.dj.tune.changed.subscribe(self, self.show)
        self.show(self.dj.tune.state)

    def workspace_changed(self, change: WorkspaceChange) -> None:
        if change.kind is Change.DATASET:
            self.show(self.dj.tune.state)

    # -- keys --------------------------------------------------------------------------------

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "tune-space-path":
            self.action_load_space()

    def action_load_space(self) -> None:
        """Read the search space file named in the path box."""
        text = self.query_one("#tune-space-path", Input).value.strip()
        if not text:
            self.notify("Type the path of a search space file first", severity="warning")
            return
        self.dj.tune.load_space(Path(text).expanduser())

    def action_start(self) -> None:
        """Run the loaded search space on the open dataset."""
        budget_text = self.query_one("#tune-budget", Input).value.strip()
        try:
            self.dj.tune.start(budget=int(budget_text) if budget_text else None)
        except Exception as exc:  # a refusal (nothing loaded, already running) is a notification
            self.notify(str(exc), severity="warning")

    def action_cancel(self) -> None:
        """Stop the search; judgments made so far stay stored."""
        self.dj.tune.cancel()

    def action_save_winner(self) -> None:
        """Save the winning variant as a template in your templates folder."""
        name = self.query_one("#tune-winner-name", Input).value.strip()
        try:
            self.dj.tune.save_winner(name)
        except Exception as exc:
            self.notify(str(exc), severity="warning")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        tune = self.dj.tune
        if action == "cancel":
            return tune.running
        if action == "start":
            return None if tune.running or tune.space is None else True
        if action == "save_winner":
            return None if tune.state.report is None else True
        return True

    # -- drawing -----------------------------------------------------------------------------

    def show(self, state: TuneState) -> None:
        dataset = self.dj.datasets.workspace.dataset
        space = self.dj.tune.space
        parts = [state.status]
        if dataset is not None:
            parts.append(f"dataset {dataset.name}")
        else:
            parts.append(no_dataset_text(self.dj, short=True).plain)
        if state.round_text:
            parts.append(state.round_text)
        budget = f"{state.spent}/{state.budget}" if state.budget else str(state.spent)
        parts.append(f"judgments {budget}, model calls {state.model_calls}")
        if state.progress is not None:
            p = state.progress
            parts.append(f"judging {p.variant} ({p.stage}) {p.done}/{p.total}")
        self.query_one("#tune-status", Static).update(" · ".join(parts))
        table = self.query_one("#tune-leaderboard", DataTable)
        table.clear()
        settings = {v.name: v.describe() for v in space.variants} if space is not None else {}
        for rank, (variant, stage, score, items) in enumerate(_ranked(state), start=1):
            table.add_row(str(rank), variant, stage, number_text(score), str(items), settings.get(variant, ""),
                          key=variant)
        self.query_one("#tune-heldout", Static).update(heldout_text(state))


def _ranked(state: TuneState) -> list[tuple[str, str, float | None, int]]:
    """The leaderboard: the finished report's when there is one, else the live scores (later rounds first)."""
    report = state.report
    if report is not None:
        return [(s.variant, f"round {s.round + 1}", s.score, s.n_items) for s in report.leaderboard]
    rows = [(name, stage, score, items) for name, (stage, score, items) in state.scores.items()
            if stage != "held-out"]

    def key(row: tuple[str, str, float | None, int]) -> tuple[int, bool, float]:
        round_number = int(row[1].split()[-1]) if row[1].startswith("round") else 0
        return (-round_number, row[2] is None, -(row[2] or 0.0))

    return sorted(rows, key=key)
