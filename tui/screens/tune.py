"""The Tune screen: load a search space, pick the human quality it ranks by, run the tuning search with a
live leaderboard, the judgments spent and an ETA, read the held-out result when it ends, and save the
winner as a template."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.widgets import DataTable, Header, Input, Label, Select, Static

from dialjudge.core.format import duration_text, number_text

from ..state import Change, WorkspaceChange
from ..widgets.app_footer import AppFooter
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
        # Two rows of one-line fields: at 80 columns a quality picker fits beside the space file.
        with Horizontal(classes="tune-inputs", id="tune-inputs"):
            yield Label("Space file", classes="tune-label")
            yield Input(DEFAULT_SPACE, id="tune-space-path", placeholder="path to a search space .toml",
                        compact=True)
            yield Label("Quality", classes="tune-label")
            yield Select[str]([], prompt="quality", allow_blank=True, id="tune-quality", compact=True,
                              tooltip="The human ratings the search ranks variants by (the space's quality "
                                      "where the dataset has it)")
        with Horizontal(classes="tune-inputs", id="tune-inputs-more"):
            yield Label("Budget", classes="tune-label")
            yield Input("", id="tune-budget", placeholder="from space", type="integer", compact=True)
            yield Label("Winner name", classes="tune-label")
            yield Input("tuned-judge", id="tune-winner-name", compact=True)
        yield Static(id="tune-status")
        yield DataTable(id="tune-leaderboard", cursor_type="row", zebra_stripes=True)
        with VerticalScroll(id="tune-heldout-box"):
            yield Static(id="tune-heldout")
        yield AppFooter()

    def on_mount(self) -> None:
        table = self.query_one("#tune-leaderboard", DataTable)
        table.add_columns("#", "variant", "stage", "agreement", "items", "settings")
        self._space_shown = self.dj.tune.space
        self.dj.tune.changed.subscribe(self, self.show)
        self.show(self.dj.tune.state)

    def workspace_changed(self, change: WorkspaceChange) -> None:
        if change.kind is Change.DATASET:
            self._fill_qualities()
            self.show(self.dj.tune.state)

    def _fill_qualities(self) -> None:
        """The open dataset's rated qualities; the space's own is chosen where the dataset has it
        (else the quality on view), so that a dataset without the space's quality can still be tuned."""
        select = self.query_one("#tune-quality", Select)
        qualities = self.dj.workspace.qualities() if self.dj.workspace.dataset is not None else []
        current = None if select.is_blank() else str(select.value)
        space = self.dj.tune.space
        from_space = space.settings.quality if space is not None else None
        by_name = {q.lower(): q for q in qualities}
        wanted = (by_name.get(from_space.lower()) if from_space else None) or (
            current if current in qualities else self.dj.workspace.quality)
        with self.prevent(Select.Changed):
            select.set_options([(q, q) for q in qualities])
            if wanted in qualities:
                select.value = wanted

    def _space_changed(self) -> None:
        if self.dj.tune.space is not self._space_shown:
            self._space_shown = self.dj.tune.space
            self._fill_qualities()

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
        quality = self.query_one("#tune-quality", Select)
        try:
            self.dj.tune.start(budget=int(budget_text) if budget_text else None,
                               quality=None if quality.is_blank() else str(quality.value))
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
        self._space_changed()
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
        if state.running and state.planned:
            parts.append(f"{state.planned} planned")
            if self.dj.services.show_timings:
                eta = state.eta_s(self.dj.services.clock())
                parts.append(f"ETA {duration_text(eta)}" if eta is not None else "ETA after the first judgments")
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
