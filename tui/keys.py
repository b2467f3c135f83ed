"""Every key of the app, grouped where it works: for the help screen and the command palette."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.binding import Binding, BindingType
from textual.screen import Screen

from .navigation import DESTINATIONS
from .widgets.virtual_table import VirtualTable

if TYPE_CHECKING:
    from textual.app import App

#: The help screen's keys (here, so the help lists itself without importing the help screen).
HELP_BINDINGS: list[BindingType] = [
    Binding("escape,q,question_mark", "dismiss", "Close help"),
]


@dataclass(frozen=True)
class KeySection:
    title: str
    bindings: tuple[Binding, ...]


def expand(bindings: Iterable[BindingType]) -> tuple[Binding, ...]:
    """BINDINGS as Binding objects, one per key."""
    return tuple(Binding.make_bindings(bindings))


def key_sections(app: App) -> list[KeySection]:
    """The app's keys (Textual's own included), each screen's, then those of tables and the help."""
    everywhere = [*merged_bindings(type(app)), *Screen.BINDINGS]
    if app.ENABLE_COMMAND_PALETTE:
        everywhere.append(Binding(app.COMMAND_PALETTE_BINDING, "app.command_palette", "Command palette"))
    sections = [KeySection("Everywhere", expand(everywhere))]
    for d in DESTINATIONS:
        sections.append(KeySection(f"{d.title} screen", expand(merged_bindings(d.screen, below=Screen))))
    sections.append(KeySection("Item tables", expand(VirtualTable.BINDINGS)))
    sections.append(KeySection("Help screen", expand(HELP_BINDINGS)))
    return [s for s in sections if s.bindings]


def merged_bindings(cls: type, *, below: type | None = None) -> list[BindingType]:
    """The BINDINGS of ``cls`` and its bases (those of ``below`` and its bases left out),
    without system bindings (Textual's own, which it hides from users)."""
    skip = set(below.__mro__) if below is not None else set()
    out: list[BindingType] = []
    for klass in reversed(cls.__mro__):
        if klass in skip:
            continue
        for binding in klass.__dict__.get("BINDINGS", []):
            if binding in out or (isinstance(binding, Binding) and binding.system):
                continue
            out.append(binding)
    return out


def key_display(app: App, binding: Binding) -> str:
    return binding.key_display or app.get_key_display(binding)
