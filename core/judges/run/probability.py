"""Per-judge settings of probability scoring, read from a judge's ``options`` table.

* ``min_valid_mass`` (0-1, default 0.5): the least probability the valid answers must hold at
  the answer position for a judgment to be scored (see core.judges.run.scoring).
* ``continuation`` (API judges): how the server is made to continue after the answer prefix
  (see core.judges.backends.openai_api): ``auto`` (detect), ``template`` (the completions
  endpoint with the model's chat template applied by dialjudge), ``continue`` (vLLM's
  ``continue_final_message``), ``prefill`` (a final assistant message the server continues),
  ``unprefixed`` (no continuation: only answers whose first token is a valid answer with
  enough probability are scored).
* ``chat_template`` (API judges): where the model's chat template is read: a GGUF file, a
  Hugging Face ``tokenizer_config.json``, or a Jinja file.

The config loader (core.config) validates these keys with messages that name them.
"""

from __future__ import annotations

from ...config import PROBABILITY_CONTINUATIONS as CONTINUATIONS
from ...judge_config import JudgeConfig
from ..prompts.constraint import AnswerConstraint
from ..types import DEFAULT_MIN_VALID_MASS, JudgeRequest, RenderedPrompt, ScoringMode
from .config import RunConfig

__all__ = ["CONTINUATIONS", "continuation", "judge_request", "mass_thresholds", "min_valid_mass"]


def min_valid_mass(config: JudgeConfig) -> float:
    value = config.extra.get("min_valid_mass", DEFAULT_MIN_VALID_MASS)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return DEFAULT_MIN_VALID_MASS  # the loader refuses such a value; a hand-built config falls back
    return float(value)


def continuation(config: JudgeConfig) -> str:
    value = config.extra.get("continuation", "auto")
    return value if value in CONTINUATIONS else "auto"


def judge_request(item_id: str, prompt: RenderedPrompt, judge: JudgeConfig, *, mode: ScoringMode, top_k: int,
                  constrain: AnswerConstraint = AnswerConstraint.OFF, repeat: int = 0) -> JudgeRequest:
    """The one request a judge is sent for an item: a run, a rescoring and the Prompt lab's trial all
    build it here, so the judge's own settings (its sampling, its valid-mass threshold) are the same
    wherever it is asked."""
    return JudgeRequest(item_id=item_id, prompt=prompt, mode=mode, sampling=judge.sampling, top_k=top_k,
                        repeat=repeat, constrain=constrain, min_valid_mass=min_valid_mass(judge))


def mass_thresholds(config: RunConfig) -> dict[str, float]:
    """Each judge column of a run (``judge`` or ``judge@persona``) with the least valid mass its
    judgments were scored from: what the review queue flags below."""
    return {variant.label: min_valid_mass(variant.judge.config) for variant in config.variants()}
