"""Judge backends, and the registry that knows them by the name a config gives (``backend = "..."``).

Each backend module registers itself (:func:`register_backend`) with what the rest
of dialjudge may ask about it: how to make one from a judge's configuration, the
keys its configuration needs, its context window, whether it runs on this machine
and whether it is paid per token. Nothing outside a backend's module and this
registry names a backend, so adding one is adding one module to this package.

The registry finds the backends by importing every module of this package the
first time it is asked (:func:`_discover`); the modules keep their heavy libraries
(``llama_cpp``, ``httpx``) inside functions, so that stays cheap.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...errors import ConfigError

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


_KINDS: dict[str, BackendKind] = {}
_discovered = False


def register_backend(kind: BackendKind) -> None:
    """Called once by each backend module, at its import."""
    known = _KINDS.get(kind.name)
    if known is not None and known != kind:
        raise ValueError(f"two judge backends are named {kind.name!r}")
    _KINDS[kind.name] = kind


def _discover() -> None:
    global _discovered
    if _discovered:
        return
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")  # a backend module registers itself
    _discovered = True


def backend_names() -> tuple[str, ...]:
    _discover()
    return tuple(sorted(_KINDS))


def backend_kind(name: str) -> BackendKind:
    """The registered backend of that name; ConfigError naming the known ones otherwise."""
    _discover()
    try:
        return _KINDS[name]
    except KeyError:
        raise ConfigError(f"unknown backend {name!r} (one of {', '.join(sorted(_KINDS))})") from None


def make_backend(config: JudgeConfig) -> JudgeBackend:
    """The backend a judge's configuration names (not opened yet)."""
    try:
        kind = backend_kind(config.backend)
    except ConfigError as exc:
        raise ConfigError(f"judge {config.name!r}: {exc}") from None
    return kind.create(config)


def model_file_backend() -> str:
    """The name of the backend that runs a local model file (the bundled judge's, too)."""
    _discover()
    names = [kind.name for kind in _KINDS.values() if kind.opens_model_files]
    if len(names) != 1:
        raise ConfigError(f"expected one backend that opens model files, found {names or 'none'}")
    return names[0]


def paid_per_token(name: str) -> bool:
    """Whether judgments of that backend cost money per token (False for a name no longer registered)."""
    _discover()
    kind = _KINDS.get(name)
    return kind is not None and kind.paid_per_token


def local_threads(config: JudgeConfig) -> int | None:
    """The CPU threads a judge computes with on this machine, or None where it does not run here."""
    kind = backend_kind(config.backend)
    return kind.threads(config) if kind.threads is not None else None
