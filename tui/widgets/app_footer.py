"""The app's footer: Textual's, made to fit its width instead of running off the edge ("p Pl").

Where every key does not fit, it steps down, each step only when the one before is not enough:
the footer turns compact, then the screen keys (s, d, p, ...) become one group ("sdpjlvut Screens"),
first as the normal footer and then compact, then descriptions shorten to their first words ("^t Try", "^s Save"; as many words as tell two
apart), then the screen's own keys drop from the end. "? Help" and "q Quit" always stay, and the help
lists every key with its full description, so no key is lost by leaving the footer.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

#: The group the screen keys are folded into where the footer is short of room.
SCREENS = Binding.Group("Screens", compact=True)
#: Actions that stay in the footer whatever its width: the way to every other key.
ALWAYS_SHOWN = frozenset({"help", "app.help", "quit", "app.quit"})
#: Columns the command palette's key takes on the right ("▏^p palette ").
PALETTE_WIDTH = 13


@dataclass(frozen=True)
class FooterEntry:
    """One footer item: a key with its description, or a group of keys under one label."""

    bindings: tuple[tuple[Binding, bool, str], ...]
    group: Binding.Group | None = None
    #: The description shown (None: the binding's own).
    short: str | None = None

    @property
    def description(self) -> str:
        if self.group is not None:
            return self.group.description
        return self.short if self.short is not None else self.bindings[0][0].description

    @property
    def kept(self) -> bool:
        return any(b.action in ALWAYS_SHOWN for b, _, _ in self.bindings)

    def width(self, key_display: dict[str, str], *, compact: bool) -> int:
        """Columns it takes (Textual's paddings and margins, normal or compact)."""
        keys = [key_display[b.key] for b, _, _ in self.bindings]
        if self.group is None:
            return len(keys[0]) + len(self.description) + (2 if compact else 3)
        if self.group.compact:
            return sum(len(k) for k in keys) + len(self.group.description) + 3
        return sum(len(k) + 2 for k in keys) + len(self.group.description) + 1


def is_screen_key(binding: Binding) -> bool:
    """A key that shows one of the app's screens (tui/navigation.py)."""
    return binding.action.startswith("app.go(")


def fit(entries: list[FooterEntry], width: int, key_display: dict[str, str]) -> tuple[list[FooterEntry], bool]:
    """The entries to show in ``width`` columns, and whether compact: see the module's docstring."""

    def total(chosen: list[FooterEntry], compact: bool) -> int:
        return sum(e.width(key_display, compact=compact) for e in chosen)

    folded = fold_screen_keys(entries)
    for chosen, compact in ((entries, False), (entries, True), (folded, False), (folded, True)):
        if total(chosen, compact) <= width:
            return chosen, compact
    shown = shortened(folded)
    while total(shown, True) > width:
        droppable = [i for i, e in enumerate(shown) if not e.kept and e.group is not SCREENS]
        if not droppable:
            break
        del shown[droppable[-1]]
    return shown, True


def fold_screen_keys(entries: list[FooterEntry]) -> list[FooterEntry]:
    """The screen keys as one group, where the first of them was."""
    screens = tuple(item for e in entries if e.group is None and is_screen_key(e.bindings[0][0])
                    for item in e.bindings)
    folded: list[FooterEntry] = []
    for entry in entries:
        if entry.group is None and is_screen_key(entry.bindings[0][0]):
            if not any(e.group is SCREENS for e in folded):
                folded.append(FooterEntry(screens, SCREENS))
        else:
            folded.append(entry)
    return folded


def shortened(entries: list[FooterEntry]) -> list[FooterEntry]:
    """Single keys described by their first word, or as many first words as tell them apart."""
    singles = [e for e in entries if e.group is None]
    words = {id(e): e.bindings[0][0].description.split() for e in singles}
    taken = {id(e): 1 for e in singles}
    while True:
        shown = {id(e): " ".join(words[id(e)][: taken[id(e)]]) for e in singles}
        clashes = [e for e in singles if list(shown.values()).count(shown[id(e)]) > 1
                   and taken[id(e)] < len(words[id(e)])]
        if not clashes:
            break
        for e in clashes:
            taken[id(e)] += 1
    return [replace(e, short=shown[id(e)]) if e.group is None else e for e in entries]


class AppFooter(Footer):
    """A footer that fits its width (see the module's docstring); it lays itself out again on a resize."""

    DEFAULT_CSS = """
    AppFooter.-compact FooterLabel {
        margin: 0 1 0 0;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._laid_out_for = -1

    def _width(self) -> int:
        return self.screen.size.width or self.app.size.width

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready and self._width() != self._laid_out_for:
            self.call_after_refresh(self.recompose)

    def compose(self) -> ComposeResult:
        if not self._bindings_ready:
            return
        active = self.screen.active_bindings
        by_action: dict[str, list[tuple[Binding, bool, str]]] = {}
        for _, binding, enabled, tooltip in active.values():
            if binding.show:
                by_action.setdefault(binding.action, []).append((binding, enabled, tooltip))
        entries: list[FooterEntry] = []
        for items in by_action.values():
            group = items[0][0].group
            if group is not None and entries and entries[-1].group is group:
                entries[-1] = FooterEntry((*entries[-1].bindings, items[0]), group)
            else:
                entries.append(FooterEntry((items[0],), group))
        # A group of one key reads as that key with its own description, as in Textual's footer.
        entries = [FooterEntry(e.bindings) if e.group is not None and len(e.bindings) == 1 else e
                   for e in entries]
        key_display = {b.key: self.app.get_key_display(b) for e in entries for b, _, _ in e.bindings}
        palette = self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE
        width = self._width()
        self._laid_out_for = width
        shown, compact = fit(entries, width - (PALETTE_WIDTH if palette else 0), key_display)
        self.compact = compact
        for entry in shown:
            yield from self._entry_widgets(entry, key_display)
        if palette:
            try:
                _node, binding, enabled, _tooltip = active[self.app.COMMAND_PALETTE_BINDING]
            except KeyError:
                return
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                            classes="-command-palette", disabled=not enabled,
                            tooltip=binding.tooltip or binding.description)

    def _entry_widgets(self, entry: FooterEntry, key_display: dict[str, str]) -> Iterator[Widget]:
        if entry.group is None:
            binding, enabled, tooltip = entry.bindings[0]
            yield FooterKey(binding.key, key_display[binding.key], entry.description, binding.action,
                            disabled=not enabled, tooltip=tooltip or binding.description
                            ).data_bind(compact=Footer.compact)
            return
        with KeyGroup(classes="-compact" if entry.group.compact else ""):
            for binding, enabled, tooltip in entry.bindings:
                yield FooterKey(binding.key, key_display[binding.key], "", binding.action, disabled=not enabled,
                                tooltip=tooltip or binding.description,
                                classes="-grouped").data_bind(compact=Footer.compact)
        yield FooterLabel(entry.group.description)
