"""The settings of one judge (:class:`JudgeConfig`) and the sampling it asks with (:class:`Sampling`).

Plain values with no behaviour beyond the data, so that every module that runs, scores or stores
judgments can take them without reading the config file: ``core.config`` reads and checks the
file into these, the judges below it only receive them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Sampling:
    """Sampling parameters; recorded with every judgment."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 256
    presence_penalty: float = 0.0
    frequency_penalty: float = 0.0
    seed: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "presence_penalty": self.presence_penalty,
            "frequency_penalty": self.frequency_penalty,
            "seed": self.seed,
        }


#: Named sampling presets. ``liu2023`` is the ChatGPT setting of Liu et al., "Evaluate What You
#: Can't Evaluate: Unassessable Generated Responses Quality", section 4.2.
SAMPLING_PRESETS: dict[str, Sampling] = {
    "greedy": Sampling(),
    "liu2023": Sampling(temperature=0.7, presence_penalty=0.0, frequency_penalty=0.2, max_tokens=1024),
}
#: Earlier names of presets, still accepted in config files.
PRESET_ALIASES = {"paper000": "liu2023"}


@dataclass(frozen=True)
class JudgeConfig:
    name: str
    backend: str  # llama | openai | fake
    model: str = ""  # API model name; for llama, a label (defaults to the file name)
    model_path: str | None = None  # llama: .gguf path; None means the bundled model
    #: llama: threads for generation; None = every core this process may use.
    n_threads: int | None = None
    #: llama: threads for prompt processing; None = as n_threads.
    n_threads_batch: int | None = None
    #: llama: layers offloaded to the GPU (-1 = all); None = all where the build can offload, else 0.
    n_gpu_layers: int | None = None
    n_ctx: int = 4096
    base_url: str | None = None
    api_key_env: str | None = None  # the *name* of the variable; the key itself is never stored
    endpoint: str = "chat"
    concurrency: int = 4
    timeout: float = 120.0
    max_retries: int = 4
    sampling: Sampling = Sampling()
    extra: Mapping[str, Any] = field(default_factory=dict)

    def api_key(self) -> str | None:
        return os.environ.get(self.api_key_env) if self.api_key_env else None
