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

from pathlib import Path
from typing import TYPE_CHECKING

from ...backend_rules import BackendRules
from ...errors import ConfigError
from ...self_registry import SelfRegistry
from .kind import BACKEND_KINDS, BackendKind, register_backend

if TYPE_CHECKING:
    from ...judge_config import JudgeConfig
    from ..types import JudgeBackend

__all__ = ["BackendKind", "backend_kind", "backend_names", "backend_rules", "local_threads", "make_backend",
           "model_file_backend", "paid_per_token", "register_backend"]

_KINDS: SelfRegistry[BackendKind] = SelfRegistry(BACKEND_KINDS, __name__, Path(__file__).parent)


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


def backend_rules() -> BackendRules:
    """What reading the config asks about the backends (core.backend_rules)."""
    kinds = _KINDS.entries()
    return BackendRules(required_keys={name: kind.required_keys for name, kind in kinds.items()},
                        model_file_backend=model_file_backend())
