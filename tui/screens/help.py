"""Every key of the app, where it works and what it does."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..keys import HELP_BINDINGS, key_display, key_sections


class HelpScreen(ModalScreen[None]):
    CSS_PATH = "help.tcss"
    BINDINGS: ClassVar[list[BindingType]] = HELP_BINDINGS

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(self._render_keys(), id="help-keys")

    def _render_keys(self) -> Group:
        parts: list = [Text("dialjudge keys", style="bold"),
                       Text("Everything here is also in the command palette (ctrl+p).", style="dim")]
        for section in key_sections(self.app):
            table = Table(box=None, padding=(0, 2), show_header=False, show_edge=False)
            table.add_column("key", style="bold cyan", no_wrap=True, min_width=12)
            table.add_column("what it does")
            # One row per action: a binding on several keys ("escape,q,?") lists its keys together.
            rows: dict[tuple[str, str], list[str]] = {}
            for binding in section.bindings:
                keys = rows.setdefault((binding.action, binding.description), [])
                shown = key_display(self.app, binding)
                if shown not in keys:
                    keys.append(shown)
            for (_, description), keys in rows.items():
                table.add_row(", ".join(keys), description)
            parts += [Text(""), Text(section.title, style="bold underline"), table]
        return Group(*parts)
