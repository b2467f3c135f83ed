"""Tables that the modules of one package fill themselves: judge backends, dataset formats, metric
families.

Each module registers its entry when it is imported; the first lookup imports every module of
the package once. So adding a backend, a loader or a metric family is adding one module, and no
list elsewhere names it.
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path
from typing import Generic, TypeVar

Entry = TypeVar("Entry")


class SelfRegistry(Generic[Entry]):
    """``name -> entry`` for the modules in ``folder`` (the package ``package``)."""

    def __init__(self, what: str, package: str, folder: Path) -> None:
        #: What the entries are, for errors ("judge backends").
        self.what = what
        self._package = package
        self._folder = folder
        self._entries: dict[str, Entry] = {}
        self._discovered = False

    def register(self, name: str, entry: Entry) -> None:
        """Called once by each module, at its import; the same entry again is harmless."""
        known = self._entries.get(name)
        if known is not None and known != entry:
            raise ValueError(f"two {self.what} are named {name!r}")
        self._entries[name] = entry

    def entries(self) -> dict[str, Entry]:
        """Every registered entry, after importing the package's modules once."""
        if not self._discovered:
            for module in pkgutil.iter_modules([str(self._folder)]):
                importlib.import_module(f"{self._package}.{module.name}")  # the module registers itself
            self._discovered = True
        return self._entries
