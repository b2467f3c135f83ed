"""What reading the config may ask about the judge backends: their names, the keys a judge of each
must set, and which one opens a local model file.

The backends (``core.judges.backends``) sit above the config: they run the judges whose settings
it reads. So ``core.config`` asks here, and ``core/__init__.py``, which Python runs before any
module of core, tells this module who answers: the backend registry, whose modules are imported
when it is first asked, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class BackendRules:
    """The judge backends as a config file may name them."""

    #: Backend name -> configuration keys a judge of that backend must set (``judges.NAME.KEY``).
    required_keys: Mapping[str, tuple[str, ...]]
    #: The backend that runs a local model file (the bundled judge's).
    model_file_backend: str

    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.required_keys))


_answer: Callable[[], BackendRules] | None = None


def answer_backend_rules_with(answer: Callable[[], BackendRules]) -> None:
    """Called once, by ``core/__init__.py``, with the backend registry's answer."""
    global _answer
    _answer = answer


def backend_rules() -> BackendRules:
    if _answer is None:  # only if core/__init__.py stopped connecting the registry
        raise RuntimeError("no judge backend registry is connected (dialjudge/core/__init__.py connects it)")
    return _answer()
