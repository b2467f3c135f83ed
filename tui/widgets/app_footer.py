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
from difflib import SequenceMatcher
from typing import Any

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

#: The group the screen keys are folded into where the footer is short of room.
SCREENS = Binding.Group("Screens", compact=True)
#: Actions that stay in the footer whatever its width: the way to every other key.
ALWAYS_SHOWN = frozenset({"help", "app.help", "quit", "app.quit"})
#: Keys that come and go with a run (Esc's "Cancel run"). Where room for them only makes the footer compact,
#: it is compact already, so that one appearing or going mounts or removes that key alone and the others stay
#: where they were (re-laying every key took 50-60 ms of the UI thread as a run started).
RESERVED_ACTIONS = frozenset({"cancel_run"})
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


def total_width(entries: list[FooterEntry], key_display: dict[str, str], *, compact: bool) -> int:
    return sum(e.width(key_display, compact=compact) for e in entries)


def layout_mode(entries: list[FooterEntry], width: int, key_display: dict[str, str]) -> tuple[bool, bool] | None:
    """(screen keys folded, compact): the first step of the module's docstring where every key fits whole;
    None where descriptions must shorten."""
    folded = fold_screen_keys(entries)
    for fold, compact in ((False, False), (False, True), (True, False), (True, True)):
        if total_width(folded if fold else entries, key_display, compact=compact) <= width:
            return fold, compact
    return None


def fit(entries: list[FooterEntry], width: int, key_display: dict[str, str], *,
        mode: tuple[bool, bool] | None = None) -> tuple[list[FooterEntry], bool]:
    """The entries to show in ``width`` columns, and whether compact: see the module's docstring. ``mode``:
    the step to take where it fits (the one found for more keys than these)."""
    mode = mode or layout_mode(entries, width, key_display)
    folded = fold_screen_keys(entries)
    if mode is not None:
        fold, compact = mode
        return (folded if fold else entries), compact
    shown = shortened(folded)
    while total_width(shown, key_display, compact=True) > width:
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
    """A footer that fits its width (see the module's docstring); it lays itself out again on a resize.

    When the bindings change it patches its keys where it can instead of rebuilding them all (Textual's
    footer recomposes at every change): a key turning on or off is restyled, a key that comes or goes
    (Esc's "Cancel run" as a run starts and ends) is mounted or removed alone. Rebuilding every key took
    50-60 ms of the UI thread on the Scores screen; it remains for anything else (a width that needs a
    more compact layout, a group that changes).
    """

    DEFAULT_CSS = """
    AppFooter.-compact FooterLabel {
        margin: 0 1 0 0;
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._laid_out_for = -1
        #: The entries on show, and the widgets that draw each (one key, or a group's keys and its label).
        self._shown: list[tuple[FooterEntry, list[Widget]]] = []

    def _width(self) -> int:
        return self.screen.size.width or self.app.size.width

    def on_resize(self, event: events.Resize) -> None:
        if self._bindings_ready and self._width() != self._laid_out_for:
            self.call_after_refresh(self.recompose)

    def bindings_changed(self, screen: Screen[Any]) -> None:
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen:
            self.call_after_refresh(self._bindings_changed)

    def _bindings_changed(self) -> None:
        if not self.is_attached:
            return
        plan = self._plan()
        if plan is None or not self._patch(*plan):
            self.call_later(self.recompose)

    def _plan(self) -> tuple[list[FooterEntry], bool, dict[str, str]] | None:
        """The entries to show, whether compact, and each key's display (None: no bindings yet)."""
        if not self._bindings_ready:
            return None
        by_action: dict[str, list[tuple[Binding, bool, str]]] = {}
        for _, binding, enabled, tooltip in self.screen.active_bindings.values():
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
        width = self._width() - (PALETTE_WIDTH if self._palette_shown() else 0)
        # A reserved key whose key another binding shows now (a dialog's Esc) is not coming.
        reserved = [FooterEntry(((b, True, ""),)) for b in self.app.BINDINGS
                    if isinstance(b, Binding) and b.action in RESERVED_ACTIONS and b.show and b.key not in key_display]
        mode = None
        if reserved:
            with_reserved = layout_mode(entries + reserved, width, key_display | {
                b.key: self.app.get_key_display(b) for e in reserved for b, _, _ in e.bindings})
            without = layout_mode(entries, width, key_display)
            # Only where room for them costs no more than compactness: folding the screen keys, or shortening
            # descriptions, for a key that is not on show would hide more than it keeps still.
            if with_reserved is not None and without is not None and with_reserved[0] == without[0]:
                mode = with_reserved
        shown, compact = fit(entries, width, key_display, mode=mode)
        return shown, compact, key_display

    def _palette_shown(self) -> bool:
        return self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE

    def compose(self) -> ComposeResult:
        self._shown = []
        plan = self._plan()
        if plan is None:
            return
        shown, compact, key_display = plan
        self._laid_out_for = self._width()
        self.compact = compact
        for entry in shown:
            widgets = list(self._entry_widgets(entry, key_display))
            self._shown.append((entry, widgets))
            yield from widgets
        if self._palette_shown():
            try:
                _node, binding, enabled, _tooltip = self.screen.active_bindings[self.app.COMMAND_PALETTE_BINDING]
            except KeyError:
                return
            yield FooterKey(binding.key, self.app.get_key_display(binding), binding.description, binding.action,
                            classes="-command-palette", disabled=not enabled,
                            tooltip=binding.tooltip or binding.description)

    def _patch(self, shown: list[FooterEntry], compact: bool, key_display: dict[str, str]) -> bool:
        """Bring the keys on show to ``shown`` without rebuilding them; False where only a rebuild can."""
        if compact != self.compact or self._width() != self._laid_out_for:
            return False
        old = [entry_identity(entry) for entry, _ in self._shown]
        new = [entry_identity(entry) for entry in shown]
        edits = SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes()
        changed = [(tag, i1, i2, j1, j2) for tag, i1, i2, j1, j2 in edits if tag != "equal"]
        if any(tag == "replace" for tag, *_ in changed):
            return False
        if any(entry.group is not None for tag, i1, i2, j1, j2 in changed
               for entry in (shown[j1:j2] if tag == "insert" else [e for e, _ in self._shown[i1:i2]])):
            return False
        patched: list[tuple[FooterEntry, list[Widget]]] = []
        for tag, i1, i2, j1, j2 in edits:
            if tag == "equal":
                for (_, widgets), entry in zip(self._shown[i1:i2], shown[j1:j2], strict=True):
                    _restyle(widgets, entry)
                    patched.append((entry, widgets))
            elif tag == "delete":
                for _, widgets in self._shown[i1:i2]:
                    for widget in widgets:
                        widget.remove()
            else:  # insert, before the next entry that stays (or after the last)
                following = next((widgets[0] for _, widgets in self._shown[i2:] if widgets), None)
                for entry in shown[j1:j2]:
                    widgets = list(self._entry_widgets(entry, key_display))
                    if following is not None:
                        self.mount(*widgets, before=following)
                    else:
                        self.mount(*widgets, after=self._shown[-1][1][-1] if self._shown else None)
                    patched.append((entry, widgets))
        self._shown = patched
        return True

    def _entry_widgets(self, entry: FooterEntry, key_display: dict[str, str]) -> Iterator[Widget]:
        if entry.group is None:
            binding, enabled, tooltip = entry.bindings[0]
            yield self._key(FooterKey(binding.key, key_display[binding.key], entry.description, binding.action,
                                      disabled=not enabled, tooltip=tooltip or binding.description))
            return
        keys = [self._key(FooterKey(binding.key, key_display[binding.key], "", binding.action, disabled=not enabled,
                                    tooltip=tooltip or binding.description, classes="-grouped"))
                for binding, enabled, tooltip in entry.bindings]
        yield KeyGroup(*keys, classes="-compact" if entry.group.compact else "")
        yield FooterLabel(entry.group.description)

    def _key(self, key: FooterKey) -> FooterKey:
        """A key drawn as compact as the footer (set here, not bound: a key is mounted later alone)."""
        key.set_reactive(FooterKey.compact, self.compact)
        key.set_class(self.compact, "-compact", update=False)
        return key


def entry_identity(entry: FooterEntry) -> tuple[object, ...]:
    """What decides an entry's widgets apart from whether its keys are on: keys, actions and words."""
    return (tuple((b.key, b.action) for b, _, _ in entry.bindings), entry.group, entry.description)


def _restyle(widgets: list[Widget], entry: FooterEntry) -> None:
    """Turn an entry's keys on or off as its bindings now are."""
    keys = [w for w in widgets if isinstance(w, FooterKey)] or [
        k for w in widgets if isinstance(w, KeyGroup) for k in w.query_children(FooterKey)]
    for key, (binding, enabled, tooltip) in zip(keys, entry.bindings, strict=False):
        # Textual's FooterKey draws "off" with a class and acts on its own flag (not Widget.disabled).
        key._disabled = not enabled
        key.set_class(not enabled, "-disabled")
        key.tooltip = tooltip or binding.description
