"""Review the items of a run that need a human look, and record what you find.

The queue (see :mod:`dialjudge.tui.review_queue`) holds a run's unscored
answers, adversarial candidates a judge scored at or above their original,
the largest judge-human gaps and judges disagreeing with each other. For the
highlighted item the screen shows the whole item (dialogue, fact, reference,
ratings, metrics) and every judge's answer; the reviewer marks it (judge
wrong, human label doubtful, fine), may add a note and an own rating, and the
review is stored with the run. Exports list every judged item's label, with a
column saying which labels are the reviewer's own.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Header, Select, Static

from dialjudge.core.api import (
    LabelPlan,
    ReviewData,
)
from dialjudge.core.api.formatting import human_unit
from dialjudge.core.api.review import REVIEW_FORMAT_LABELS
from dialjudge.core.api.types import (
    FlagKind,
    ReviewCase,
)

from ..controllers.history import FilesExported, RunsListed
from ..controllers.label_estimates import LabelNextPlanned
from ..controllers.review import REVIEW_RUNS_GROUP, AlignCancelled, AlignFinished, ReviewQueueBuilt, ReviewSaved
from ..format import number_text
from ..state import Change, WorkspaceChange
from ..widgets.app_footer import AppFooter
from ..widgets.item_view import ItemView, metric_note
from ..widgets.judgment_view import JudgmentView
from ..widgets.label_estimates_view import review_estimate_text
from ..widgets.review_form import VERDICTS, ReviewForm
from ..widgets.virtual_table import Column, TableCell, VirtualTable
from .align_dialog import AlignResultDialog
from .base import WorkspaceScreen, no_dataset_text
from .dialogs import ExportChoice, ExportDialog

if TYPE_CHECKING:
    from dialjudge.core.api import RunRecord

KIND_STYLES = {FlagKind.PARSE_FAILURE: "red", FlagKind.LOW_MASS: "red", FlagKind.CAUGHT: "magenta",
               FlagKind.PAIR_WRONG: "magenta", FlagKind.PAIR_FLIPS: "yellow", FlagKind.JUDGE_HUMAN: "yellow",
               FlagKind.JUDGES_DISAGREE: "cyan"}
#: The "label next" order's expected number of labels (its budget), and the seed of its draw.
LABEL_NEXT_BUDGET = 20
LABEL_NEXT_SEED = 0
VERDICT_SHORT = {"judge-wrong": "judge wrong", "human-doubtful": "human doubtful", "fine": "fine"}


def run_label(record: RunRecord) -> str:
    config = record.run_config
    judges = ",".join(j.name for j in config.judges)
    what = config.kpi or config.aspect or config.quality or "overall"
    name = f" {record.name}" if record.name else ""
    return (f"run {record.id}{name} · {config.template}:{what} · {judges} · "
            f"{config.mode.value} · {record.status.value} {record.judgments}/{record.total}")


class ReviewScreen(WorkspaceScreen):
    CSS_PATH = "review.tcss"
    AUTO_FOCUS = "#review-queue"
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(index), f"verdict('{verdict}')", label, tooltip=f"Mark the item: {label.lower()}")
          for index, (verdict, label) in enumerate(VERDICTS, start=1)),
        Binding("e", "write_note", "Write a note", tooltip="Type a note and an own rating; Enter saves"),
        Binding("ctrl+s", "save_review", "Save review"),
        Binding("n", "next_unreviewed", "Next unreviewed"),
        Binding("x", "export", "Export reviews…"),
        Binding("escape", "cancel_align", "Cancel aligning", key_display="Esc",
                tooltip="Stop the alignment after the judgments in flight; a rerun reuses what is stored"),
        Binding("g", "align", "Align the judge…", show=False,
                tooltip="Align the run's judge to your own ratings and notes (dialjudge align): variants that use "
                        "them, the best judged on contexts none of them touched beside the starting judge"),
        # Off the footer (full at 80 columns); listed in Help (?) and the palette. ("o" sorts the queue.)
        Binding("a", "toggle_label_next", "Label-next order", show=False,
                tooltip="Propose items by the judge's uncertainty, drawn with known probabilities; each own rating "
                        "updates the estimate and its interval"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.runs: list[RunRecord] = []
        self.data: ReviewData | None = None
        self.case: ReviewCase | None = None
        #: The "label next" plan the queue follows, and the flagged queue it replaced (None: flagged order).
        self.label_plan: LabelPlan | None = None
        self._flagged_queue: list[ReviewCase] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="review-top"):
            yield Select[int]([], prompt="no run of this dataset yet", allow_blank=True, id="review-run",
                              compact=True)
        yield Static(id="review-status")
        estimate = Static(id="review-estimate")
        estimate.display = False  # shown in the label-next order
        yield estimate
        with Horizontal(id="review-body"):
            yield VirtualTable(id="review-queue", empty_text="Nothing to review")
            with Vertical(id="review-detail"):
                yield ItemView(id="review-item")
                yield JudgmentView("Pick an item of the queue.", id="review-judgments")
                yield ReviewForm(id="review-form")
        yield AppFooter()

    @property
    def queue_table(self) -> VirtualTable:
        return self.query_one("#review-queue", VirtualTable)

    @property
    def run_id(self) -> int | None:
        return self.data.run.id if self.data is not None else None

    # -- following the app -----------------------------------------------------------------

    def workspace_changed(self, change: WorkspaceChange) -> None:
        if change.kind is Change.DATASET:
            self._list_runs()
            if self.dj.workspace.dataset is None:
                self.query_one(JudgmentView).show_message(no_dataset_text(self.dj))
        elif change.kind is Change.RUN and not self.dj.runs.active:
            self._list_runs()  # a run stopped: it may be new, or have more judgments
        elif change.kind is Change.ITEM and self.case is not None and self.case.item_id in change.item_ids:
            view = self.query_one(ItemView)
            view.set_metric_scores(self.case.item_id, self.dj.datasets.item_metrics[self.case.item_id])

    def _list_runs(self) -> None:
        dataset = self.dj.workspace.dataset
        if dataset is not None:
            self.dj.stored_runs.list(self, dataset=dataset.name, group=REVIEW_RUNS_GROUP)

    def on_runs_listed(self, message: RunsListed) -> None:
        self.runs = message.runs
        select = self.query_one("#review-run", Select)
        ids = [r.id for r in self.runs]
        current = self.run_id
        state = self.dj.runs.state
        wanted = (current if current in ids else
                  state.run_id if state is not None and state.run_id in ids else
                  ids[0] if ids else None)
        with self.prevent(Select.Changed):
            select.set_options([(run_label(r), r.id) for r in self.runs])
            if wanted is not None:
                select.value = wanted
        if wanted is None:
            self.data = None
            self._show_queue()
        else:
            self.dj.review.load_queue(wanted, self)

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "review-run" and isinstance(event.value, int):
            event.stop()
            self.dj.review.load_queue(event.value, self)

    # -- the queue -------------------------------------------------------------------------

    def on_review_queue_built(self, message: ReviewQueueBuilt) -> None:
        keep = self.case.item_id if self.case is not None and self.run_id == message.data.run.id else None
        self.data = message.data
        self._leave_label_next()
        self._show_queue(keep)

    def _show_queue(self, keep: str | None = None) -> None:
        table = self.queue_table
        table.set_columns([Column("item", "item", max_width=28), Column("why", "why", max_width=34),
                           Column("gap", "gap", align="right", width=5),
                           Column("review", "review", width=14)])
        data = self.data
        if data is None:
            table.set_rows([])
            self.case = None
            self.refresh_bindings()
            self._redraw_status()
            self.query_one(JudgmentView).show_message("No run of this dataset yet: start one on the Run screen (j).")
            return
        self.refresh_bindings()  # export needs a run
        table.set_rows((case.item_id, self._row(case)) for case in data.queue)
        if keep is not None:
            table.move_cursor_to(keep)
        self._redraw_status()
        self._show_case(table.cursor_key)

    def _row(self, case: ReviewCase) -> list[TableCell]:
        assert self.data is not None
        review = self.data.reviews.get(case.item_id)
        verdict = VERDICT_SHORT.get(review.verdict, review.verdict) if review else ""
        plan = self.label_plan
        if plan is not None:
            k = plan.item_ids.index(case.item_id)
            rated = review is not None and review.own_rating is not None
            why = f"label next · p = {plan.probabilities[k]:.2f}"
            return [TableCell.of(case.item_id), TableCell(why, "green" if rated else "bold", plan.probabilities[k]),
                    TableCell("", "", None),
                    TableCell(verdict, "green" if review else "dim", verdict or None)]
        return [TableCell.of(case.item_id), TableCell(case.reasons, KIND_STYLES[case.kind], (case.kind.value, case.reasons)),
                TableCell(f"{case.gap:.2f}", "", case.gap), TableCell(verdict, "green" if review else "dim", verdict or None)]

    def _redraw_status(self) -> None:
        status = self.query_one("#review-status", Static)
        data = self.data
        if data is None:
            status.update(Text("", style="dim"))
            return
        queued = {case.item_id for case in data.queue}
        reviewed = sum(1 for item in data.reviews if item in queued)
        counts: dict[FlagKind, int] = {}
        for case in data.queue:
            for kind in {f.kind for f in case.flags}:
                counts[kind] = counts.get(kind, 0) + 1
        text = Text(f"{len(data.queue)} flagged", style="bold")
        text.append(f" · {reviewed} reviewed · quality {data.config.quality or '–'}")
        for kind in FlagKind:
            if counts.get(kind):
                text.append(f" · {kind.label} {counts[kind]}", style=KIND_STYLES[kind])
        status.update(text)

    def on_virtual_table_row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        if event.table is self.queue_table:
            self._show_case(event.key)

    def _show_case(self, item_id: object) -> None:
        data = self.data
        case = next((c for c in data.queue if c.item_id == item_id), None) if data is not None else None
        if (case is None) != (self.case is None):
            self.refresh_bindings()  # the verdict keys work only with an item on show
        self.case = case
        form = self.query_one(ReviewForm)
        if data is None or case is None:
            form.load(None)
            return
        example = data.dataset.get(case.item_id)
        view = self.query_one(ItemView)
        view.show(example, self.dj.datasets.item_metrics.get(example.id))
        if metric_note(example) is None and example.id not in self.dj.datasets.item_metrics:
            self.dj.datasets.score_item(example)
        judgments = [by_item[case.item_id] for by_item in data.judgments.values() if case.item_id in by_item]
        if example.is_pairwise:  # a pairwise run asked the pair's orders ("<id>#A><id>#B"), not the item
            judgments = [j for by_item in data.judgments.values() for key, j in by_item.items()
                         if key.startswith(f"{case.item_id}#")]
        header = Group(*(Text.assemble((f"⚑ {flag.kind.label}: ", f"bold {KIND_STYLES[flag.kind]}"), flag.text)
                         for flag in case.flags))
        human = human_unit(example, data.dataset, data.config.quality)
        self.query_one(JudgmentView).show_judgments(judgments, human=human, header=header)
        scale = data.dataset.qualities.get(data.config.quality) if data.config.quality else None
        if scale is not None and scale.is_numeric:
            form.set_scale(scale.min, scale.max)
        else:
            form.set_scale(None, None)
        form.load(data.reviews.get(case.item_id))

    # -- reviewing -------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("verdict", "save_review", "next_unreviewed", "write_note"):
            return True if self.case is not None else None
        if action in ("export", "toggle_label_next"):
            return True if self.data is not None else None
        if action == "cancel_align":  # only while aligning: otherwise Esc does what it does elsewhere
            return self.dj.review.aligning
        return True

    def action_verdict(self, verdict: str) -> None:
        """Mark the item and save the review."""
        if self.case is not None:
            self.query_one(ReviewForm).submit(verdict)

    def action_write_note(self) -> None:
        """Type a note (and an own rating); Enter saves the review."""
        if self.case is not None:
            self.query_one("#review-note").focus()

    def action_save_review(self) -> None:
        """Save the verdict, note and own rating."""
        if self.case is not None:
            self.query_one(ReviewForm).submit()

    def on_review_form_submitted(self, message: ReviewForm.Submitted) -> None:
        if self.case is None or self.data is None:
            return
        self.dj.review.save(self.data.run.id, self.case.item_id, message.verdict, self, note=message.note,
                            own_rating=message.own_rating)

    # -- the label-next order (active statistical inference) --------------------------------

    def action_toggle_label_next(self) -> None:
        """Propose items by the judge's uncertainty (known probabilities), or go back to the flagged queue."""
        data = self.data
        if data is None:
            return
        if self.label_plan is not None:
            keep = self.case.item_id if self.case is not None else None
            self.data = dataclasses.replace(data, queue=self._flagged_queue or [])
            self._leave_label_next()
            self._show_queue(keep)
            return
        judged = max((sum(1 for j in by_item.values() if j.normalized is not None)
                      for by_item in data.judgments.values()), default=0)
        if judged < 2:
            self.notify("The run has too few scored items to draw from", severity="warning")
            return
        self._plan(min(LABEL_NEXT_BUDGET, judged))

    def _plan(self, budget: int) -> None:
        assert self.data is not None
        judge = self.label_plan.judge if self.label_plan is not None else None
        self.dj.label_estimates.plan_label_next(self.data.run.id, self, budget=budget, seed=LABEL_NEXT_SEED,
                                                judge=judge)

    def _leave_label_next(self) -> None:
        self.label_plan = None
        self._flagged_queue = None
        self.query_one("#review-estimate", Static).display = False

    def on_label_next_planned(self, message: LabelNextPlanned) -> None:
        message.stop()
        data = self.data
        if data is None or data.run.id != message.run_id:
            return
        first = self.label_plan is None
        if first:
            self._flagged_queue = data.queue
        self.label_plan = message.plan
        estimate = self.query_one("#review-estimate", Static)
        estimate.update(review_estimate_text(message.plan, message.estimate, message.estimate_problem))
        estimate.display = True
        if first:
            flagged = {case.item_id: case for case in self._flagged_queue or []}
            queue = [flagged.get(item, ReviewCase(item)) for item in message.plan.to_label()]
            self.data = dataclasses.replace(data, queue=queue)
            self._show_queue()

    def on_review_saved(self, message: ReviewSaved) -> None:
        review = message.review
        data = self.data
        if data is None or data.run.id != review.run_id:
            return
        data.reviews[review.item_id] = review
        case = next((c for c in data.queue if c.item_id == review.item_id), None)
        if case is not None:
            cells = self._row(case)
            self.queue_table.update_cells([(review.item_id, "review", cells[3])])
        self._redraw_status()
        if self.focused is not None and self.focused.id in ("review-note", "review-rating", "review-save"):
            self.queue_table.focus()  # back to the queue for the next item
        rating = f", own rating {number_text(review.own_rating, 2)}" if review.own_rating is not None else ""
        if self.label_plan is not None and review.own_rating is not None:
            self._plan(self.label_plan.budget)  # the estimate follows every own rating
        self.notify(f"{review.item_id}: {VERDICT_SHORT[review.verdict]}{rating}", title="Review saved", timeout=3)

    def action_next_unreviewed(self) -> None:
        """Go to the next item of the queue without a review."""
        data = self.data
        if data is None:
            return
        keys = self.queue_table.row_keys
        start = keys.index(self.case.item_id) + 1 if self.case is not None and self.case.item_id in keys else 0
        for key in keys[start:] + keys[:start]:
            if key not in data.reviews:
                self.queue_table.move_cursor_to(key)
                self.queue_table.focus()
                return
        self.notify("Every item of the queue is reviewed", timeout=3)

    def action_export(self) -> None:
        """Write every judged item's label (manual ones marked) and its review to a file."""
        if self.data is None:
            return
        formats = [(key, label, key == "reviews-csv") for key, label in REVIEW_FORMAT_LABELS.items()]
        self.app.push_screen(ExportDialog(f"Export run {self.data.run.id}'s reviewed labels", formats, Path.cwd()),
                             self._export_chosen)

    def _export_chosen(self, choice: ExportChoice | None) -> None:
        if choice is not None and self.data is not None:
            self.dj.review.export(self.data.run.id, choice.folder, choice.formats, self)

    def on_files_exported(self, message: FilesExported) -> None:
        paths = "\n".join(str(p) for p in message.paths)
        self.notify(f"Wrote {message.what}:\n{paths}", title="Exported", timeout=8)

    # -- aligning the judge to the corrections (dialjudge align) ----------------------------

    def action_align(self) -> None:
        """Align the run's judge to your own ratings and notes; the report opens when it is done."""
        data = self.data
        if data is None:
            return
        rated = sum(1 for r in data.reviews.values() if r.own_rating is not None)
        if self.dj.review.aligning:
            self.notify("An alignment is already running (Esc cancels it)", title="Align", timeout=4)
            return
        self.notify(f"Aligning run {data.run.id}'s judge to your {rated} own ratings… (Esc cancels)", title="Align",
                    timeout=5)
        self.dj.review.align(data.run.id, self)
        self.refresh_bindings()

    def action_cancel_align(self) -> None:
        """Stop the alignment: the variants judged so far stay stored, and aligning again reuses them."""
        if self.dj.review.cancel_align():
            self.notify("Cancelling the alignment…", title="Align", timeout=3)

    def on_align_cancelled(self, message: AlignCancelled) -> None:
        message.stop()
        self.refresh_bindings()
        self.notify(f"Alignment of run {message.run_id}'s judge cancelled; what was judged is stored",
                    title="Align", timeout=5)

    def on_align_finished(self, message: AlignFinished) -> None:
        message.stop()
        self.refresh_bindings()
        self.app.push_screen(AlignResultDialog(message.report))
