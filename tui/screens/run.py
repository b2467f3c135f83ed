"""Set up a judge run and follow it: judges, template, aspect or KPI, personas, few-shot, mode, items.

Starting validates the settings on a worker (core/judging.plan_run) and asks
the run store for an unfinished run made with exactly these settings; such a
run is offered for resume. The run itself is the app's: its judgments stream
into the Scores screen while this screen shows the progress; Esc cancels it,
and what was stored stays, ready to resume.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.widgets import Button, Checkbox, Header, Input, Label, Select, SelectionList, Static

from dialjudge.core.api.template_identity import template_text_hash
from dialjudge.core.api.types import (
    AnswerConstraint,
    OutputKind,
    PairSetting,
    default_scoring,
    infer_quality,
    local_threads,
    parse_subset,
    plan_pairs,
)
from dialjudge.core.errors import ConfigError, DialjudgeError

from ..controllers.batch_export import BatchWritten, export_text, write_batch_file
from ..controllers.history import RunUsageRead
from ..controllers.runs import JudgeChoices, RunPlanned, RunRequest, gguf_judge
from ..state import Change, WorkspaceChange
from ..widgets.app_footer import AppFooter
from ..widgets.pairwise_report import PairwiseReportView
from ..widgets.path_suggester import PathSuggester
from ..widgets.preference_report import PreferenceReportView
from ..widgets.run_progress_bar import RunProgressBar
from ..widgets.toggles import StateCheckbox, StateSelectionList
from .base import WorkspaceScreen, no_dataset_text
from .dialogs import FRESH, RESUME, ResumeDialog
from .judge_log_dialog import JudgeLogDialog
from .runs import usage_text

if TYPE_CHECKING:
    from dialjudge.core.api import JudgeConfig
    from dialjudge.core.api.types import Template
    from dialjudge.core.model import Dataset

FEWSHOT_METHODS = ("none", "random", "bm25-context", "bm25-response", "bm25-both")
#: The Answers field: free text, or held to the template's answer format (core.judges.prompts.grammar).
ANSWER_CONSTRAINTS = [("free text, parsed", AnswerConstraint.OFF.value),
                      ("constrained to the answer format", AnswerConstraint.ANSWER.value),
                      ("a reasoning line, then constrained", AnswerConstraint.REASONING.value)]
#: The subset choice that lets the plan decide: every item, or a KPI template's own items.
DEFAULT_SUBSET = "(default)"
NO_TARGET = ""


class RunScreen(WorkspaceScreen):
    CSS_PATH = "run.tcss"
    AUTO_FOCUS = "#run-judges"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "start", "Start run", tooltip="Check the settings and start (or resume) the run"),
        # Out of the footer (the palette and the help list it): it is for when something went wrong.
        Binding("ctrl+l", "judge_log", "Judge process log", show=False,
                tooltip="The output of the process that judges runs, searches and trials (a crash's stack, say)"),
        # Not in the footer (the button beside the Batch file field names it).
        Binding("ctrl+b", "write_batch", "Write batch file", show=False,
                tooltip="Write the run's requests to the Batch file (OpenAI Batch API, vLLM run-batch) instead of "
                        "running it now; the run awaits their answers (Runs screen: i imports an answer file)"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._extra_judges: dict[str, JudgeConfig] = {}
        #: The user picked a mode or a constraint since the template was chosen (else the judges' default shows).
        self._scoring_touched = False
        self._constrain_touched = False
        self._template: Template | None = None
        #: The run whose cost and latency were last asked for.
        self._usage_of: int | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="run-body"):
            # The form scrolls with the focused field; the container itself takes no focus.
            with VerticalScroll(id="run-form", can_focus=False):
                yield Label("Judges", classes="pane-title")
                yield StateSelectionList[str](id="run-judges", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("Local model", classes="field-label")
                    yield Input(placeholder="path/to/model.gguf, Enter adds it as a judge", id="run-gguf",
                                suggester=PathSuggester(), compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("Template", classes="field-label")
                    yield Select[str]([], prompt="template", allow_blank=True, id="run-template", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("Aspect", classes="field-label", id="run-target-label")
                    yield Select[str]([], prompt="aspect", allow_blank=True, id="run-target", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("Scoring", classes="field-label")
                    yield Select[str]([], prompt="mode", allow_blank=True, id="run-mode", compact=True)
                with Horizontal(classes="field-row", id="run-pairs-row") as pairs_row:
                    pairs_row.display = False  # shown for a pairwise template
                    yield Label("Pairs", classes="field-label")
                    yield Input("all", placeholder="all, or N per context", id="run-pairs", compact=True)
                    yield Label("Seed", classes="field-label short")
                    yield Input("0", type="integer", id="run-pair-seed", compact=True)
                yield Label("Personas (none ticked: no persona; several: one judge column each)",
                            classes="pane-title")
                yield StateSelectionList[str](id="run-personas", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("Few-shot", classes="field-label")
                    yield Select[str]([(m, m) for m in FEWSHOT_METHODS], value="none", allow_blank=False,
                                      id="run-fewshot", compact=True)
                    yield Label("k", classes="field-label short")
                    yield Input("3", type="integer", id="run-fewshot-k", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("Answers", classes="field-label")
                    yield Select[str](ANSWER_CONSTRAINTS, value=AnswerConstraint.OFF.value, allow_blank=False,
                                      id="run-constrain", compact=True,
                                      tooltip="Generate mode: hold every answer to the template's format "
                                              "(a grammar on local models), so that every answer parses")
                with Horizontal(classes="field-row"):
                    yield Label("Subset", classes="field-label")
                    yield Select[str]([(DEFAULT_SUBSET, DEFAULT_SUBSET)], value=DEFAULT_SUBSET, allow_blank=False,
                                      id="run-subset", compact=True)
                with Horizontal(classes="field-row"):
                    yield Label("Limit", classes="field-label")
                    yield Input(placeholder="all items", type="integer", id="run-limit", compact=True)
                    yield Label("Repeats", classes="field-label short")
                    yield Input("1", type="integer", id="run-repeats", compact=True)
                yield StateCheckbox("New run, even where one with these settings finished", id="run-fresh",
                               compact=True, tooltip="Unticked, an identical finished run is shown again "
                                                     "instead of being stored twice (as `dialjudge judge` does)")
                yield Button("Start run (ctrl+r)", id="run-start", variant="primary")
                # Or the same run written for a batch engine, answered later (docs/batch.md).
                with Horizontal(classes="field-row", id="run-batch-row"):
                    yield Label("Batch file", classes="field-label")
                    yield Input(placeholder="requests.jsonl, for a batch engine", id="run-batch-out",
                                suggester=PathSuggester(), compact=True)
                yield Button("Write batch file (ctrl+b)", id="run-batch")
            # Scrolls and takes focus (Tab reaches it, arrows and PageDown scroll it): at 80×24 what will
            # run and the progress share a short pane.
            with VerticalScroll(id="run-side", can_focus=True):
                yield Label("What will run", classes="pane-title")
                yield Static(id="run-plan")
                yield Label("Progress", classes="pane-title")
                yield RunProgressBar(id="run-progress")
                batch = Static(id="run-batch-result")  # the files a batch export wrote, and the run's state
                batch.display = False
                yield batch
                usage = Static(id="run-usage")  # cost and latency, once a run has ended
                usage.display = False
                yield usage
                yield PairwiseReportView(id="run-pairwise-report")
                yield PreferenceReportView(id="run-preference-report")
                yield Label("Template", classes="pane-title")
                yield Static(id="run-template-info")
        yield AppFooter()

    def on_mount(self) -> None:
        self.dj.runs.judge_choices_changed.subscribe(self, self._choices_changed)
        self._fill_judges()
        if self.dj.runs.judge_choices is None:
            self.dj.runs.reload_judge_choices()
        else:
            self._choices_changed(self.dj.runs.judge_choices)

    # -- following the app -----------------------------------------------------------------

    def workspace_changed(self, change: WorkspaceChange) -> None:
        if change.kind is Change.DATASET:
            self._fill_subsets()
        if change.kind in (Change.RUN, Change.JUDGES, Change.DATASET):
            self._show_progress()
            self._follow_run()
            self.query_one(PairwiseReportView).show(self.dj.pairwise.report, self.dj.pairwise.run_id)
            self.query_one(PreferenceReportView).show(self.dj.pairwise.preference, self.dj.pairwise.run_id)
        if change.kind in (Change.DATASET, Change.SELECTION):
            self._redraw_plan()

    def _show_progress(self) -> None:
        # A run on another dataset shows while it runs (Esc cancels it), not once it has ended.
        runs, dataset = self.dj.runs, self.dj.workspace.dataset
        state = runs.state if runs.active else runs.state_on(dataset.name if dataset is not None else None)
        self.query_one(RunProgressBar).show(state, show_timings=self.dj.services.show_timings)
        self.query_one("#run-start", Button).disabled = self.dj.runs.active
        self._show_usage()

    def _follow_run(self) -> None:
        """From the moment a run starts the progress stays in view: in a narrow terminal the form folds
        to a few rows (it still scrolls with the focused field) until a form field is focused again
        after the run has ended, so a run's end and its failures stay on screen until then."""
        if self.dj.runs.active and not self.has_class("-following"):
            self.add_class("-following")
            self.call_after_refresh(self._scroll_to_progress)

    def _scroll_to_progress(self) -> None:
        self.query_one("#run-side", VerticalScroll).scroll_to_widget(self.query_one(RunProgressBar), top=True,
                                                                      animate=False)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        if not self.dj.runs.active and self.query_one("#run-form") in event.widget.ancestors:
            self.remove_class("-following")

    def _show_usage(self) -> None:
        """Hidden while a run is on; read from the store once it has ended."""
        dataset = self.dj.workspace.dataset
        state = self.dj.runs.state_on(dataset.name if dataset is not None else None)
        usage = self.query_one("#run-usage", Static)
        ended = state is not None and not state.active and state.run_id is not None
        if not ended:
            usage.display = False
            self._usage_of = None  # a retry ends the same run again: read it afresh then
        elif state is not None and state.run_id is not None and self._usage_of != state.run_id:
            self._usage_of = state.run_id
            self.dj.stored_runs.usage(state.run_id, self, group="run-screen-usage")

    def on_run_usage_read(self, message: RunUsageRead) -> None:
        usage = self.query_one("#run-usage", Static)
        usage.update(Text(usage_text(message.usage, show_timings=self.dj.services.show_timings), style="dim"))
        usage.display = True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start" and self.dj.runs.active:
            return None  # shown, but disabled while a run is in progress
        return True

    def _choices_changed(self, choices: JudgeChoices) -> None:
        select = self.query_one("#run-template", Select)
        current = select.value if not select.is_blank() else None
        with self.prevent(Select.Changed):
            select.set_options([(choices.label(name), name) for name in sorted(choices.templates)])
            wanted = current if current in choices.templates else (
                "likert-1to5" if "likert-1to5" in choices.templates else next(iter(sorted(choices.templates)), None))
            if wanted is not None:
                select.value = wanted
        personas = self.query_one("#run-personas", SelectionList)
        ticked = set(personas.selected)
        personas.clear_options()
        for name, persona in choices.personas.items():
            personas.add_option((Content.assemble(name, (f"  {persona.description}", "dim")), name, name in ticked))
        if choices.personas:
            personas.highlighted = 0
        self._template_chosen()

    def _fill_judges(self) -> None:
        judges = self.query_one("#run-judges", SelectionList)
        ticked = set(judges.selected)
        judges.clear_options()
        configured = self.dj.services.judges()
        for index, judge in enumerate([*configured, *self._extra_judges.values()]):
            initially = judge.name in ticked if ticked else index == 0
            judges.add_option((_judge_label(judge), judge.name, initially))
        judges.highlighted = 0

    def _fill_subsets(self) -> None:
        select = self.query_one("#run-subset", Select)
        specs = [DEFAULT_SUBSET, *(s.spec for s in self.dj.workspace.subsets())]
        current = select.value
        with self.prevent(Select.Changed):
            select.set_options([(spec, spec) for spec in specs])
            select.value = current if current in specs else DEFAULT_SUBSET

    # -- the form --------------------------------------------------------------------------

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "run-template":
            self._template_chosen()
        else:
            if event.select.id in ("run-mode", "run-constrain"):
                self._scoring_touched = True  # the user's choice now, whichever judges are ticked
            if event.select.id == "run-constrain":
                self._constrain_touched = True
            if event.select.id == "run-mode" and event.value != "generate" and not self._constrain_touched:
                with self.prevent(Select.Changed):  # a default constraint goes with the default mode only
                    self.query_one("#run-constrain", Select).value = AnswerConstraint.OFF.value
            self._redraw_plan()

    def on_selection_list_selected_changed(self, event: SelectionList.SelectedChanged) -> None:
        if event.selection_list.id == "run-judges" and not self._scoring_touched:
            self._apply_default_scoring()
        self._redraw_plan()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "run-gguf":
            self._redraw_plan()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "run-gguf":
            self._add_gguf(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "run-start":
            self.action_start()
        elif event.button.id == "run-batch":
            self.action_write_batch()

    def _add_gguf(self, path: str) -> None:
        if not path.strip():
            return
        taken = {j.name for j in self.dj.services.judges()} | set(self._extra_judges)
        try:
            judge = gguf_judge(path.strip(), taken)
        except DialjudgeError as exc:
            self.notify(str(exc), severity="warning")
            return
        self._extra_judges[judge.name] = judge
        judges = self.query_one("#run-judges", SelectionList)
        judges.add_option((_judge_label(judge), judge.name, True))
        self.query_one("#run-gguf", Input).value = ""
        self.notify(f"Added judge {judge.name} ({judge.model_path}); the model loads when the run starts",
                    timeout=5)

    def _template_chosen(self) -> None:
        choices = self.dj.runs.judge_choices
        select = self.query_one("#run-template", Select)
        template = None if choices is None or select.is_blank() else choices.templates.get(str(select.value))
        self._template = template
        target = self.query_one("#run-target", Select)
        label = self.query_one("#run-target-label", Label)
        mode = self.query_one("#run-mode", Select)
        with self.prevent(Select.Changed):
            if template is None:
                target.set_options([])
                mode.set_options([])
            else:
                names, kind = (list(template.kpis), "KPI") if template.kpis else (list(template.aspects), "Aspect")
                label.update(kind)
                target.set_options([(n, n) for n in names])
                if names:
                    quality = self.dj.workspace.quality
                    resolved = (template.resolve_kpi(quality) if template.kpis else template.resolve_aspect(quality))
                    target.value = resolved if resolved in names else names[0]
                modes = [m.value for m in template.output.modes]
                mode.set_options([(m, m) for m in modes])
                self._scoring_touched = self._constrain_touched = False
                self._apply_default_scoring()
            self.query_one("#run-pairs-row").display = template is not None and _is_pairwise(template)
            accepts = template is not None and template.accepts_examples
            fewshot = self.query_one("#run-fewshot", Select)
            fewshot.disabled = not accepts
            self.query_one("#run-fewshot-k", Input).disabled = not accepts
            if not accepts:
                fewshot.value = "none"
        shipped = choices is not None and template is not None and template.name in choices.shipped
        overrides = choices is not None and template is not None and template.name in choices.overridden
        self.query_one("#run-template-info", Static).update(template_text(template, shipped=shipped,
                                                                          overrides=overrides))
        self._redraw_plan()

    def _apply_default_scoring(self) -> None:
        """The way the ticked judges score the template (the bundled judge's was measured): the form
        shows what a run that names no mode would do, until the user picks a mode or a constraint."""
        if self._template is None:
            return
        scoring = default_scoring(self._template, self._ticked_judges())
        with self.prevent(Select.Changed):
            self.query_one("#run-mode", Select).value = scoring.mode.value
            self.query_one("#run-constrain", Select).value = scoring.constrain.value

    def _ticked_judges(self) -> list[JudgeConfig]:
        ticked = set(self.query_one("#run-judges", SelectionList).selected)
        return [j for j in [*self.dj.services.judges(), *self._extra_judges.values()] if j.name in ticked]

    def _value(self, select_id: str) -> str | None:
        select = self.query_one(select_id, Select)
        return None if select.is_blank() else str(select.value)

    def build_request(self) -> RunRequest:
        """The form as a request; ValueError names the field that is wrong."""
        template = self._value("#run-template")
        if template is None or self._template is None:
            raise ValueError("choose a template")
        judges = tuple(self.query_one("#run-judges", SelectionList).selected)
        if not judges:
            raise ValueError("tick at least one judge")
        target = self._value("#run-target")
        is_kpi = bool(self._template.kpis)
        method = self._value("#run-fewshot") or "none"
        fewshot = "none" if method == "none" else f"{method}:{_integer(self, '#run-fewshot-k', 'few-shot k', 1)}"
        constrain = self._value("#run-constrain") or AnswerConstraint.OFF.value
        if constrain != AnswerConstraint.OFF.value and self._value("#run-mode") != "generate":
            raise ValueError("constrained answers need the generate mode")
        subset = self._value("#run-subset")
        limit_text = self.query_one("#run-limit", Input).value.strip()
        pairs, pair_seed = _pair_fields(self) if _is_pairwise(self._template) else (None, 0)
        return RunRequest(
            template=template, judges=judges, mode=self._value("#run-mode") or "generate",
            aspect=None if is_kpi else target, kpi=target if is_kpi else None,
            personas=tuple(self.query_one("#run-personas", SelectionList).selected), fewshot=fewshot,
            subset=None if subset in (None, DEFAULT_SUBSET) else subset,
            limit=_integer(self, "#run-limit", "limit", 1) if limit_text else None,
            repeats=_integer(self, "#run-repeats", "repeats", 1),
            constrain=constrain,
            extra_judges=tuple(j for name, j in self._extra_judges.items() if name in judges),
            pairs=pairs, pair_seed=pair_seed,
        )

    def _redraw_plan(self) -> None:
        self.query_one("#run-plan", Static).update(self._plan_text())

    def _plan_text(self) -> Text:
        dataset = self.dj.workspace.dataset
        if dataset is None:
            return no_dataset_text(self.dj)
        try:
            request = self.build_request()
        except ValueError as exc:
            return Text(f"Not ready: {exc}.", style="yellow")
        subset = request.subset or (f"tag:kpi:{request.kpi}" if request.kpi and f"kpi:{request.kpi}" in dataset.tags
                                    else "all")
        items = sum(1 for ex in dataset.examples if parse_subset(subset)(ex))
        if request.limit is not None:
            items = min(items, request.limit)
        variants = len(request.judges) * max(1, len(request.personas))
        total = items * variants * request.repeats
        quality = infer_quality(dataset, aspect=request.aspect, kpi=request.kpi)
        text = Text()
        text.append(f"{items} items", style="bold")
        text.append(f" of {dataset.name} (subset {subset})")
        text.append(f" × {variants} judge column{'s' if variants != 1 else ''}")
        text.append(f" × {request.repeats} repeat{'s' if request.repeats != 1 else ''}")
        text.append(f" = {total} judgments\n" if request.pairs is None else " (candidates, paired below)\n",
                    style="bold")
        columns = [f"{j}@{p}" if p else j for j in request.judges for p in (request.personas or (None,))]
        shown = ", ".join(columns[:6]) + (f" and {len(columns) - 6} more" if len(columns) > 6 else "")
        text.append(f"Judge columns: {shown}\n")
        constrained = {AnswerConstraint.ANSWER.value: " (constrained)",
                       AnswerConstraint.REASONING.value: " (reasoning, then constrained)"}.get(request.constrain, "")
        text.append(f"{request.template} · {request.mode}{constrained} · "
                    f"{'KPI ' + request.kpi if request.kpi else 'aspect ' + (request.aspect or '–')} · "
                    f"few-shot {request.fewshot}\n")
        if request.pairs is not None:
            text.append_text(_pair_plan_text(dataset, subset, request))
        text.append(f"Compared with the human ratings of {quality or '–'}", style="dim")
        return text

    # -- starting --------------------------------------------------------------------------

    def action_judge_log(self) -> None:
        """Show the end of the judge process's log and its path."""
        self.app.push_screen(JudgeLogDialog())

    def action_start(self) -> None:
        """Check the settings and start (or resume) the run."""
        dataset = self.dj.workspace.dataset
        if dataset is None:
            self.notify(no_dataset_text(self.dj, short=True).plain, severity="warning")
            return
        if self.dj.runs.active:
            self.notify("A run is in progress; Esc cancels it", severity="warning")
            return
        try:
            request = self.build_request()
        except ValueError as exc:
            self.notify(str(exc).capitalize(), title="Cannot start yet", severity="warning")
            return
        self.dj.runs.plan(request, dataset, self)

    def action_write_batch(self) -> None:
        """Write the run's requests to the Batch file instead of running it now (``judge --batch-out``)."""
        dataset = self.dj.workspace.dataset
        if dataset is None:
            self.notify(no_dataset_text(self.dj, short=True).plain, severity="warning")
            return
        out = self.query_one("#run-batch-out", Input).value.strip()
        try:
            if not out:
                raise ValueError("name the batch file to write (the Batch file field)")
            request = self.build_request()
        except ValueError as exc:
            self.notify(str(exc).capitalize(), title="Cannot write yet", severity="warning")
            return
        write_batch_file(self.app, self.dj.services, request, dataset, Path(out).expanduser(), self)

    def on_batch_written(self, message: BatchWritten) -> None:
        result = self.query_one("#run-batch-result", Static)
        result.update(Text(export_text(message.export, message.state)))
        result.display = True
        self.query_one("#run-side", VerticalScroll).scroll_to_widget(result, top=True, animate=False)
        self.notify(f"Run {message.export.run_id}: {message.export.requests} requests written; {message.state}",
                    title="Batch file written", timeout=8)

    def on_run_planned(self, message: RunPlanned) -> None:
        record = message.resumable
        if record is None:
            fresh = self.query_one("#run-fresh", Checkbox).value
            self.dj.runs.start_planned(message.plan, reuse_finished=not fresh)
            return

        def answered(choice: str | None) -> None:
            if choice == RESUME:
                self.dj.runs.start_planned(message.plan, resume_run=record.id)
            elif choice == FRESH:
                self.dj.runs.start_planned(message.plan)

        self.app.push_screen(ResumeDialog(record), answered)


def _is_pairwise(template: Template | None) -> bool:
    return template is not None and template.output.kind is OutputKind.PAIRWISE


def _pair_fields(screen: RunScreen) -> tuple[str, int]:
    """The Pairs and Seed fields; ValueError names the one that is wrong."""
    pairs = screen.query_one("#run-pairs", Input).value.strip() or "all"
    try:
        PairSetting.parse(pairs)
    except ConfigError as exc:
        raise ValueError(str(exc)) from None
    return pairs, _integer(screen, "#run-pair-seed", "pair seed", 0)


def _pair_plan_text(dataset: Dataset, subset: str, request: RunRequest) -> Text:
    """How many pairs the run asks, before it starts (the items and judgment counts above are candidates)."""
    setting = PairSetting.parse(request.pairs, seed=request.pair_seed)
    items = [ex for ex in dataset.examples if parse_subset(subset)(ex)][: request.limit]
    try:
        plan = plan_pairs(items, setting)
    except ConfigError as exc:
        return Text(f"Pairwise: {exc}\n", style="yellow")
    variants = len(request.judges) * max(1, len(request.personas))
    text = Text("Pairwise: ")
    text.append(plan.describe(setting))
    text.append(f" × {variants} judge column{'s' if variants != 1 else ''} × {request.repeats} = "
                f"{len(plan.asked) * variants * request.repeats} judgments\n", style="bold")
    return text


def _integer(screen: RunScreen, input_id: str, what: str, minimum: int) -> int:
    text = screen.query_one(input_id, Input).value.strip()
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"{what} must be a whole number, not {text!r}") from None
    if value < minimum:
        raise ValueError(f"{what} must be at least {minimum}")
    return value


def _judge_label(judge: JudgeConfig) -> Content:
    # Content, not markup: a path or a model name may hold brackets.
    where = judge.model_path or judge.base_url or judge.model or ""
    detail = f"  {judge.backend}{' · ' + where if where else ''}"
    threads = local_threads(judge)
    if threads is not None:  # how fast a local judge can go depends on it
        detail += f" · {threads} thread{'s' if threads != 1 else ''}"
    return Content.assemble(judge.name, (detail, "dim"))


def template_text(template: Template | None, *, shipped: bool, overrides: bool = False) -> Text:
    """A template's name with its content hash, description, scale, modes and where it comes from."""
    if template is None:
        return Text("Reading the templates…", style="dim")
    text = Text(template.name, style="bold")
    text.append(f" #{template_text_hash(template.text)}", style="dim")
    text.append(f"\n{template.description}\n", style="")
    output = template.output
    text.append(f"output {output.kind.value} {output.min:g}-{output.max:g}; modes "
                f"{', '.join(m.value for m in output.modes)}; "
                f"{'takes' if template.accepts_examples else 'no'} few-shot examples\n", style="dim")
    text.append("shipped with dialjudge" if shipped else f"from {template.source}", style="dim")
    if overrides:
        text.append("\nyour override of the shipped template (Prompt lab: f4 reverts)", style="yellow")
    return text
