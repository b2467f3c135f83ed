"""What the app needs from the outside world, handed to it through ``make_app``.

Tests build a :class:`Services` with a fake judge backend, temporary folders
and settings that keep them fast and their screenshots stable; the real app
uses :meth:`Services.default`. Nothing here runs at import time.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dialjudge.core.api import (
    ColumnMap,
    Config,
    DatasetEntry,
    JudgeBackend,
    JudgeConfig,
    RunStore,
    list_datasets,
    load_config,
    make_backend,
    open_dataset,
)
from dialjudge.core.model import Dataset


@dataclass
class Services:
    config: Config
    #: Open a dataset by short name or path (remembers files opened by path); called with
    #: ``column_map=`` only when the user gave one (the column dialog).
    open_dataset: Callable[..., Dataset]
    #: Every dataset the Datasets screen offers: bundled, in data folders, recent.
    list_datasets: Callable[[], list[DatasetEntry]]
    #: A new connection to the run store; the caller closes it.
    open_store: Callable[[], RunStore]
    #: The backend a judge's configuration names (not opened yet).
    make_backend: Callable[[JudgeConfig], JudgeBackend]
    clock: Callable[[], float] = time.monotonic
    #: Reference-based metrics to compute (None: all of them).
    metric_ids: tuple[str, ...] | None = None
    #: Processes for metric scoring; 1 keeps the work on the worker thread.
    metric_workers: int = 1
    #: Bootstrap resamples behind the correlation panel's confidence intervals.
    n_boot: int = 1000
    seed: int = 0
    #: Seconds between redraws of live statistics (4 per second).
    redraw_interval_s: float = 0.25
    #: Seconds between full statistics refreshes (with CIs) while judgments arrive.
    stats_interval_s: float = 2.0
    #: Show rates and remaining time of runs; snapshot tests turn it off.
    show_timings: bool = True

    @classmethod
    def default(cls, config: Config | None = None, **overrides: Any) -> Services:
        """Services on the user's config file, data folders and run store."""
        config = config if config is not None else load_config()
        services = cls(
            config=config,
            open_dataset=lambda name, column_map=None: _open_dataset(name, config, column_map),
            list_datasets=lambda: _list_datasets(config),
            open_store=_default_store,
            make_backend=_make_backend,
        )
        return dataclasses.replace(services, **overrides) if overrides else services

    def with_store_at(self, path: Path) -> Services:
        """The same services with the run store in ``path``."""
        return dataclasses.replace(self, open_store=lambda: _store_at(path))

    def judges(self) -> list[JudgeConfig]:
        """The judges a run may use, the bundled one first."""
        return list(self.config.judges.values())


def _open_dataset(name: str, config: Config, column_map: ColumnMap | None) -> Dataset:
    return open_dataset(name, config, column_map=column_map)


def _list_datasets(config: Config) -> list[DatasetEntry]:
    return list_datasets(config)


def _default_store() -> RunStore:
    return RunStore()


def _store_at(path: Path) -> RunStore:
    return RunStore(path)


def _make_backend(config: JudgeConfig) -> JudgeBackend:
    # The llama backend's heavy import waits inside its own module until a local judge is opened.
    return make_backend(config)
