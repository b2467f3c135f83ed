"""Dataset names users can type: bundled samples, known files in data folders, any path.

``dialjudge metrics --dataset usr-topicalchat`` looks for ``usr/usr_topical_chat.json``
in every folder listed under ``[data] dirs`` of the config; ``sample`` is the
bundled illustrative set. A path always works too.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Iterable

from .config import Config, load_config, user_data_dir
from .errors import DataError
from .loaders import MAPPING_SUFFIX, ColumnMap, load_dataset, table_columns
from .loaders.column_map import parse_column_map
from .model import Dataset, Level

BUNDLED = {
    "sample": ("sample_dialogues.jsonl", "Illustrative English dialogues: open/closed-ended, adversarial candidates, 3 annotators"),
    "incar-kpi": ("sample_incar_kpi.jsonl", "Illustrative in-car assistant KPI set (InCA style): binary labels from 5 annotators"),
}


@dataclass(frozen=True)
class KnownFile:
    name: str
    relative: str  # path inside a data folder
    description: str
    level: Level | None = None  # keep only this level (FED has both)


KNOWN_FILES: tuple[KnownFile, ...] = (
    KnownFile("usr-topicalchat", "usr/usr_topical_chat.json", "USR Topical-Chat: 60 contexts x 6 responses, 3 annotators"),
    KnownFile("usr-personachat", "usr/usr_persona_chat.json", "USR PersonaChat: 60 contexts x 5 responses, 3 annotators"),
    KnownFile("fed", "fed/fed_data.json", "FED: turn- and dialog-level items, 5 annotators"),
    KnownFile("fed-turn", "fed/fed_data.json", "FED turn level: 375 responses, 9 qualities", Level.TURN),
    KnownFile("fed-dialog", "fed/fed_data.json", "FED dialog level: 125 dialogues, 11 qualities", Level.DIALOG),
    # KdConv has no ratings: it is the raw material of adversarial sets (`adversarial make`).
    *(KnownFile(f"kdconv-{domain}", f"kdconv/{domain}/test.json",
                f"KdConv {domain} test split (Chinese, knowledge triples; no ratings)")
      for domain in ("film", "music", "travel")),
)

DEFAULT_DATASET = "sample"
RECENT_LIMIT = 12


@dataclass(frozen=True)
class DatasetEntry:
    name: str
    path: Path | None
    origin: str  # bundled | data-folder | recent | file
    description: str = ""
    level: Level | None = None

    @property
    def available(self) -> bool:
        return self.path is not None and self.path.is_file()


def bundled_path(filename: str) -> Path:
    return Path(str(resources.files("dialjudge.datasets") / filename))


def list_datasets(config: Config | None = None) -> list[DatasetEntry]:
    """Every dataset the user can open by name, available or not."""
    config = config or load_config()
    out = [
        DatasetEntry(name, bundled_path(filename), "bundled", description)
        for name, (filename, description) in BUNDLED.items()
    ]
    for known in KNOWN_FILES:
        out.append(DatasetEntry(known.name, _find_in(config.data_dirs, known.relative), "data-folder",
                                known.description, known.level))
    named = {e.path for e in out if e.path}
    for path in recent_files():
        if path not in named:
            out.append(DatasetEntry(path.name, path, "recent", "recently opened"))
    return out


def resolve_dataset(name_or_path: str, config: Config | None = None) -> DatasetEntry:
    """A short name (bundled, known file) or a path. Raises DataError naming the choices."""
    config = config or load_config()
    entries = {e.name: e for e in list_datasets(config) if e.origin != "recent"}
    if name_or_path in entries:
        entry = entries[name_or_path]
        if not entry.available:
            known = next((k for k in KNOWN_FILES if k.name == name_or_path), None)
            where = ", ".join(str(d) for d in config.data_dirs) or "no data folder configured"
            hint = f" (looked for {known.relative} in: {where}; set [data] dirs in the config)" if known else ""
            raise DataError(f"dataset {name_or_path!r} is not available{hint}")
        return entry
    path = Path(name_or_path).expanduser()
    if path.is_file():
        return DatasetEntry(path.name, path.resolve(), "file")
    names = ", ".join(sorted(entries))
    raise DataError(f"no dataset named {name_or_path!r} and no such file (names: {names})")


def open_dataset(name_or_path: str, config: Config | None = None, *, remember: bool = True,
                 column_map: ColumnMap | None = None) -> Dataset:
    """Resolve and load a dataset; files opened by path are remembered as recent, with the column
    mapping they were read with, which opens them again when no mapping is given."""

    entry = resolve_dataset(name_or_path, config)
    assert entry.path is not None
    if column_map is not None and entry.origin != "file":
        raise DataError(f"a column mapping (--map) applies to a table file opened by its path, not to the "
                        f"{entry.origin} dataset {entry.name!r}")
    given = column_map
    if column_map is None:
        column_map = remembered_column_map(entry.path)
    dataset = load_dataset(entry.path, name=entry.name if entry.origin != "file" else None,
                           column_map=column_map)
    if entry.level is not None:
        dataset = dataset.subset((ex for ex in dataset if ex.level is entry.level), name=entry.name)
    if remember and entry.origin == "file":
        remember_recent(entry.path)
        if given is not None:
            remember_column_map(entry.path, given)
    return dataset


def _find_in(dirs: Iterable[Path], relative: str) -> Path | None:
    for root in dirs:
        candidate = root / relative
        if candidate.is_file():
            return candidate
    return None


def _recent_file() -> Path:
    return user_data_dir() / "recent.json"


def recent_files() -> list[Path]:
    try:
        raw = json.loads(_recent_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [Path(p) for p in raw if isinstance(p, str)]


def remember_recent(path: Path) -> None:
    path = path.resolve()
    items = [p for p in recent_files() if p != path]
    items.insert(0, path)
    target = _recent_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps([str(p) for p in items[:RECENT_LIMIT]], indent=1), encoding="utf-8")
    tmp.replace(target)


def _column_maps_file() -> Path:
    return user_data_dir() / "column_maps.json"


def _column_maps() -> dict[str, list[str]]:
    try:
        raw = json.loads(_column_maps_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(raw, dict):
        return {}
    return {k: v for k, v in raw.items()
            if isinstance(k, str) and isinstance(v, list) and all(isinstance(i, str) for i in v)}


def remember_column_map(path: Path, column_map: ColumnMap) -> None:
    """Keep the mapping a file was opened with (for the recently opened files only)."""
    path = path.resolve()
    recent = {str(p) for p in recent_files()}
    maps = {k: v for k, v in _column_maps().items() if k in recent}
    maps[str(path)] = column_map.as_text()
    target = _column_maps_file()
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(maps, indent=1, ensure_ascii=False), encoding="utf-8")
    tmp.replace(target)


def remembered_column_map(path: Path) -> ColumnMap | None:
    """The mapping the file was last opened with, while every column it names is still in the file
    (a file rewritten since is read as it is now, not with a stale mapping) and no TOML mapping was
    written beside it since (that one is the user's latest word)."""
    items = _column_maps().get(str(path.resolve()))
    if not items or path.with_name(path.stem + MAPPING_SUFFIX).is_file():
        return None
    try:
        column_map = parse_column_map(items)
        columns = set(table_columns(path))
    except DataError:
        return None
    return column_map if set(column_map.columns) <= columns else None
