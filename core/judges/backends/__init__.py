"""Judge backends: a local GGUF model, an OpenAI-compatible API, and a fake for tests.

Each module loads only when its backend is asked for, so ``llama_cpp`` and
``httpx`` stay out of a plain import of the package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import ConfigError

if TYPE_CHECKING:
    from ...config import JudgeConfig
    from ..types import JudgeBackend


def make_backend(config: "JudgeConfig") -> "JudgeBackend":
    """The backend a judge's configuration names (not opened yet)."""
    if config.backend == "llama":
        from .llama import LlamaBackend

        return LlamaBackend.from_config(config)
    if config.backend == "openai":
        from .openai_api import OpenAIBackend

        return OpenAIBackend(config)
    if config.backend == "fake":
        from .fake import FakeBackend

        return FakeBackend.from_config(config)
    raise ConfigError(f"judge {config.name!r}: unknown backend {config.backend!r} (llama, openai or fake)")
