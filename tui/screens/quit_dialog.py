"""Asked before ``q`` quits with a run in progress or unsaved Prompt lab edits, and on launch when the last
run was left unfinished."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label, Static

if TYPE_CHECKING:
    from dialjudge.core.api import RunRecord


class QuitDialog(ModalScreen[bool]):
    """Quit, cancelling what runs and losing unsaved edits (Enter or y), or stay (Esc or n)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Quit"),
        Binding("n,escape", "answer(False)", "Stay", key_display="Esc"),
    ]

    def __init__(self, running: str | None, *, unsaved: str | None = None) -> None:
        """``running``: what a quit cancels; ``unsaved``: the edits it loses (each in words, None: none)."""
        super().__init__()
        self.running = running
        self.unsaved = unsaved

    def compose(self) -> ComposeResult:
        paragraphs = []
        if self.running is not None:
            paragraphs.append(
                f"{self.running[0].upper()}{self.running[1:]} is in progress. Quitting cancels it the way Esc "
                "does: every judgment stored so far stays, requests in flight are dropped, and the next "
                "launch offers to resume it.")
        if self.unsaved is not None:
            paragraphs.append(f"{self.unsaved[0].upper()}{self.unsaved[1:]}: quitting loses them. To keep them, "
                              "stay and save (ctrl+s in the Prompt lab).")
        with Vertical(classes="dialog"):
            yield Label("Quit dialjudge?", classes="dialog-title")
            yield Static("\n".join(paragraphs), classes="dialog-text", id="quit-text", markup=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Quit (Enter, y)", id="quit", variant="error")
                yield Button("Stay (Esc, n)", id="stay")

    def on_mount(self) -> None:
        self.query_one("#quit", Button).focus()  # Enter confirms

    def action_answer(self, quit_now: bool) -> None:
        """Answer the question."""
        self.dismiss(quit_now)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "quit")



class InterruptedRunDialog(ModalScreen[bool]):
    """The newest run on this dataset was left unfinished: resume it now (Enter, r), or not now (Esc)."""

    CSS_PATH = "dialogs.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "answer(True)", "Resume it"),
        Binding("escape", "answer(False)", "Not now", key_display="Esc"),
    ]

    def __init__(self, record: RunRecord) -> None:
        super().__init__()
        self.record = record

    def compose(self) -> ComposeResult:
        r = self.record
        config = r.run_config
        with Vertical(classes="dialog"):
            yield Label(f"Resume run {r.id}?", classes="dialog-title")
            yield Static(
                f"Run {r.id} ({config.label}) was {'cancelled' if r.status == 'cancelled' else 'cut off'} "
                f"at {r.judgments} of {r.total} judgments"
                + (f", {r.failures} failed" if r.failures else "")
                + f" after {r.wall_s:.1f} s.\n"
                "Resuming asks only for the judgments still missing. Not now: the Run screen offers it again "
                "when you start the same settings.", classes="dialog-text", id="interrupted-text")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"Resume run {r.id} (Enter, r)", id="resume", variant="primary")
                yield Button("Not now (Esc)", id="later")

    def on_mount(self) -> None:
        self.query_one("#resume", Button).focus()

    def action_answer(self, resume: bool) -> None:
        """Answer the question."""
        self.dismiss(resume)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.dismiss(event.button.id == "resume")
