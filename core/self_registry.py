"""Tables that the modules of one package fill themselves: judge backends, dataset formats, metric
families.

Each module registers its entry when it is imported, in a :class:`Registrations` that sits beside
the entries' type; the first lookup, through a :class:`SelfRegistry` in the module that answers
lookups, imports every module of the package once. So adding a backend, a loader or a metric
family is adding one module, and no list elsewhere names it. The table and the lookups are two
modules so that no import circle runs through them: the members import the table, the lookups
import the members.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Generic, TypeVar

Entry = TypeVar("Entry")


class Registrations(Generic[Entry]):
    """``name -> entry`` as the modules of one package register them. It lives beside the entries'
    type, below those modules: they import it to register, and never the registry that imports them."""

    def __init__(self, what: str) -> None:
        #: What the entries are, for errors ("judge backends").
        self.what = what
        self._entries: dict[str, Entry] = {}

    def register(self, name: str, entry: Entry) -> None:
        """Called once by each module, at its import; the same entry again is harmless."""
        known = self._entries.get(name)
        if known is not None and known != entry:
            raise ValueError(f"two {self.what} are named {name!r}")
        self._entries[name] = entry

    def registered(self) -> dict[str, Entry]:
        """What is registered so far (the package's modules may not all be imported yet)."""
        return self._entries


class SelfRegistry(Generic[Entry]):
    """Every entry of ``registrations``, once the modules in ``folder`` (the package ``package``)
    have been imported. Made by the module that answers lookups, which no module of ``folder``
    imports: tests/import_graph.py counts the imports made here as that module's."""

    def __init__(self, registrations: Registrations[Entry], package: str, folder: Path) -> None:
        self.registrations = registrations
        self._package = package
        self._folder = folder
        self._discovered = False

    def entries(self) -> dict[str, Entry]:
        """Every registered entry, after importing the package's modules once."""
        if not self._discovered:
            for module in pkgutil.iter_modules([str(self._folder)]):
                importlib.import_module(f"{self._package}.{module.name}")  # the module registers itself
            self._discovered = True
        return self.registrations.registered()
