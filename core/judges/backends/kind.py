"""One kind of judge backend as the rest of dialjudge sees it (:class:`BackendKind`), and the table
each backend module registers its kind in (:func:`register_backend`).

Below the backend modules, which import it; the registry that imports them and answers lookups
is the package (``core/judges/backends/__init__.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ...self_registry import Registrations

if TYPE_CHECKING:
    from ...judge_config import JudgeConfig
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


BACKEND_KINDS: Registrations[BackendKind] = Registrations("judge backends")


def register_backend(kind: BackendKind) -> None:
    """Called once by each module of the package, at its import."""
    BACKEND_KINDS.register(kind.name, kind)
