"""Edit a judge template and see the exact prompt it gives for one item, as you type.

The template's TOML is edited in place; 0.3 s after the last keystroke the
prompt is rendered again on a worker (with the chosen aspect or KPI, persona
and few-shot examples). An error shows under the editor with its line and
column, and the last good prompt stays, dimmed. "Try on this item" asks the
chosen judge at once and shows its raw answer, the parsed score and, in
probability modes, the score distribution. Saving writes the template (or a
persona) to the user's folder; a shipped file is never written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.suggester import SuggestFromList
from textual.timer import Timer
from textual.widgets import Button, Header, Input, Label, Select, Static, TextArea

from dialjudge.core.api import JudgeConfig
from dialjudge.core.api.formatting import human_unit
from dialjudge.core.api.template_identity import (
    is_shipped_name,
    parse_template,
)
from dialjudge.core.api.types import (
    NO_PERSONA,
    AnswerConstraint,
    ScoringMode,
    default_scoring,
)

from ..controllers.lab import (
    PersonaSaved,
    PreviewRendered,
    PromptSetup,
    TemplateReverted,
    TemplateSaved,
    TrialFailed,
    TrialFinished,
)
from ..controllers.runs import JudgeChoices
from ..state import Change, WorkspaceChange
from ..widgets.app_footer import AppFooter
from ..widgets.judgment_view import JudgmentView
from ..widgets.prompt_preview import PromptPreview, render_template_error
from ..widgets.toml_editor import TomlEditor
from .base import WorkspaceScreen, no_dataset_text
from .dialogs import PersonaEditor
from .run import FEWSHOT_METHODS
from .save_template_dialog import SaveChoice, SaveTemplateDialog

if TYPE_CHECKING:
    from dialjudge.core.api.types import (
        Persona,
        Template,
    )
    from dialjudge.core.model import Example

#: Seconds of quiet typing after which the preview is rendered again.
PREVIEW_DELAY_S = 0.3
#: How "no persona" reads in the picker (its value is core's NO_PERSONA).
NO_PERSONA_LABEL = "(none)"


class PromptLabScreen(WorkspaceScreen):
    CSS_PATH = "prompt_lab.tcss"
    #: Not the editor: the screen keys (s, d, j, ...) would type into the template on arrival.
    AUTO_FOCUS = "#lab-preview"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("e", "focus_editor", "Edit template", tooltip="Put the cursor in the template (Tab leaves it)"),
        Binding("ctrl+t", "try_item", "Try on this item", tooltip="Ask the chosen judge about this item now"),
        Binding("ctrl+s", "save_template", "Save template", tooltip="Save to your template folder"),
        Binding("ctrl+n", "step_item(1)", "Next item"),
        Binding("ctrl+b", "step_item(-1)", "Previous item", show=False),
        Binding("f2", "edit_persona", "Edit persona"),
        Binding("f3", "new_persona", "New persona", show=False),
        Binding("f4", "revert_template", "Revert to shipped", tooltip="Put the shipped template back in place "
                "of your override (your file is kept, renamed)"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.example: Example | None = None
        self.generation = 0
        self._template_name: str | None = None
        #: Unsaved edits per template, so switching templates loses nothing.
        self._drafts: dict[str, str] = {}
        self._select_after_reload: tuple[str, str] | None = None
        self._timer: Timer | None = None
        self._last_error: Exception | None = None
        #: What the trial on show was asked with (None: no trial yet); another setting makes it stale.
        self._trial_key: tuple[object, ...] | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(classes="lab-toolbar"):
            yield Label("Template", classes="field-label")
            yield Select[str]([], prompt="template", allow_blank=True, id="lab-template", compact=True)
            yield Label("Aspect", classes="field-label", id="lab-target-label")
            yield Select[str]([], prompt="–", allow_blank=True, id="lab-target", compact=True)
            yield Label("Persona", classes="field-label")
            yield Select[str]([(NO_PERSONA_LABEL, NO_PERSONA)], value=NO_PERSONA, allow_blank=False, id="lab-persona",
                              compact=True)
            yield Label("Few-shot", classes="field-label")
            yield Select[str]([(m, m) for m in FEWSHOT_METHODS], value="none", allow_blank=False,
                              id="lab-fewshot", compact=True)
            yield Input("3", type="integer", id="lab-fewshot-k", compact=True)
        with Horizontal(classes="lab-toolbar"):
            yield Label("Item", classes="field-label")
            yield Input(placeholder="item id (ctrl+n / ctrl+b step)", id="lab-item", compact=True)
            yield Label("Judge", classes="field-label")
            yield Select[str]([], prompt="judge", allow_blank=True, id="lab-judge", compact=True)
            yield Label("Mode", classes="field-label")
            yield Select[str]([], prompt="mode", allow_blank=True, id="lab-mode", compact=True)
            # Its own group, docked right at 80 columns: the pickers beside it scroll, the buttons stay.
            with Horizontal(id="lab-buttons"):
                yield Button("Try (ctrl+t)", id="lab-try", variant="primary", compact=True)
                yield Button("Save (ctrl+s)", id="lab-save", compact=True)
                yield Button("Persona… (f2)", id="lab-persona-edit", compact=True)
        with Horizontal(id="lab-body"):
            with Vertical(id="lab-editor-pane"):
                yield Label("Template", classes="pane-title", id="lab-editor-title")
                yield TomlEditor(id="lab-editor")
                yield Static(id="lab-error")
            with Vertical(id="lab-side"):
                yield Label("Prompt preview", classes="pane-title", id="lab-preview-title")
                yield PromptPreview(id="lab-preview")
                yield Label("Trial", classes="pane-title", id="lab-trial-title")
                yield JudgmentView("Try the chosen judge on this item (ctrl+t).", id="lab-trial")
        yield AppFooter()

    @property
    def editor(self) -> TomlEditor:
        return self.query_one("#lab-editor", TomlEditor)

    def on_mount(self) -> None:
        judges = self.dj.services.judges()
        select = self.query_one("#lab-judge", Select)
        select.set_options([(j.name, j.name) for j in judges])
        if judges:
            select.value = judges[0].name
        self.dj.runs.judge_choices_changed.subscribe(self, self._choices_changed)
        if self.dj.runs.judge_choices is None:
            self.dj.runs.reload_judge_choices()
        else:
            self._choices_changed(self.dj.runs.judge_choices)

    def on_unmount(self) -> None:
        self.dj.lab.close_trial_judges()

    # -- following the app -----------------------------------------------------------------

    def workspace_changed(self, change: WorkspaceChange) -> None:
        if change.kind is Change.DATASET:
            dataset = self.dj.workspace.dataset
            item_input = self.query_one("#lab-item", Input)
            if dataset is None:
                self.query_one(JudgmentView).show_message(no_dataset_text(self.dj))
                return
            item_input.suggester = SuggestFromList([ex.id for ex in dataset.examples], case_sensitive=True)
            if self.example is None or self.example.id not in {ex.id for ex in dataset.examples}:
                selected = self.dj.workspace.selected_examples() or dataset.examples
                self._show_item(selected[0] if selected else None)

    def _choices_changed(self, choices: JudgeChoices) -> None:
        template_select = self.query_one("#lab-template", Select)
        persona_select = self.query_one("#lab-persona", Select)
        wanted_template = self._template_name
        wanted_persona = None if persona_select.is_blank() else str(persona_select.value)
        if self._select_after_reload is not None:
            kind, name = self._select_after_reload
            self._select_after_reload = None
            if kind == "template":
                wanted_template = name
            else:
                wanted_persona = name
        with self.prevent(Select.Changed):
            template_select.set_options([(choices.label(n), n) for n in sorted(choices.templates)])
            persona_select.set_options([(NO_PERSONA_LABEL, NO_PERSONA), *((n, n) for n in choices.personas)])
            persona_select.value = wanted_persona if wanted_persona in choices.personas else NO_PERSONA
        if wanted_template not in choices.templates:
            wanted_template = "likert-1to5" if "likert-1to5" in choices.templates else next(
                iter(sorted(choices.templates)), None)
        if wanted_template is not None:
            with self.prevent(Select.Changed):
                template_select.value = wanted_template
            self._open_template(wanted_template, reload=wanted_template != self._template_name)

    # -- the template and the settings -----------------------------------------------------

    @property
    def template(self) -> Template | None:
        choices = self.dj.runs.judge_choices
        if choices is None or self._template_name is None:
            return None
        return choices.templates.get(self._template_name)

    def _open_template(self, name: str, *, reload: bool = True) -> None:
        """Show template ``name`` in the editor (an unsaved draft of it, if there is one)."""
        if self._template_name is not None and self._template_name != name:
            self._keep_draft()
        self._template_name = name
        template = self.template
        if template is None:
            return
        if reload:
            with self.prevent(TextArea.Changed):
                self.editor.load_text(self._drafts.get(name, template.text))
        self._fill_template_choices(template)
        self._redraw_editor_title()
        self.refresh_preview()

    def _keep_draft(self) -> None:
        saved = self.template
        if saved is not None and self.editor.text != saved.text:
            self._drafts[saved.name] = self.editor.text
        elif saved is not None:
            self._drafts.pop(saved.name, None)

    def _fill_template_choices(self, template: Template) -> None:
        """Aspects or KPIs, and scoring modes, of the template as saved (an edit may add more)."""
        target = self.query_one("#lab-target", Select)
        mode = self.query_one("#lab-mode", Select)
        current_target = None if target.is_blank() else str(target.value)
        current_mode = None if mode.is_blank() else str(mode.value)
        names, kind = (list(template.kpis), "KPI") if template.kpis else (list(template.aspects), "Aspect")
        self.query_one("#lab-target-label", Label).update(kind)
        modes = [m.value for m in template.output.modes]
        with self.prevent(Select.Changed):
            target.set_options([(n, n) for n in names])
            if names:
                quality = self.dj.workspace.quality
                resolved = template.resolve_kpi(quality) if template.kpis else template.resolve_aspect(quality)
                target.value = (current_target if current_target in names
                                else resolved if resolved in names else names[0])
            mode.set_options([(m, m) for m in modes])
            # A run's default mode, so that "try it" scores as a run would.
            judge = self._chosen_judge()
            scoring = default_scoring(template, [judge] if judge is not None else [])
            mode.value = current_mode if current_mode in modes else scoring.mode.value
            accepts = template.accepts_examples
            self.query_one("#lab-fewshot", Select).disabled = not accepts
            self.query_one("#lab-fewshot-k", Input).disabled = not accepts
            if not accepts:
                self.query_one("#lab-fewshot", Select).value = "none"

    def _note_unsaved(self) -> None:
        """Tell the app which templates hold unsaved edits (``q`` asks before losing them)."""
        template = self.template
        names = set(self._drafts)
        if template is not None and self.editor.text != template.text:
            names.add(template.name)
        elif template is not None:
            names.discard(template.name)
        self.dj.lab.unsaved = tuple(sorted(names))

    def _chosen_judge(self) -> JudgeConfig | None:
        select = self.query_one("#lab-judge", Select)
        return None if select.is_blank() else {j.name: j for j in self.dj.services.judges()}.get(str(select.value))

    def _redraw_editor_title(self) -> None:
        self._note_unsaved()
        template = self.template
        title = Text("Template ", style="bold")
        if template is not None:
            title.append(template.name)
            if self.editor.text != template.text:
                title.append("  ● edited, not saved (ctrl+s)", style="yellow")
        self.query_one("#lab-editor-title", Label).update(title)

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "lab-template" and not event.select.is_blank():
            self._open_template(str(event.value))
        elif event.select.id != "lab-judge":
            self.refresh_preview()

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is self.editor:
            self._redraw_editor_title()
            self.refresh_preview(delay=PREVIEW_DELAY_S)

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "lab-fewshot-k":
            self.refresh_preview(delay=PREVIEW_DELAY_S)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "lab-item":
            return
        dataset = self.dj.workspace.dataset
        item_id = event.value.strip()
        if dataset is None or not item_id:
            return
        try:
            self._show_item(dataset.get(item_id))
        except KeyError:
            self.notify(f"{dataset.name} has no item {item_id!r}", severity="warning")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        actions = {"lab-try": self.action_try_item, "lab-save": self.action_save_template,
                   "lab-persona-edit": self.action_edit_persona}
        action = actions.get(event.button.id or "")
        if action is not None:
            action()

    def action_focus_editor(self) -> None:
        """Put the cursor in the template (Tab leaves it)."""
        self.editor.focus()

    def action_step_item(self, step: int) -> None:
        """Show the next (or previous) item of the current subset."""
        examples = self.dj.workspace.selected_examples()
        if not examples:
            return
        ids = [ex.id for ex in examples]
        here = ids.index(self.example.id) if self.example is not None and self.example.id in ids else -step
        self._show_item(examples[(here + step) % len(examples)])

    def _show_item(self, example: Example | None) -> None:
        self.example = example
        with self.prevent(Input.Changed):
            self.query_one("#lab-item", Input).value = example.id if example is not None else ""
        self.refresh_preview()

    # -- the preview -----------------------------------------------------------------------

    def setup(self) -> PromptSetup | None:
        """What the preview and a trial render, from the editor and the pickers."""
        dataset = self.dj.workspace.dataset
        template = self.template
        if dataset is None or self.example is None or template is None:
            return None
        target = self.query_one("#lab-target", Select)
        chosen = None if target.is_blank() else str(target.value)
        persona_select = self.query_one("#lab-persona", Select)
        persona_name = None if persona_select.is_blank() else str(persona_select.value)
        choices = self.dj.runs.judge_choices
        persona: Persona | None = None
        if choices is not None and persona_name is not None:
            persona = choices.personas.get(persona_name)
        method = str(self.query_one("#lab-fewshot", Select).value)
        k = self.query_one("#lab-fewshot-k", Input).value.strip() or "0"
        return PromptSetup(
            text=self.editor.text, dataset=dataset, example=self.example,
            aspect=None if template.kpis else chosen, kpi=chosen if template.kpis else None,
            persona=persona, fewshot="none" if method == "none" else f"{method}:{k}")

    def _setup_key(self) -> tuple[object, ...]:
        """Everything a trial's answer depends on, as the screen shows it now."""
        values = tuple(None if w.is_blank() else w.value for w in self.query(Select))
        return (self.editor.text, self.example.id if self.example else None, values,
                self.query_one("#lab-fewshot-k", Input).value)

    def _redraw_trial_title(self) -> None:
        stale = self._trial_key is not None and self._trial_key != self._setup_key()
        self.query_one("#lab-trial-title", Label).update(
            Text.assemble("Trial ", ("· stale: the template, item or settings changed since (ctrl+t asks again)",
                                     "yellow")) if stale else "Trial")

    def refresh_preview(self, *, delay: float = 0.0) -> None:
        """Render the prompt again, at once or after ``delay`` seconds without another change."""
        self._redraw_trial_title()
        self.generation += 1
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if delay > 0:
            self._timer = self.set_timer(delay, self._render_now, name="prompt preview")
        else:
            self._render_now()

    def _render_now(self) -> None:
        self._timer = None
        setup = self.setup()
        if setup is not None:
            self.dj.lab.render_preview(setup, self, generation=self.generation)

    def on_preview_rendered(self, message: PreviewRendered) -> None:
        if message.generation != self.generation:
            return  # the text changed again meanwhile
        preview = self.query_one(PromptPreview)
        error_box = self.query_one("#lab-error", Static)
        self._last_error = message.error
        if message.error is not None:
            error_box.update(render_template_error(message.error, self.editor.text))
            error_box.add_class("shown")
            preview.mark_stale()
            self.query_one("#lab-preview-title", Label).update(
                Text.assemble("Prompt preview ", ("· stale: the last good render; fix the error below", "yellow")))
            # The error box takes rows from the editor: keep the line being typed in view.
            self.call_after_refresh(self.editor.scroll_cursor_visible)
            return
        error_box.update("")
        error_box.remove_class("shown")
        self.query_one("#lab-preview-title", Label).update("Prompt preview")
        prepared = message.prepared
        assert prepared is not None and self.example is not None
        preview.show_prompt(prepared.prompt, item_id=self.example.id, shots=prepared.shots,
                            quality=prepared.quality, swapped=prepared.swapped)

    # -- trying a judge --------------------------------------------------------------------

    def action_try_item(self) -> None:
        """Ask the chosen judge about this item now."""
        setup = self.setup()
        judge_select = self.query_one("#lab-judge", Select)
        mode_select = self.query_one("#lab-mode", Select)
        if setup is None or judge_select.is_blank() or mode_select.is_blank():
            self.notify("Choose a template, an item and a judge first", severity="warning")
            return
        judges = {j.name: j for j in self.dj.services.judges()}
        judge = judges[str(judge_select.value)]
        mode = ScoringMode(str(mode_select.value))
        # In the judge's own mode for this template, also its constraint: the trial scores as a run would.
        default = default_scoring(self.template, [judge]) if self.template is not None else None
        constrain = default.constrain if default is not None and default.mode is mode else AnswerConstraint.OFF
        self.query_one(JudgmentView).show_message(f"Asking {judge.name} ({mode.value}) about {setup.example.id}…")
        self._trial_key = self._setup_key()
        self._redraw_trial_title()
        self.dj.lab.try_prompt(setup, judge, mode, self, constrain=constrain)

    def on_trial_finished(self, message: TrialFinished) -> None:
        dataset = self.dj.workspace.dataset
        human = None
        if dataset is not None and message.prepared.quality is not None:
            human = human_unit(dataset.get(message.judgment.item_id), dataset, message.prepared.quality)
        header = Text(f"{message.judge} on {message.judgment.item_id}", style="bold")
        if self.dj.services.show_timings:
            header.append(f" · answered in {message.seconds:.2f} s", style="dim")
        self.query_one(JudgmentView).show_judgments([message.judgment], human=human, header=header)

    def on_trial_failed(self, message: TrialFailed) -> None:
        self.query_one(JudgmentView).show_message(Text(f"{message.judge} failed: {message.error}", style="red"))

    # -- saving ----------------------------------------------------------------------------

    def action_save_template(self) -> None:
        """Save the template to your template folder; an edited shipped one is saved under a new name
        unless you choose to override it."""
        if self._last_error is not None:
            self.notify("Fix the template's error first (shown under the editor)", severity="warning")
            return
        text = self.editor.text
        try:
            name = parse_template(text, "prompt lab").name
        except Exception as exc:  # the preview shows the error with its position
            self.notify(str(exc), title="Cannot save", severity="warning", markup=False)
            return
        choices = self.dj.runs.judge_choices
        current = choices.templates.get(name) if choices is not None else None
        if not is_shipped_name(name) or (current is not None and current.text == text):
            self.dj.lab.save_template(text, self)
            return
        taken = set(choices.templates) if choices is not None else set()
        suggested, n = f"{name}-edit", 2
        while suggested in taken:
            suggested, n = f"{name}-edit{n}", n + 1

        def chosen(choice: SaveChoice | None) -> None:
            if choice is not None:
                self.dj.lab.save_template(text, self, name=choice.name)

        self.app.push_screen(SaveTemplateDialog(name, suggested), chosen)

    def action_revert_template(self) -> None:
        """Put the shipped template back in place of your override."""
        choices = self.dj.runs.judge_choices
        template = self.template
        if choices is None or template is None or template.name not in choices.overridden:
            self.notify("This template is no override of a shipped one: nothing to revert", severity="warning")
            return
        self.dj.lab.revert_template(template, self)

    def on_template_reverted(self, message: TemplateReverted) -> None:
        self._drafts.pop(message.name, None)
        self._select_after_reload = ("template", message.name)
        self._template_name = None  # reload the shipped text into the editor
        self.notify(f"{message.name} is the shipped template again; your version is kept as {message.kept}",
                    timeout=8, markup=False)
        self.dj.runs.reload_judge_choices()

    def on_template_saved(self, message: TemplateSaved) -> None:
        # The editor's text is now the saved template's; a draft it grew from is used up.
        self._drafts.pop(message.name, None)
        if self._template_name is not None:
            self._drafts.pop(self._template_name, None)
        self._select_after_reload = ("template", message.name)
        # Load the saved text (saved as a new name, its name line differs from the editor's).
        self._template_name = None
        note = "; it now takes the place of the shipped one (that file is unchanged)" if message.overrides_shipped else ""
        self.notify(f"Saved template {message.name} to {message.path}{note}", timeout=8)
        self.dj.runs.reload_judge_choices()

    def action_edit_persona(self) -> None:
        """Edit the chosen persona (or write a new one when none is chosen)."""
        choices = self.dj.runs.judge_choices
        select = self.query_one("#lab-persona", Select)
        name = None if select.is_blank() else str(select.value)
        persona = choices.personas.get(name) if choices is not None and name is not None else None
        self.app.push_screen(PersonaEditor(persona), self._persona_edited)

    def action_new_persona(self) -> None:
        """Write a new persona."""
        self.app.push_screen(PersonaEditor(None), self._persona_edited)

    def _persona_edited(self, persona: Persona | None) -> None:
        if persona is not None:
            self.dj.lab.save_persona(persona, self)

    def on_persona_saved(self, message: PersonaSaved) -> None:
        self._select_after_reload = ("persona", message.name)
        self.notify(f"Saved persona {message.name} to {message.path}", timeout=6)
        self.dj.runs.reload_judge_choices()
