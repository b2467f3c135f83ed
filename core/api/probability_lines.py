"""How much probability a stored run's answers put on valid answers, and how its API judges were
asked (core.judges.post_run.mass, core.judges.backends.openai_api): the lines `runs show` prints."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..judges.post_run.mass import run_mass_lines
from ..judges.store.run_store import RunStore
from ..judges.types import ScoringMode


def mass_lines(store: RunStore, run_id: int) -> dict[str, str]:
    """``{"valid mass (JUDGE)": summary}`` per judge that scored from probabilities (empty otherwise)."""
    config = store.runs.get_run(run_id).run_config
    top_k = config.top_k if config.mode is ScoringMode.LOGPROB else 0
    return run_mass_lines(store.judgments.iter_judgments(run_id), config.template_text, config.template, top_k=top_k)


def scoring_lines(environment: Mapping[str, Any]) -> dict[str, str]:
    """``{"JUDGE scored by": way}`` for each API judge of a probability run, as recorded when it started."""
    return {f"{name} scored by": str(info["scoring"])
            for name, info in dict(environment.get("judges") or {}).items()
            if isinstance(info, Mapping) and info.get("scoring")}
