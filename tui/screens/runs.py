"""Every stored run: its settings, cost and latency, a comparison of two runs, exports of a run's tables and
judgments, rescoring a run without the model and retrying its failed judgments."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Header, Static, TabbedContent, TabPane

from dialjudge.core.api import LeaderboardRequest
from dialjudge.core.api.batch import batch_state
from dialjudge.core.api.cascade import CascadeRequest
from dialjudge.core.api.formatting import (
    FORMAT_LABELS,
    money_text,
    usage_summary,
)
from dialjudge.core.api.jury import JuryRequest
from dialjudge.core.api.types import (
    RunStatus,
    ScoringMode,
)

from ..controllers.batch_answers import BatchAnswersImported, import_batch_answers, import_summary
from ..controllers.history import (
    FilesExported,
    RescoreRequest,
    RetryPrepared,
    RunRescored,
    RunsCompared,
    RunsListed,
    RunUsageRead,
    ScoresImported,
)
from ..state import STATUS_COLOURS, Change, WorkspaceChange
from ..widgets.app_footer import AppFooter
from ..widgets.comparison_view import render_comparison
from ..widgets.virtual_table import Column, TableCell, VirtualTable
from .answers_dialog import AnswersDialog
from .base import WorkspaceScreen
from .dialogs import ExportChoice, ExportDialog
from .import_dialog import ImportDialog
from .jury_view import CascadeScreen, JuryScreen
from .leaderboard_view import LeaderboardScreen
from .panel_settings_dialog import CascadeSettingsDialog, JurySettingsDialog
from .rescore_dialog import RescoreDialog

if TYPE_CHECKING:
    from dialjudge.core.api import (
        ImportRequest,
        RunRecord,
    )
    from dialjudge.core.api.types import RunUsage

MARKS = ("A", "B")
#: Runs marked at once: a comparison takes two, a jury or a leaderboard more (the oldest mark gives way).
MAX_MARKED = 9


def run_details(record: RunRecord, usage: RunUsage | None = None, *, show_timings: bool = True) -> RenderableType:
    """A run's settings, and its cost and latency once read, as ``dialjudge runs show`` prints them
    (timings can be left out, for snapshots)."""
    config = record.run_config
    table = Table(box=None, padding=(0, 1), show_header=False, show_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column()
    mode = config.mode.value + (f" (top-{config.top_k})" if config.mode is ScoringMode.LOGPROB and config.top_k else "")
    rows: list[tuple[str, str | Text]] = [
        ("status", Text(batch_state(record) or record.status.value, style=STATUS_COLOURS[record.status])),
        ("created", record.created[:19].replace("T", " ")),
        ("dataset", f"{config.dataset} (subset {config.subset}"
                    + (f", first {config.limit}" if config.limit else "") + ")"),
        ("template", config.template_label),
        ("mode", mode),
        ("aspect / KPI / quality", f"{config.aspect or '–'} / {config.kpi or '–'} / {config.quality or '–'}"),
        ("judge columns", ", ".join(v.label for v in config.variants())),
        ("few-shot", config.fewshot.spec),
        ("repeats", str(config.repeats)),
        ("judgments", f"{record.judgments} of {record.total} ({record.failures} not scored)"),
        ("fingerprint", record.fingerprint),
    ]
    if record.source_run is not None:
        rows.append(("rescored from", f"run {record.source_run}, without calling the model"))
    if usage is not None:
        rows.append(("cost and latency", usage_text(usage, show_timings=show_timings)))
    if record.error:
        rows.append(("error", Text(record.error, style="red")))
    for key, value in rows:
        table.add_row(key, value)
    title = Text(f"Run {record.id}" + (f" — {record.name}" if record.name else ""), style="bold")
    return Group(title, table, Text("\nTemplate", style="bold"), Text(config.template_text))


def usage_text(usage: RunUsage, *, show_timings: bool) -> str:
    """Per judge: tokens, throughput and estimated cost; the run's wall time (timings only when shown)."""
    if show_timings:
        lines = [usage_summary(usage)]
    else:
        lines = [f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens"]
    for j in usage.judges:
        rate = usage.items_per_s(j.judge)
        cost = "local" if j.local and j.asked else money_text(j.cost)
        line = f"{j.judge}: {j.asked} asked, {j.reused} reused, {j.prompt_tokens}+{j.completion_tokens} tokens"
        if show_timings and rate is not None:
            line += f", {rate:.2f} items/s"
        lines.append(line + f", est. cost {cost}")
    return "\n".join(lines)


class RunsScreen(WorkspaceScreen):
    CSS_PATH = "runs.tcss"
    AUTO_FOCUS = "#runs-table"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("space", "mark", "Mark", tooltip=f"Mark the run: two to compare, more for a jury or a leaderboard "
                f"({MAX_MARKED} at most)"),
        Binding("c", "compare", "Compare", tooltip="Compare the two marked runs (or the marked and highlighted)"),
        Binding("x", "export", "Export…", tooltip="Write the run's agreement tables and judgments to files"),
        Binding("a", "show_in_scores", "Add to Scores", tooltip="Show the run's judges on the Scores screen"),
        Binding("r", "rescore", "Rescore…", tooltip="Score the run's stored answers again (another top-K, mode, "
                                                   "parser or mapping) into a new run, without the model"),
        Binding("f", "retry_failed", "Retry failed",
                tooltip="Ask the judges again for the run's judgments without a score; the rest stay"),
        Binding("i", "import_scores", "Import…",
                tooltip="Store judge scores made elsewhere (CSV/JSONL, Inspect AI, promptfoo) as a run"),
        Binding("g", "reload", "Reload runs"),
        # Not in the footer (it is full at 80 columns); in the help and the command palette.
        Binding("b", "leaderboard", "Leaderboard", show=False,
                tooltip="Rank the marked runs' judges (none marked: every run on the highlighted run's dataset and "
                        "quality) beside the metrics and baselines, with significance clusters"),
        Binding("y", "jury", "Jury…", show=False,
                tooltip="Pool the marked runs' judges and the highlighted run's into one (majority, mean or learned "
                        "weights, asked first), beside each member, with the panel's cost"),
        Binding("e", "cascade", "Cascade…", show=False,
                tooltip="The first marked run's judge first, escalating to the other run's (marked or highlighted) "
                        "where unsure, with a guaranteed agreement with the humans (target and delta asked first)"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.runs: dict[int, RunRecord] = {}
        self.marked: list[int] = []
        #: Cost and latency of the runs read so far (read when a run is highlighted).
        self.usage: dict[int, RunUsage] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="runs-status")
        yield VirtualTable(id="runs-table", empty_text="No runs yet: start one on the Run screen (j)")
        with TabbedContent(id="runs-tabs", initial="runs-details-tab"):
            with TabPane("Details", id="runs-details-tab"), VerticalScroll(classes="runs-pane"):
                yield Static(Text("Highlight a run to see its settings.", style="dim"), id="runs-details")
            with TabPane("Comparison", id="runs-comparison-tab"), VerticalScroll(classes="runs-pane"):
                yield Static(Text("Mark two runs (space) and compare them (c).", style="dim"),
                             id="runs-comparison")
        yield AppFooter()

    @property
    def table(self) -> VirtualTable:
        return self.query_one("#runs-table", VirtualTable)

    @property
    def highlighted(self) -> int | None:
        key = self.table.cursor_key
        return key if isinstance(key, int) else None

    # -- the list --------------------------------------------------------------------------

    def workspace_changed(self, change: WorkspaceChange) -> None:
        if change.kind is Change.DATASET or (change.kind is Change.RUN and not self.dj.runs.active):
            self.action_reload()

    def action_reload(self) -> None:
        """Read the runs again."""
        self.dj.stored_runs.list(self)

    def on_runs_listed(self, message: RunsListed) -> None:
        self.runs = {r.id: r for r in message.runs}
        self.usage = {}
        self.marked = [m for m in self.marked if m in self.runs]
        table = self.table
        if not table.columns:
            table.set_columns([
                Column("mark", "", width=1), Column("id", "id", align="right", width=4),
                Column("created", "created", width=16), Column("status", "status", width=9),
                Column("dataset", "dataset", max_width=20), Column("template", "template", max_width=26),
                Column("target", "aspect/KPI", max_width=18), Column("mode", "mode", width=8),
                Column("judges", "judges", max_width=24), Column("done", "judged", align="right", width=9),
                Column("failed", "failed", align="right", width=6), Column("name", "name", max_width=20),
            ])
        table.set_rows((r.id, self._row(r)) for r in message.runs)
        self.refresh_bindings()  # mark, compare and export need runs
        self._redraw_status()
        self._show_details()

    def _row(self, r: RunRecord) -> list[TableCell]:
        config = r.run_config
        mark = self.sides().get(r.id, "")
        judges = ",".join(j.name for j in config.judges)
        target = config.kpi or config.aspect or "–"
        return [
            TableCell(mark, "bold reverse" if mark else "", mark or None),
            TableCell(str(r.id), "bold", r.id),
            TableCell(r.created[:16].replace("T", " "), "dim", r.created),
            TableCell(batch_state(r) or r.status.value, STATUS_COLOURS[r.status], r.status.value),
            TableCell.of(config.dataset),
            TableCell.of(config.template_label),
            TableCell.of(target),
            TableCell.of(config.mode.value),
            TableCell.of(judges),
            TableCell(f"{r.judgments}/{r.total}", "", r.judgments),
            TableCell(str(r.failures), "red" if r.failures else "dim", r.failures),
            TableCell.of(r.name or ""),
        ]

    def _redraw_status(self) -> None:
        text = Text(f"{len(self.runs)} runs", style="bold")
        sides = self.sides()
        if len(self.marked) == len(MARKS):
            text.append(" · " + ", ".join(f"{side} = run {run_id}" for run_id, side in sides.items())
                        + " (A the older)")
        elif len(self.marked) > len(MARKS):
            text.append(f" · marked runs {', '.join(str(m) for m in self.marked)} (y pools them; c compares two)")
        elif self.marked:
            text.append(f" · marked run {self.marked[0]}")
        text.append(" · space marks, c compares, x exports, a adds a run's judges to the Scores screen",
                    style="dim")
        self.query_one("#runs-status", Static).update(text)

    def on_virtual_table_row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        self._show_details()

    def on_virtual_table_row_selected(self, event: VirtualTable.RowSelected) -> None:
        self.action_show_in_scores()

    def _show_details(self) -> None:
        run_id = self.highlighted
        details = self.query_one("#runs-details", Static)
        if run_id is None or run_id not in self.runs:
            details.update(Text("No run yet.", style="dim"))
            return
        details.update(run_details(self.runs[run_id], self.usage.get(run_id),
                                   show_timings=self.dj.services.show_timings))
        if run_id not in self.usage:
            self.dj.stored_runs.usage(run_id, self)

    def on_run_usage_read(self, message: RunUsageRead) -> None:
        self.usage[message.usage.run_id] = message.usage
        if message.usage.run_id == self.highlighted:
            self._show_details()

    # -- actions ---------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("mark", "export", "show_in_scores", "rescore"):
            return True if self.runs else None
        if action == "retry_failed":
            return True if self.runs and not self.dj.runs.active else None
        if action == "compare":
            return True if len(self.runs) >= 2 else None
        return True

    def sides(self) -> dict[int, str]:
        """The mark each marked run shows: A and B once two are marked, the older run A, as the comparison
        has it (one source for the status line, the mark column and the comparison); one alone, or more than
        two (no comparison): "*"."""
        if len(self.marked) != len(MARKS):
            return dict.fromkeys(self.marked, "*")
        return dict(zip(sorted(self.marked), MARKS, strict=True))

    def action_mark(self) -> None:
        """Mark the highlighted run for comparison (again: unmark it)."""
        run_id = self.highlighted
        if run_id is None:
            return
        if run_id in self.marked:
            self.marked.remove(run_id)
        else:
            self.marked = [*self.marked, run_id][-MAX_MARKED:]
        self.table.update_cells((r, "mark", self._row(self.runs[r])[0]) for r in self.runs)
        self._redraw_status()

    def action_compare(self) -> None:
        """Compare the marked runs: correlation deltas and the prompt diff."""
        pair = list(self.marked)
        if len(pair) > len(MARKS):
            self.notify(f"A comparison takes two runs; {len(pair)} are marked (space unmarks)", severity="warning")
            return
        if len(pair) == 1 and self.highlighted is not None and self.highlighted != pair[0]:
            pair.append(self.highlighted)
        if len(pair) != 2:
            self.notify("Mark two runs with space (or one, and highlight the other)", severity="warning")
            return
        a, b = sorted(pair)  # A the older run, as sides() shows it; Δ = B − A
        self.query_one("#runs-comparison", Static).update(Text(f"Comparing run {a} with run {b}…", style="dim"))
        self.query_one(TabbedContent).active = "runs-comparison-tab"
        self.dj.stored_runs.compare(a, b, self)

    def action_leaderboard(self) -> None:
        """The leaderboard of the marked runs, or of every run on the highlighted run's dataset and quality."""
        run_id = self.marked[0] if self.marked else self.highlighted
        if run_id is None:
            return
        config = self.runs[run_id].run_config
        quality = config.quality or config.aspect
        if not quality:
            self.notify(f"Run {run_id} names no human-rated quality to rank against", severity="warning")
            return
        request = LeaderboardRequest(config.dataset_path or config.dataset, quality, tuple(sorted(self.marked)),
                                     n_boot=self.dj.services.n_boot, seed=self.dj.services.seed)
        self.app.push_screen(LeaderboardScreen(request))

    def _panel_runs(self) -> list[int]:
        """The marked runs in the order they were marked, then the highlighted one if it is not marked."""
        chosen = list(self.marked)
        if self.highlighted is not None and self.highlighted not in chosen:
            chosen.append(self.highlighted)
        return chosen

    def action_jury(self) -> None:
        """A jury of the marked runs and the highlighted one (a run with several judges gives each a seat)."""
        chosen = self._panel_runs()
        if not chosen:
            return
        request = JuryRequest(tuple(str(r) for r in chosen), n_boot=self.dj.services.n_boot,
                              seed=self.dj.services.seed)
        self.app.push_screen(JurySettingsDialog(request), self._panel_chosen)

    def action_cascade(self) -> None:
        """The first marked run's judge as the cheap one, the other (marked or highlighted) as the strong one."""
        chosen = self._panel_runs()
        if len(chosen) != 2:
            self.notify("Mark the cheap judge's run (space), then highlight or mark the strong judge's run",
                        severity="warning")
            return
        request = CascadeRequest(str(chosen[0]), str(chosen[1]), seed=self.dj.services.seed)
        self.app.push_screen(CascadeSettingsDialog(request), self._panel_chosen)

    def _jury_leaderboard(self, request: JuryRequest) -> LeaderboardRequest | None:
        """The leaderboard of the jury's runs with the jury ranked among them, on the first run's quality."""
        config = self.runs[int(request.members[0])].run_config
        quality = config.quality or config.aspect
        if not quality:
            return None
        return LeaderboardRequest(config.dataset_path or config.dataset, quality,
                                  tuple(sorted(int(m) for m in request.members)), n_boot=self.dj.services.n_boot,
                                  seed=self.dj.services.seed, juries=(request.members,),
                                  jury_method=request.method.value)

    def _panel_chosen(self, request: JuryRequest | CascadeRequest | None) -> None:
        """The settings dialog closed: compute with its settings (None: cancelled)."""
        if isinstance(request, JuryRequest):
            self.app.push_screen(JuryScreen(request, self._jury_leaderboard(request)))
        elif isinstance(request, CascadeRequest):
            self.app.push_screen(CascadeScreen(request))

    def on_runs_compared(self, message: RunsCompared) -> None:
        self.query_one("#runs-comparison", Static).update(render_comparison(message.comparison))

    def action_export(self) -> None:
        """Write the highlighted run's agreement tables and judgments to a folder."""
        run_id = self.highlighted
        if run_id is None:
            return
        formats = [(key, label, True) for key, label in FORMAT_LABELS.items()]
        self.app.push_screen(ExportDialog(f"Export run {run_id}", formats, Path.cwd()),
                             lambda choice: self._export_chosen(run_id, choice))

    def _export_chosen(self, run_id: int, choice: ExportChoice | None) -> None:
        if choice is not None:
            self.dj.stored_runs.export(run_id, choice.folder, choice.formats, self)

    def on_files_exported(self, message: FilesExported) -> None:
        paths = "\n".join(str(p) for p in message.paths)
        self.notify(f"Wrote {message.what}:\n{paths}", title="Exported", timeout=8)

    def action_show_in_scores(self) -> None:
        """Show the highlighted run's judges on the Scores screen."""
        run_id = self.highlighted
        if run_id is not None:
            self.dj.stored_runs.show_in_scores(run_id)

    def action_rescore(self) -> None:
        """Ask for a new top-K, mode, parser or mapping, and score the highlighted run's answers again."""
        run_id = self.highlighted
        if run_id is None or run_id not in self.runs:
            return
        self.app.push_screen(RescoreDialog(self.runs[run_id]), lambda request: self._rescore_chosen(run_id, request))

    def _rescore_chosen(self, run_id: int, request: RescoreRequest | None) -> None:
        if request is not None:
            self.dj.stored_runs.rescore(run_id, request, self)

    def on_run_rescored(self, message: RunRescored) -> None:
        result = message.result
        self.notify(f"Run {result.run_id}: run {result.source_run} rescored ({result.settings.describe()}) without "
                    f"the model; {result.changed} of {result.rescored} judgments changed, {result.failures} without "
                    f"a score. Mark both and compare (c).", title="Rescored", timeout=8)
        self.action_reload()

    def action_import_scores(self) -> None:
        """Ask for a file of judge scores made elsewhere and store them as a run of the open dataset; on a
        run awaiting batch answers, for an answer file of it."""
        run_id = self.highlighted
        record = self.runs.get(run_id) if run_id is not None else None
        if record is not None and record.status is RunStatus.AWAITING_ANSWERS:
            self.app.push_screen(AnswersDialog(record.id, batch_state(record) or ""),
                                 lambda path: self._answers_chosen(record.id, path))
            return
        dataset = self.dj.workspace.dataset
        if dataset is None:
            self.notify("Open the dataset the scores are for first (Datasets screen)", severity="warning")
            return
        self.app.push_screen(ImportDialog(dataset.name), self._import_chosen)

    def _import_chosen(self, request: ImportRequest | None) -> None:
        if request is not None:
            self.dj.stored_runs.import_scores(request, self)

    def _answers_chosen(self, run_id: int, path: Path | None) -> None:
        if path is not None:
            import_batch_answers(self.dj.stored_runs, run_id, [path], self)

    def on_batch_answers_imported(self, message: BatchAnswersImported) -> None:
        report = message.report
        self.notify(import_summary(report), title="Batch answers", timeout=10,
                    severity="information" if not report.problems else "warning")
        self.action_reload()

    def on_scores_imported(self, message: ScoresImported) -> None:
        report = message.result.report
        problems = "; ".join(f"{label}: {len(names)} (first: {names[0]})" for label, names in report.problems())
        again = " (imported before with these settings: shown again, nothing stored)" if message.result.shown_again else ""
        self.notify(f"Run {message.result.run_id}{again} from {report.file} ({report.format}): matched "
                    f"{report.matched_rows} of {report.rows} scores to {report.items} items; "
                    f"{problems or 'nothing unmatched, duplicated, missing or off the scale'}.",
                    title="Imported", timeout=10)
        self.action_reload()

    def action_retry_failed(self) -> None:
        """Ask the judges again for the highlighted run's judgments without a score."""
        run_id = self.highlighted
        if run_id is None or run_id not in self.runs:
            return
        if not self.runs[run_id].failures:
            self.notify(f"Run {run_id} has no failed judgments", severity="information")
            return
        self.dj.stored_runs.prepare_retry(run_id, self)

    def on_retry_prepared(self, message: RetryPrepared) -> None:
        # The run controller runs it: progress on the Run screen, Esc cancels, judgments reach the Scores screen.
        self.dj.runs.start(message.config, run_id=message.run_id, use_cache=False, retry_failed=True)
        self.notify(f"Retrying {message.failed} failed judgments of run {message.run_id} (Run screen: j)",
                    timeout=6)
