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
    JudgeConfig,
    Session,
    list_datasets,
    open_dataset,
)
from dialjudge.core.api.types import BackendFactory
from dialjudge.core.model import Dataset


@dataclass
class Services:
    #: The application layer's session: the configuration, the run store and the backend factory.
    session: Session
    #: Open a dataset by short name or path (remembers files opened by path); called with
    #: ``column_map=`` only when the user gave one (the column dialog).
    open_dataset: Callable[..., Dataset]
    #: Every dataset the Datasets screen offers: bundled, in data folders, recent.
    list_datasets: Callable[[], list[DatasetEntry]]
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
    def default(cls, config: Config | None = None, *, make_backend: BackendFactory | None = None,
                **overrides: Any) -> Services:
        """Services on the user's config file, data folders and run store (``make_backend``: the
        judges' backends, tests give a fake)."""
        session = Session(config, backend_factory=make_backend)
        session.config  # noqa: B018 (read now: a bad config file is reported when the app starts, not later)
        services = cls(
            session=session,
            open_dataset=lambda name, column_map=None: _open_dataset(name, session.config, column_map),
            list_datasets=lambda: _list_datasets(session.config),
        )
        return dataclasses.replace(services, **overrides) if overrides else services

    def with_store_at(self, path: Path) -> Services:
        """The same services with the run store in ``path``."""
        return dataclasses.replace(self, session=self.session.with_store_at(path))

    def with_config(self, config: Config) -> Services:
        """The same services with the session on ``config`` (judges, templates; datasets open as before)."""
        return dataclasses.replace(self, session=self.session.with_config(config))

    def with_backend_factory(self, make_backend: BackendFactory) -> Services:
        """The same services making the judges' backends with ``make_backend`` (tests: a fake judge)."""
        return dataclasses.replace(self, session=self.session.with_backend_factory(make_backend))

    @property
    def config(self) -> Config:
        """The user's configuration (the session's)."""
        return self.session.config

    def judges(self) -> list[JudgeConfig]:
        """The judges a run may use, the bundled one first."""
        return self.session.judges()


def _open_dataset(name: str, config: Config, column_map: ColumnMap | None) -> Dataset:
    return open_dataset(name, config, column_map=column_map)


def _list_datasets(config: Config) -> list[DatasetEntry]:
    return list_datasets(config)
