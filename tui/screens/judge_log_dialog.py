"""The judge process's log: what the process that judges the app's runs, searches and trials wrote.

Its stdout and stderr go to a file (``logs/judge-*.log`` beside the run store), since the app's terminal is
the app's screen: a model library's messages, a traceback, the stack of a crash. Opened from the Run screen
(ctrl+l) or the command palette; it shows the log's end and its path, scrolls, and Esc closes it.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Label, Log, Static

from ..controllers.runs import JudgeLogRead
from ..host import dialjudge_app
from ..widgets.app_footer import AppFooter


class JudgeLogDialog(ModalScreen[None]):
    """The end of the judge process's log, with its path; arrows and PageUp/PageDown scroll it."""

    CSS_PATH = "judge_log_dialog.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", key_display="Esc"),
        Binding("r", "reload", "Read again", tooltip="Read the log's end again (the process may have written more)"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: The log shown (None until it was read; tests read it).
        self.log_read: JudgeLogRead | None = None

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label("The judge process's log", classes="dialog-title")
            yield Static("Reading the log…", id="judge-log-path", markup=False)
            yield Log(id="judge-log-lines", highlight=False)
        yield AppFooter()

    def on_mount(self) -> None:
        self.action_reload()
        self.query_one("#judge-log-lines", Log).focus()

    def on_judge_log_read(self, message: JudgeLogRead) -> None:
        message.stop()
        self.log_read = message
        log = message.log
        if log.path is None:
            where = ("No judge process has run yet: runs, tuning searches and Prompt lab trials start one, "
                     "and its output is kept in a log beside the run store.")
        else:
            shown = f"the last {len(log.lines)} lines" if log.cut else f"{len(log.lines)} lines"
            where = f"{log.path} ({shown})"
        self.query_one("#judge-log-path", Static).update(where)
        lines = self.query_one("#judge-log-lines", Log)
        lines.clear()
        lines.write_lines(log.lines)  # scrolls to the end: the newest lines show first

    def action_reload(self) -> None:
        """Read the log's end again."""
        dialjudge_app(self).runs.read_judge_log(self)

    def action_close(self) -> None:
        """Back to the screen below."""
        self.dismiss(None)
