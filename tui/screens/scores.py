"""The main view: every item's human score beside every evaluator's, and how well each agrees."""

from __future__ import annotations

import textwrap
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.widgets import Header, Label, Select, Static

from dialjudge.core.api.profiles import (
    DEFAULT_PROFILE,
    profile_names,
)
from dialjudge.core.api.view import stored_run_of
from dialjudge.core.errors import DialjudgeError

from ..state import Change, WorkspaceChange, column_order
from ..widgets.app_footer import AppFooter
from ..widgets.correlation_panel import CorrelationPanel, panel_rows
from ..widgets.decision_panel import DecisionPanel
from ..widgets.label_agreement_panel import LabelAgreementPanel
from ..widgets.preference_report import PreferencePanel
from ..widgets.run_progress_bar import TICK_S, progress_text
from ..widgets.selection_bar import SelectionBar
from ..widgets.virtual_table import Column, RowKey, VirtualTable
from .base import VIEW_BINDINGS, WorkspaceScreen, no_dataset_text
from .compare_dialog import CompareDialog
from .item import ItemScreen
from .label_estimates_dialog import LabelEstimatesDialog
from .score_cells import HUMAN_COLUMN, ID_COLUMN, SYSTEM_COLUMN, ScoreCells

if TYPE_CHECKING:
    from ..scores_view_model import Workspace

#: Seconds between two draws of the correlation panel while judgments stream in.
PANEL_REDRAW_INTERVAL = 0.5


def subset_filter(workspace: Workspace) -> Callable[[RowKey], bool] | None:
    """Which rows the workspace's subset keeps (None: every row); called on the table's worker."""
    dataset = workspace.dataset
    if dataset is None or workspace.subset.spec == "all":
        return None
    matches = workspace.subset.predicate()
    return lambda key: matches(dataset.get(str(key)))


class ScoresScreen(WorkspaceScreen):
    CSS_PATH = "scores.tcss"
    AUTO_FOCUS = "#scores-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        *VIEW_BINDINGS,
        Binding("r", "app.refresh_stats", "Refresh statistics", show=False),
        # Off the footer, which is full (Help and Quit would drop off); listed in Help (?) and the palette.
        Binding("c", "compare_evaluators", "Compare two evaluators", show=False),
        Binding("a", "label_estimates", "Annotator test, few-label estimates", show=False),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: The evaluator columns the table shows, in order.
        self._shown_evaluators: list[str] = []
        #: When the correlation panel was last drawn (monotonic s), and whether a redraw waits.
        self._panel_drawn_at = -1.0
        self._panel_redraw_pending = False
        #: The lines the status took when last drawn (a change asks for a layout pass).
        self._status_lines = 1

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="scores-pickers"):
            yield SelectionBar(id="selection")
            # Which code computes the reference-based metrics (README, "Metric profiles").
            yield Label("Metrics", classes="selection-label")
            yield Select[str]([(name, name) for name in profile_names()], value=DEFAULT_PROFILE,
                              allow_blank=False, id="profile-select")
        yield Static(id="scores-status")
        with Horizontal(id="scores-body"):
            yield VirtualTable(id="scores-table", empty_text="Opening the dataset…")
            yield CorrelationPanel(id="correlations")
        yield LabelAgreementPanel(id="label-agreement")  # shown with a label quality's LabelReport
        yield DecisionPanel(id="decisions")  # two picked columns compared; the judges as labels
        yield PreferencePanel(id="scores-preferences")  # a run on pre-paired items against the humans' votes
        yield AppFooter()

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#scores-table", VirtualTable)

    @property
    def panel(self) -> CorrelationPanel:
        return self.query_one("#correlations", CorrelationPanel)

    def workspace_changed(self, change: WorkspaceChange) -> None:
        kind = change.kind
        if kind is Change.LIVE:  # the numbers asked for by the last draw: drawn, not asked for again
            self._redraw_panel(ask=False)
            return
        if kind in (Change.DATASET, Change.SELECTION):
            self._sync_selection_bar()
            self._rebuild_table(selection_only=kind is Change.SELECTION)
        elif kind in (Change.METRICS, Change.JUDGES):
            if self._shown_evaluators != column_order(self.dj.workspace):
                self._rebuild_table(columns_only=True)
            elif kind is Change.JUDGES:
                self._update_judge_cells(change.item_ids)
        if kind in (Change.DATASET, Change.JUDGES):
            self._redraw_preferences()
        if kind in (Change.DATASET, Change.SELECTION, Change.METRICS, Change.STATS):
            self._redraw_panel()
        elif kind is Change.JUDGES:
            self._redraw_panel_soon()
        self._redraw_status()

    @on(Select.Changed, "#profile-select")
    def _profile_chosen(self, event: Select.Changed) -> None:
        event.stop()
        self.dj.datasets.set_metric_profile(str(event.value))
        self._redraw_status()

    # -- two evaluators compared, the judges as labels -------------------------------------

    def on_mount(self) -> None:
        self.dj.decisions.changed.subscribe(self, self._redraw_decisions)
        self._redraw_decisions()
        # The run's part of the status line moves between events (a model loading, the ETA).
        self.set_interval(TICK_S, self._tick_run_status, name="run status clock")

    def _tick_run_status(self) -> None:
        if self.dj.runs.active and self.dj.services.show_timings and self.is_current:
            self._redraw_status()

    def action_compare_evaluators(self) -> None:
        """Pick two evaluator columns; the paired verdict shows below the table."""
        decisions = self.dj.decisions
        choices = decisions.choices()
        ws = self.dj.workspace
        if len(choices) < 2 or ws.quality is None:
            self.notify("Comparing needs a numeric quality and two evaluator columns", severity="warning")
            return
        a, b = decisions.pair or (None, None)
        # By default the newest judge (B) against the one before it, or the first metric.
        judges = ws.judge_names
        if a is None and judges:
            b = judges[-1]
            a = judges[-2] if len(judges) > 1 else next((c for c in choices if c != b), None)

        def chosen(pair: tuple[str, str] | None) -> None:
            if pair is None:
                return
            try:
                decisions.compare(*pair)
            except DialjudgeError as exc:  # the view changed under the dialog (no quality any more)
                self.notify(str(exc), severity="warning")

        self.app.push_screen(CompareDialog(choices, a=a, b=b, view=f"{ws.quality}, subset {ws.subset.spec}"),
                             callback=chosen)

    def action_label_estimates(self) -> None:
        """Can the newest stored run's judge replace an annotator, and what do 50 labels buy with it?"""
        runs = [run for run in map(stored_run_of, self.dj.workspace.judge_names) if run is not None]
        if not runs:
            self.notify("Show a stored run first (a finished run, or one opened from the Runs screen)",
                        severity="warning")
            return
        self.app.push_screen(LabelEstimatesDialog(max(runs)))

    def _redraw_preferences(self) -> None:
        """The latest run on this dataset's pre-paired items, against the humans' votes (computed on a
        worker by the pairwise controller when the run finishes or is opened from the Runs screen)."""
        ws, pairwise = self.dj.workspace, self.dj.pairwise
        report = pairwise.preference_of(None if ws.dataset is None else ws.dataset.name)
        self.query_one(PreferencePanel).show(report, pairwise.run_id, ws.dataset)

    def _redraw_decisions(self, _: None = None) -> None:
        decisions = self.dj.decisions
        self.query_one(DecisionPanel).show(decisions.comparison, decisions.diagnostics)

    # -- the item table ------------------------------------------------------------------

    def _sync_selection_bar(self) -> None:
        ws = self.dj.workspace
        self.query_one(SelectionBar).sync(ws.qualities(), ws.quality, [s.spec for s in ws.subsets()], ws.subset.spec)

    def _rebuild_table(self, *, columns_only: bool = False, selection_only: bool = False) -> None:
        """Show the workspace's items and evaluators. Cells are built lazily (``ScoreCells``) for
        the rows drawn; ``columns_only``: the items, the quality and the subset are unchanged, so
        the rows stay and only the evaluator columns are re-read; ``selection_only``: the dataset is
        unchanged but the quality or subset may not be, so the rows stay, the human column is
        re-read and the subset filter replaced (the table filters 100,000 rows on a worker)."""
        ws = self.dj.workspace
        table = self.table
        evaluators = column_order(ws)
        self._shown_evaluators = evaluators
        columns = [
            Column(ID_COLUMN, "item", max_width=24),
            Column(SYSTEM_COLUMN, "system", max_width=16,
                   names=tuple(ws.dataset.systems) if ws.dataset is not None else ()),
            Column(HUMAN_COLUMN, ws.quality or "human", align="right", max_width=12),
            *(Column(name, _evaluator_label(ws, name), align="right", max_width=14) for name in evaluators),
        ]
        if ws.dataset is None:
            if table.columns != columns:
                table.set_columns(columns)
            table.empty_text = no_dataset_text(self.dj, short=True).plain
            table.set_rows([])
            return
        source = table.source
        same_rows = isinstance(source, ScoreCells) and source.dataset is ws.dataset
        if columns_only and same_rows:
            table.set_columns(columns)  # a lazy table keeps its rows, cursor and sort
            table.invalidate(None, evaluators)  # scores may have changed with the columns
            return
        if selection_only and same_rows and table.columns[:2] == columns[:2]:
            if table.columns != columns:
                table.set_columns(columns)
            table.invalidate(None, [HUMAN_COLUMN, *evaluators])  # the quality's labels and the cells' colours
            table.set_filter(subset_filter(ws))
            return
        if table.columns != columns:
            table.set_columns(columns)
        table.set_lazy_rows(ws.dataset.ids(), ScoreCells(ws, self.dj.datasets.text_widths))
        table.set_filter(subset_filter(ws))

    def _update_judge_cells(self, item_ids: frozenset[str]) -> None:
        """Judgments arrived for ``item_ids`` (empty: any item): only those cells are rebuilt, when drawn."""
        ws = self.dj.workspace
        if ws.dataset is None or not isinstance(self.table.source, ScoreCells):
            return
        names = [n for n in ws.evaluators if ws.kind(n).value != "metric"]
        self.table.invalidate(item_ids or None, names)

    def on_virtual_table_ordered(self, event: VirtualTable.Ordered) -> None:
        """A big table's filter or sort came from its worker: the count of rows shown changed."""
        self._redraw_status()

    def on_virtual_table_row_selected(self, event: VirtualTable.RowSelected) -> None:
        dataset = self.dj.workspace.dataset
        if dataset is not None:
            self.app.push_screen(ItemScreen(dataset.get(str(event.key))))

    # -- the correlation panel and the status line ---------------------------------------

    def _redraw_panel_soon(self) -> None:
        """Redraw now, or once at the end of the current interval when the last draw was recent.

        A streaming run changes the judges' scores many times a second; each draw computes the
        running correlations and renders the panel's tables on the UI thread, so draws are
        spaced PANEL_REDRAW_INTERVAL apart, and the last change is always drawn.
        """
        if self._panel_redraw_pending:
            return
        wait = self._panel_drawn_at + PANEL_REDRAW_INTERVAL - time.monotonic()
        if wait <= 0:
            self._redraw_panel()
            return
        self._panel_redraw_pending = True
        self.set_timer(wait, self._pending_panel_redraw)

    def _pending_panel_redraw(self) -> None:
        self._panel_redraw_pending = False
        self._redraw_panel()

    def _redraw_panel(self, *, ask: bool = True) -> None:
        self._panel_drawn_at = time.monotonic()
        ws = self.dj.workspace
        rows = panel_rows(ws, self.dj.datasets.stats, ask=ask)
        how = ws.aggregation.value
        n = ws.n_human_labels()  # the panel is drawn twice a second while a run streams in
        title = f"{ws.quality} ({how} of annotators) · subset {ws.subset.spec} · {n} rated items"
        note = f"95% CIs: bootstrap over contexts, {self.dj.services.n_boot} resamples"
        if any(r.live for r in rows):
            note += "\n● live: running correlations; CIs follow when the run pauses or ends"
        if ws.quality is None and ws.dataset is not None:
            title, note = "No numeric quality to correlate with", ""
        elif ws.dataset is None:
            # Wrapped to the panel: its lines are as wide as its widest table row, wider than 80 columns.
            width = max(30, self.panel.size.width - 4)
            note = "\n".join(line for paragraph in no_dataset_text(self.dj).plain.split("\n")
                             for line in textwrap.wrap(paragraph, width))
            title = "No agreement without a dataset"
        self.panel.show(rows, title=title, note=note)
        self.query_one(LabelAgreementPanel).show(self.dj.labels.report_for(ws.quality, ws.qualities()))

    def _redraw_status(self) -> None:
        # Its height is the stylesheet's (one line, or up to two where narrow); a layout pass re-measures the
        # whole screen, so a new status asks for one only when the lines it wraps to change.
        status = self.query_one("#scores-status", Static)
        text = self.status_text()
        lines = len(text.wrap(self.app.console, status.content_size.width)) if status.content_size.width else 1
        status.update(text, layout=lines != self._status_lines)
        self._status_lines = lines

    def status_text(self) -> Text:
        dj = self.dj
        ws = dj.workspace
        if ws.dataset is None:
            return no_dataset_text(self.dj, short=True)
        shown = self.table.row_count
        parts: list[Text | str] = [Text.assemble((ws.dataset.name, "bold"), f" · {shown} of {len(ws.dataset)} items shown")]
        if dj.datasets.metrics_progress is not None:
            done, total = dj.datasets.metrics_progress
            parts.append(f"metrics: {done}/{total} pairs scored…")
        elif ws.metric_scores is None:
            parts.append("metrics: scoring…")
        else:
            skipped = ws.metric_scores.n_skipped
            parts.append(f"metrics: {ws.metric_scores.n_scored} scored" + (f", {skipped} skipped" if skipped else ""))
            if dj.datasets.metric_profile != DEFAULT_PROFILE:  # the profile's caveats (METEOR 1.5 without Java)
                parts.extend(ws.metric_scores.notes)
        parts.append(self._run_text())
        return Text(" · ").join(Text(p) if isinstance(p, str) else p for p in parts if p)

    def _run_text(self) -> Text:
        dj = self.dj
        dataset = dj.workspace.dataset
        state = dj.runs.state_on(dataset.name if dataset is not None else None)
        if state is None and dj.runs.active:  # the app's run judges another dataset
            return Text(f"a run on {dj.runs.dataset} is in progress (Run screen, j)", style="yellow")
        if state is None:
            judges = ", ".join(f"{j.name} ({j.backend}: {j.model})" if j.model else f"{j.name} ({j.backend})"
                               for j in dj.services.judges())
            return Text(f"judges available: {judges}" if judges else "no judge configured")
        # The same line as the Run screen's, on one row.
        return progress_text(state, show_timings=dj.services.show_timings, one_line=True)


def _evaluator_label(ws: Workspace, name: str) -> str:
    """A judge column on its own scale says which ("smollm2 1-5"); a 0-1 column is its name."""
    scale = ws.judge_scale(name)
    return name if scale is None else f"{name} {scale[0]:g}-{scale[1]:g}"
