"""Judge backends, and the registry that knows them by the name a config gives (``backend = "..."``).

Each backend module registers itself (:func:`register_backend`) with what the rest
of dialjudge may ask about it: how to make one from a judge's configuration, the
keys its configuration needs, its context window, whether it runs on this machine
and whether it is paid per token. Nothing outside a backend's module and this
registry names a backend, so adding one is adding one module to this package.

The registry finds the backends by importing every module of this package the
first time it is asked (core.self_registry); the modules keep their heavy libraries
(``llama_cpp``, ``httpx``) inside functions, so that stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import ConfigError
from ...self_registry import SelfRegistry

if TYPE_CHECKING:
    from ...config import JudgeConfig
    from ..types import JudgeBackend


def _window_from_options(config: JudgeConfig) -> object:
    return config.extra.get("context_window")


@dataclass(frozen=True)
class BackendKind:
    """One kind of judge backend, as the rest of dialjudge sees it."""

    name: str
    #: A backend for one judge's configuration (not opened yet).
    create: Callable[[JudgeConfig], JudgeBackend]
    #: Configuration keys a judge of this backend must set (``judges.NAME.KEY``).
    required_keys: tuple[str, ...] = ()
    #: Paid per token (its judgments get an estimated price); otherwise it runs on this machine.
    paid_per_token: bool = False
    #: Opens a local model file (``model_path``): the backend a model file picked in the app gets.
    opens_model_files: bool = False
    #: The judge's context window in tokens as configured (the engine checks the value), or None.
    context_window: Callable[[JudgeConfig], object] = _window_from_options
    #: CPU threads a judge of this backend computes with, or None where it does not run here.
    threads: Callable[[JudgeConfig], int] | None = None


_KINDS: SelfRegistry[BackendKind] = SelfRegistry("judge backends", __name__, Path(__file__).parent)


def register_backend(kind: BackendKind) -> None:
    """Called once by each module of the package, at its import."""
    _KINDS.register(kind.name, kind)


def backend_names() -> tuple[str, ...]:
    return tuple(sorted(_KINDS.entries()))


def backend_kind(name: str) -> BackendKind:
    """The registered backend of that name; ConfigError naming the known ones otherwise."""
    try:
        return _KINDS.entries()[name]
    except KeyError:
        raise ConfigError(f"unknown backend {name!r} (one of {', '.join(sorted(_KINDS.entries()))})") from None


def make_backend(config: JudgeConfig) -> JudgeBackend:
    """The backend a judge's configuration names (not opened yet)."""
    try:
        kind = backend_kind(config.backend)
    except ConfigError as exc:
        raise ConfigError(f"judge {config.name!r}: {exc}") from None
    return kind.create(config)


def model_file_backend() -> str:
    """The name of the backend that runs a local model file (the bundled judge's, too)."""
    names = [kind.name for kind in _KINDS.entries().values() if kind.opens_model_files]
    if len(names) != 1:
        raise ConfigError(f"expected one backend that opens model files, found {names or 'none'}")
    return names[0]


def paid_per_token(name: str) -> bool:
    """Whether judgments of that backend cost money per token (False for a name no longer registered)."""
    kind = _KINDS.entries().get(name)
    return kind is not None and kind.paid_per_token


def local_threads(config: JudgeConfig) -> int | None:
    """The CPU threads a judge computes with on this machine, or None where it does not run here."""
    kind = backend_kind(config.backend)
    return kind.threads(config) if kind.threads is not None else None
