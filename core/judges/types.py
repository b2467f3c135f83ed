"""The contract between templates, backends, scoring and the run engine.

A template renders an :class:`Example` into a :class:`RenderedPrompt`; a
:class:`JudgeBackend` answers a :class:`JudgeRequest` with a
:class:`BackendResult` (raw text and/or log-probabilities); scoring turns that
into a :class:`Judgment`, which the run store keeps and the engine reports.
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Mapping, Protocol, runtime_checkable

from ..judge_config import Sampling
from .prompts.constraint import AnswerConstraint


class ScoringMode(str, enum.Enum):
    #: Generate text, then parse the score from the final answer.
    GENERATE = "generate"
    #: One forward pass; the distribution over the valid score strings at the
    #: answer position: restricted-softmax expected value, or paper 003's top-K
    #: log-probability weighting when ``top_k`` is set.
    LOGPROB = "logprob"
    #: One forward pass; p(yes) / (p(yes) + p(no)) (paper 003, DSTC10 prompt).
    YESNO = "yesno"


#: Below this probability on valid answers at the answer position, a probability-mode judgment
#: is a failure with the reason, never a score (per judge: ``options.min_valid_mass``).
DEFAULT_MIN_VALID_MASS = 0.5


class OutputKind(str, enum.Enum):
    CONTINUOUS = "continuous"  # e.g. 0-1 with decimals (paper 000)
    LIKERT = "likert"  # integer points, e.g. 1-5
    BINARY = "binary"  # 0/1
    YESNO = "yesno"  # "yes"/"no" answer
    JSON = "json"  # a JSON object carrying the score (InCA)
    #: One of a categorical quality's own labels (JUDGE-BENCH); the score is the label's position.
    LABEL = "label"
    #: A pairwise verdict on two candidates shown as A (first) and B (second). ``choices`` hold
    #: the verdict strings in a fixed order: first wins, second wins, and optionally a tie.
    #: The score is p(first wins): 1 for the first, 0 for the second, 0.5 for a tie.
    PAIRWISE = "pairwise"


#: The score of each pairwise verdict, in choice order: first wins, second wins, tie.
PAIRWISE_VERDICT_VALUES = (1.0, 0.0, 0.5)


@dataclass(frozen=True)
class OutputSpec:
    """What a template asks the model to output, and how to read it."""

    kind: OutputKind
    min: float = 0.0
    max: float = 1.0
    #: The answer strings probability modes weigh (e.g. "1".."5", "0"/"1",
    #: "0.0".."1.0", "yes"/"no"), in scale order.
    choices: tuple[str, ...] = ()
    #: For JSON output: the keys holding the score, the reasoning and relevancy.
    #: May contain ``{kpi}`` / ``{aspect}`` placeholders, filled at render time.
    score_key: str | None = None
    reasoning_key: str | None = None
    relevancy_key: str | None = None
    #: Text appended after the assistant turn starts, in probability modes, so
    #: the very next token is the answer (e.g. "Score:" or "Answer:").
    answer_prefix: str = ""
    modes: tuple[ScoringMode, ...] = (ScoringMode.GENERATE,)

    def normalize(self, value: float) -> float:
        return (value - self.min) / (self.max - self.min)

    def choice_values(self) -> list[float]:
        """The numeric value of each choice; yes=1, no=0; a label's position for label outputs."""
        if self.kind is OutputKind.LABEL:
            return [float(k) for k in range(len(self.choices))]
        if self.kind is OutputKind.PAIRWISE:
            return list(PAIRWISE_VERDICT_VALUES[:len(self.choices)])
        out = []
        for c in self.choices:
            low = c.strip().lower()
            if low == "yes":
                out.append(1.0)
            elif low == "no":
                out.append(0.0)
            else:
                out.append(float(c))
        return out


@dataclass(frozen=True)
class Message:
    role: str  # system | user | assistant
    content: str

    def to_dict(self) -> dict[str, str]:
        return {"role": self.role, "content": self.content}


@dataclass(frozen=True)
class RenderedPrompt:
    """The exact prompt sent for one item. Its hash keys the run store's cache."""

    messages: tuple[Message, ...]
    output: OutputSpec
    template_name: str = ""

    @property
    def text(self) -> str:
        return "\n\n".join(f"[{m.role}]\n{m.content}" for m in self.messages)

    @cached_property
    def hash(self) -> str:
        # Cached: a run asks for it several times an item (the cache key, the scoring, a fake judge's
        # answer), and each asking serialised and hashed the whole prompt again. The prompt is frozen.
        payload = json.dumps(
            {"messages": [m.to_dict() for m in self.messages], "answer_prefix": self.output.answer_prefix,
             "choices": list(self.output.choices)},
            ensure_ascii=False, sort_keys=True,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class JudgeRequest:
    item_id: str
    prompt: RenderedPrompt
    mode: ScoringMode
    sampling: Sampling
    #: Paper 003's K for top-K weighting; 0 means the restricted softmax over all choices.
    top_k: int = 3
    #: Stability repeats: repeat r uses seed sampling.seed + r.
    repeat: int = 0
    #: Generate mode: hold the output to the template's answer format (a grammar / JSON schema).
    constrain: AnswerConstraint = AnswerConstraint.OFF
    #: Probability modes: the least probability the valid answers must hold at the answer
    #: position for the judgment to be scored (scoring only; the answer does not depend on it).
    min_valid_mass: float = DEFAULT_MIN_VALID_MASS

    @property
    def seed(self) -> int:
        return self.sampling.seed + self.repeat

    def cache_key(self, model_identity: str) -> str:
        """Same model, same rendered prompt, same sampling, same mode -> same answer."""
        payload = json.dumps(
            {"model": model_identity, "prompt": self.prompt.hash, "mode": self.mode.value,
             "top_k": self.top_k, "sampling": self.sampling.to_dict(), "seed": self.seed,
             # Only when on, so that the keys of unconstrained answers cached before stay valid.
             **({"constrain": self.constrain.value} if self.constrain is not AnswerConstraint.OFF else {})},
            sort_keys=True,
        )
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()


@dataclass
class BackendResult:
    """What a backend returns for one request, before any parsing."""

    raw_output: str = ""
    #: Probability of each OutputSpec choice (normalised over the choices), probability modes.
    choice_probs: dict[str, float] | None = None
    #: The K most likely first answer tokens and their log-probabilities.
    top_logprobs: list[tuple[str, float]] | None = None
    prompt_tokens: int = 0
    #: Prompt tokens actually evaluated (fewer than prompt_tokens when a prefix was reused).
    evaluated_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    #: Probability modes: the probability the valid answers hold at the answer position, before
    #: ``choice_probs`` normalises it away (None: the backend did not measure it).
    valid_mass: float | None = None
    #: True when ``valid_mass`` is only a lower bound: it was read from a truncated top list
    #: (an API's top log-probabilities), where valid answers below the list cannot be seen.
    mass_is_lower_bound: bool = False


@dataclass
class Judgment:
    """One scored (or failed) request; what the run store keeps."""

    item_id: str
    judge: str
    mode: ScoringMode
    prompt_hash: str
    raw_output: str
    score: float | None  # on the template's scale; None = failed
    normalized: float | None  # 0-1
    error: str | None = None
    reasoning: str | None = None
    relevancy: str | None = None
    distribution: dict[str, float] | None = None
    latency_s: float = 0.0
    prompt_tokens: int = 0
    evaluated_tokens: int = 0
    completion_tokens: int = 0
    repeat: int = 0
    cached: bool = False
    sampling: Mapping[str, Any] = field(default_factory=dict)
    #: The backend's most likely first answer tokens, kept so the run can be rescored with another top-K.
    top_logprobs: list[tuple[str, float]] | None = None
    #: Probability modes: the probability the valid answers held at the answer position (see
    #: BackendResult.valid_mass), how many valid answers the top-K list showed, and whether the
    #: mass is a lower bound (valid answers may be missing from a truncated list).
    valid_mass: float | None = None
    valid_in_top: int | None = None
    mass_is_lower_bound: bool = False

    @property
    def failed(self) -> bool:
        return self.score is None


@runtime_checkable
class JudgeBackend(Protocol):
    """A model that can answer judge requests.

    ``identity`` names the model exactly (file hash or base URL + model name),
    so cached answers are only reused for the same model. Local backends are
    driven from one thread; ``max_concurrency`` tells the engine how many
    requests may be in flight at once.
    """

    name: str
    identity: str
    max_concurrency: int

    async def open(self) -> None: ...

    async def close(self) -> None: ...

    async def check_mode(self, mode: ScoringMode, top_k: int) -> None:
        """Raise BackendError up front when the backend cannot serve this mode."""
        ...

    async def complete(self, request: JudgeRequest) -> BackendResult: ...


@runtime_checkable
class CoreSharingBackend(Protocol):
    """A backend that computes on this machine's cores (a local model) and can leave some to other work.

    llama.cpp's threads spin while they wait for each other, so a model computing on every core beside
    another busy process slows both many times over (a 12-item run took over 200 s instead of 6 s beside a
    second model). The session tells its local judges how many cores its other work takes now (the app's
    compute process, while it computes); the judge uses the rest from its next evaluation on.
    """

    def share_cores(self, taken: int) -> None:
        """Other work takes ``taken`` cores from now on (0: none); any thread may call it."""
        ...


@runtime_checkable
class InterruptibleBackend(Protocol):
    """A backend whose request in flight can be stopped midway (a local model's evaluation).

    An async backend needs no such thing (cancelling its task stops its request); a model
    computing on a thread of its own would otherwise finish the request first, which on a busy
    CPU takes many seconds. The run engine calls :meth:`interrupt` when a run is cancelled and
    :meth:`clear_interrupt` when a run starts.
    """

    def interrupt(self) -> None:
        """Abort the request in flight and refuse the next ones (each raises
        :class:`~core.errors.RequestInterrupted`) until :meth:`clear_interrupt`. Any thread may call it."""
        ...

    def clear_interrupt(self) -> None:
        """Serve requests again."""
        ...
