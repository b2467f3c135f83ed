"""The session: what every use case works with, opened once by each front end.

A :class:`Session` holds the user's configuration, where the run store lives and
how a judge's backend is made. The command line opens one per invocation, the
app one for its lifetime (tests open theirs on a temporary store and a fake
judge). Use cases take the session and open what they need from it: a front end
never constructs a store, an engine or a backend itself, so a later change of
where judgments are kept or how a judge is reached (another process, a batch
engine) is made here and in the use cases, not in two front ends.

A store connection is opened per use case, on the thread that runs it (SQLite
connections are cheap and a worker thread of the app must not share the UI
thread's); :func:`uses_store` turns a function of an open store into a use case of
the session.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from ..config import Config, JudgeConfig, load_config
from ..judges.backends import make_backend
from ..judges.run.config import RunConfig
from ..judges.store.run_store import RunStore
from ..judges.types import JudgeBackend
from .runs import build_backends

BackendFactory = Callable[[JudgeConfig], JudgeBackend]

P = ParamSpec("P")
R = TypeVar("R")


class Session:
    """The configuration, the run store's place and the backend factory every use case shares."""

    def __init__(self, config: Config | None = None, *, store_path: Path | str | None = None,
                 backend_factory: BackendFactory | None = None, config_path: Path | None = None) -> None:
        # The config file is read when a use case first needs it, not when the session opens:
        # a command that never reads it (listing the bundled sets) does not fail on a bad file.
        self._config = config
        self._config_path = config_path
        #: None: the user's default store, resolved when it is opened ($DIALJUDGE_DATA_DIR may change).
        self.store_path = Path(store_path) if store_path is not None else None
        self._backend_factory = backend_factory if backend_factory is not None else make_backend

    @property
    def config(self) -> Config:
        """The user's configuration (read from the config file the first time it is asked for)."""
        if self._config is None:
            self._config = load_config(self._config_path)
        return self._config

    def with_store_at(self, path: Path | str) -> Session:
        """The same session with its run store in ``path``."""
        return Session(self._config, store_path=path, backend_factory=self._backend_factory,
                       config_path=self._config_path)

    def with_config(self, config: Config) -> Session:
        """The same session (store, backend factory) on ``config``."""
        return Session(config, store_path=self.store_path, backend_factory=self._backend_factory)

    def with_backend_factory(self, factory: BackendFactory) -> Session:
        """The same session making judges' backends with ``factory`` (tests: a fake judge)."""
        return Session(self._config, store_path=self.store_path, backend_factory=factory,
                       config_path=self._config_path)

    # -- what the use cases open -------------------------------------------------------------

    def open_store(self) -> RunStore:
        """A new connection to the run store, for a use case that holds it across calls; it closes it."""
        return RunStore(self.store_path)

    @contextmanager
    def store(self) -> Iterator[RunStore]:
        """A connection to the run store for the duration of one use case."""
        store = self.open_store()
        try:
            yield store
        finally:
            store.close()

    @property
    def backends_from_registry(self) -> bool:
        """Whether judges' backends are made from their configuration by the backend registry (which any
        process can do: a run may go to a worker process), not by a factory of this process (a test's)."""
        return self._backend_factory is make_backend

    def make_backend(self, judge: JudgeConfig) -> JudgeBackend:
        """The backend ``judge`` names (not opened yet)."""
        return self._backend_factory(judge)

    def backends_for(self, run_config: RunConfig) -> dict[str, JudgeBackend]:
        """One (unopened) backend per judge of a run."""
        return build_backends(run_config, self.make_backend)

    def judges(self) -> list[JudgeConfig]:
        """The judges a run may use, the bundled one first."""
        return list(self.config.judges.values())


def uses_store(function: Callable[Concatenate[RunStore, P], R]) -> Callable[Concatenate[Session, P], R]:
    """The use case of a session that runs ``function`` on a store connection of its own."""

    @functools.wraps(function)
    def use_case(session: Session, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with session.store() as store:
            return function(store, *args, **kwargs)

    # What help() and the docs show: the session in the store's place (not the wrapped signature).
    signature = inspect.signature(function)
    rest = list(signature.parameters.values())[1:]
    session_parameter = inspect.Parameter("session", inspect.Parameter.POSITIONAL_ONLY, annotation=Session)
    use_case.__signature__ = signature.replace(parameters=[session_parameter, *rest])  # type: ignore[attr-defined]
    return use_case


__all__ = ["BackendFactory", "Session", "uses_store"]
