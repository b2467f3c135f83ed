"""The command palette's dialjudge commands: go to any screen, or run any key's action by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.dom import DOMNode
from textual.screen import Screen

from .keys import expand, merged_bindings
from .navigation import DESTINATIONS


@dataclass(frozen=True)
class PaletteCommand:
    title: str
    help: str
    run: Callable[[], object]


class DialjudgeCommands(Provider):
    """Screens first, then the keys of the app and of the screen the palette was opened on."""

    def commands(self) -> list[PaletteCommand]:
        app = self.app
        out = [PaletteCommand(f"Go to {d.title}", f"{d.description} · key {d.key}", partial(app.switch_mode, d.mode))
               for d in DESTINATIONS]
        destinations = {d.binding().action for d in DESTINATIONS}
        screen = self.screen
        sources: list[tuple[DOMNode, list[Binding]]] = [
            (app, list(expand(merged_bindings(type(app))))),
            (screen, list(expand(merged_bindings(type(screen), below=Screen)))),
        ]
        seen: set[str] = set()
        for namespace, bindings in sources:
            for binding in bindings:
                if not binding.description or binding.action in destinations or binding.action in seen:
                    continue
                if not _enabled(namespace, binding.action):
                    continue
                seen.add(binding.action)
                key = binding.key_display or app.get_key_display(binding)
                out.append(PaletteCommand(
                    binding.description, f"{binding.tooltip or binding.description} · key {key}",
                    partial(app.run_action, binding.action, namespace)))
        return out

    async def discover(self) -> Hits:
        for command in self.commands():
            yield DiscoveryHit(command.title, command.run, help=command.help)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self.commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(score, matcher.highlight(command.title), command.run, text=command.title,
                          help=command.help)


def _enabled(namespace: object, action: str) -> bool:
    """Whether the action's owner allows it now (a cancel with no run is left out)."""
    name = action.split("(", 1)[0].rsplit(".", 1)[-1]
    check = getattr(namespace, "check_action", None)
    if check is None:
        return True
    return check(name, ()) is not False
