"""Completes a file path as it is typed: the first entry of the folder that starts with the last part."""

from __future__ import annotations

import os
from pathlib import Path

from textual.suggester import Suggester

#: Files the loaders read; other files are still offered after these.
DATA_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv")


class PathSuggester(Suggester):
    """Suggests ``value`` extended to an existing path; folders end in a separator."""

    def __init__(self, *, base: Path | None = None) -> None:
        # The folder listing changes while the app runs, so suggestions are never cached.
        super().__init__(use_cache=False, case_sensitive=True)
        self.base = base

    async def get_suggestion(self, value: str) -> str | None:
        if not value:
            return None
        expanded = os.path.expanduser(value)
        folder, prefix = os.path.split(expanded)
        where = Path(folder) if folder else Path(".")
        if self.base is not None and not where.is_absolute():
            where = self.base / where
        try:
            entries = sorted(os.scandir(where), key=_order)
        except OSError:
            return None
        for entry in entries:
            if entry.name.startswith(prefix) and (prefix.startswith(".") or not entry.name.startswith(".")):
                completed = entry.name + (os.sep if _is_dir(entry) else "")
                if completed == prefix:
                    continue
                return value[: len(value) - len(prefix)] + completed
        return None


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _order(entry: os.DirEntry) -> tuple[int, str]:
    """Folders, then data files, then the rest; alphabetical within each."""
    if _is_dir(entry):
        return (0, entry.name)
    return (1 if entry.name.endswith(DATA_SUFFIXES) else 2, entry.name)
