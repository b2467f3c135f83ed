"""A deterministic judge with no model, for tests of the engine, the store and the TUI.

Scores come from a stable hash of (item, prompt, seed), or from ``score_fn`` when
a test needs known values. Every mode is served:

* generate: text the parser reads ("Score: 4", a JSON object, or "yes"/"no");
* logprob: ``choice_probs`` whose expected value is the score (mass split
  between the two choices around it) and matching ``top_logprobs``;
* yesno: p(yes) = the score's position on the template's scale.

Failures can be injected (every Nth request raises :class:`BackendError`, or
returns unparseable text), and each request can await a test-supplied
``delay(request)`` so tests control timing without sleeping; ``open_delay()`` is
awaited when the judge opens, standing in for a model that takes long to load.

A *simulated* judge (``options.agreement`` in the config, with the ``dataset`` and
``quality`` whose human labels it imitates) agrees with the humans to a set degree,
so the app and the CLI can be tried with a "good" and a "bad" judge without a model.
Its latent score is a z + sqrt(1 - a^2) e: z the normal score of the item's pooled
human label (its rank among the dataset's labels), e a seeded normal draw per item,
prompt and seed, and a = 2 sin(pi agreement / 6), so that the population Spearman
correlation of the latent score with z is ``agreement`` (for bivariate normals,
rho_s = (6 / pi) asin(r / 2)); the answer is that score mapped onto the template's
scale by the normal CDF, which keeps the ranks. Ties among the human labels make
the observed correlation a little lower. Its identity, and so every judgment's
record, says "simulated".

``options.correction_gain`` g (dialjudge align's simulated judge) raises that agreement to
``agreement + g × m`` where m is the share of the few-shot examples in the prompt that *match*:
an example is a dataset item whose response text (20 characters or more, found once in the
dataset) appears in the prompt, other than the judged item's own; it matches when the first
number after its response is its pooled human label on the template's scale (nearest point),
i.e. when the correction shown agrees with the humans. Corrections that carry no information
(labels unrelated to the humans) match only by chance, and a prompt with no examples gains
nothing.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import re
import time
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Awaitable, Callable, Iterable, Mapping

from ...dataset_catalogue import open_dataset
from ...errors import BackendError, ConfigError
from ...judge_config import JudgeConfig
from ...model import Aggregation
from ...stats.human import human_labels
from ..types import BackendResult, JudgeRequest, OutputKind, OutputSpec, ScoringMode
from .answers import answer_choices, normalize_answer, top_logprobs_count
from .kind import BackendKind, register_backend

ScoreFn = Callable[[str, str], float]
#: The first number after a few-shot example's response: the rating shown with it.
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
Delay = Callable[[JudgeRequest], Awaitable[None]]

#: Text a fake judge returns when a request is made to fail parsing.
GARBAGE_OUTPUT = "I cannot decide on this one."


def _sleeping(seconds: float) -> Delay:
    async def delay(request: JudgeRequest) -> None:
        await asyncio.sleep(seconds)

    return delay


def _opening(seconds: float) -> Callable[[], Awaitable[None]]:
    async def load() -> None:
        await asyncio.sleep(seconds)

    return load


@dataclass
class FakeBackend:
    """A judge backend that answers instantly and reproducibly.

    ``score_fn(item_id, prompt_text)`` gives the score on the template's scale
    (for yesno: p(yes), 0-1). ``fail_every=N`` makes requests N, 2N, ... raise;
    ``garbage_every=N`` makes them return text no parser can read (and no
    probabilities). ``unsupported_modes`` makes :meth:`check_mode` refuse those
    modes, like an API without log-probabilities.
    """

    name: str = "fake"
    score_fn: ScoreFn | None = None
    fail_every: int = 0
    garbage_every: int = 0
    delay: Delay | None = None
    #: Awaited by :meth:`open`, like a model loading (None: opens at once).
    open_delay: Callable[[], Awaitable[None]] | None = None
    max_concurrency: int = 4
    unsupported_modes: tuple[ScoringMode, ...] = ()
    identity: str = ""
    #: Simulated judge: the Spearman correlation with the human labels it aims at (None: plain fake).
    agreement: float | None = None
    #: Simulated judge: item id -> pooled human label; or loaded at open() from ``label_source``.
    labels: Mapping[str, float] | None = None
    #: Simulated judge: (dataset name or path, quality) whose labels are loaded at open().
    label_source: tuple[str, str] | None = None
    #: Simulated judge: agreement gained when every few-shot example shown matches the humans (see the note).
    correction_gain: float = 0.0
    #: Simulated judge with a gain: item id -> response text (loaded at open() from ``label_source``).
    responses: Mapping[str, str] | None = None
    #: Simulated judge with a gain: the human labels' scale (min, max), to show a label on a template's scale.
    label_scale: tuple[float, float] | None = None
    #: Every request received, in arrival order (failed ones included).
    requests: list[JudgeRequest] = field(default_factory=list)
    opened: int = 0
    closed: int = 0

    def __post_init__(self) -> None:
        if self.agreement is not None and not 0.0 <= self.agreement < 1.0:
            raise BackendError(f"judge {self.name!r}: agreement must be at least 0 and below 1, not {self.agreement}")
        if self.correction_gain and (self.agreement is None or not 0.0 <= self.agreement + self.correction_gain < 1.0
                                     or self.correction_gain < 0):
            raise BackendError(f"judge {self.name!r}: correction_gain needs an agreement, and agreement + "
                               f"correction_gain must lie in [0, 1), not {self.correction_gain}")
        if not self.identity:
            self.identity = f"fake:{self.name}"
        if self.agreement is not None and not self.identity.startswith("simulated"):
            source = f":{self.label_source[0]}:{self.label_source[1]}" if self.label_source else ""
            gain = f",correction_gain={self.correction_gain:g}" if self.correction_gain else ""
            self.identity = f"simulated(agreement={self.agreement:g}{gain}{source}):{self.identity}"
        self._normal_scores: dict[str, float] | None = None
        self._texts: dict[str, str] | None = None

    @property
    def description(self) -> str:
        if self.agreement is None:
            return f"fake judge {self.name!r} (hash scores, unrelated to the humans)"
        on = f" on {self.label_source[1]} of {self.label_source[0]}" if self.label_source else ""
        return (f"simulated judge {self.name!r}: no model, Spearman ≈ {self.agreement:g} with the human "
                f"labels{on} by construction")

    @classmethod
    def from_config(cls, config: JudgeConfig) -> "FakeBackend":
        """A fake judge from a config file: ``options`` may set fail_every, garbage_every,
        delay_s (seconds each answer takes, to try cancelling and quitting as with a slow model) and
        load_delay_s (seconds opening it takes, as a local model's loading does)."""
        options = dict(config.extra)
        counts = {}
        for key in ("fail_every", "garbage_every"):
            value = options.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise BackendError(f"judge {config.name!r}: options.{key} must be a whole number >= 0")
            counts[key] = value
        delays = {}
        for key in ("delay_s", "load_delay_s"):
            value = options.get(key, 0)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 3600:
                raise BackendError(f"judge {config.name!r}: options.{key} must be a number of seconds from 0 to 3600")
            delays[key] = float(value)
        agreement, source = _simulation_options(config.name, options)
        gain = _correction_gain(config.name, options, agreement)
        return cls(name=config.name, max_concurrency=config.concurrency,
                   identity=f"fake:{config.name}:{config.model}",
                   fail_every=counts["fail_every"], garbage_every=counts["garbage_every"],
                   delay=_sleeping(delays["delay_s"]) if delays["delay_s"] else None,
                   open_delay=_opening(delays["load_delay_s"]) if delays["load_delay_s"] else None,
                   agreement=agreement, label_source=source, correction_gain=gain)

    async def open(self) -> None:
        self.opened += 1
        if self.open_delay is not None and self.opened == 1:  # a model loads once, as llama's does
            await self.open_delay()
        if self.agreement is not None and self.labels is None and self.label_source is not None:
            self.labels = _load_labels(*self.label_source)
        if self.correction_gain and self.responses is None and self.label_source is not None:
            self.responses, self.label_scale = _load_responses(*self.label_source)

    async def close(self) -> None:
        self.closed += 1

    async def check_mode(self, mode: ScoringMode, top_k: int) -> None:
        if mode in self.unsupported_modes:
            raise BackendError(f"judge {self.name!r} cannot serve mode {mode.value} (fake backend configured so)")

    async def complete(self, request: JudgeRequest) -> BackendResult:
        self.requests.append(request)
        number = len(self.requests)
        started = time.perf_counter()
        if self.delay is not None:
            await self.delay(request)
        if self.fail_every and number % self.fail_every == 0:
            raise BackendError(f"judge {self.name!r}: injected failure on request {number} ({request.item_id})")

        prompt_tokens = len(request.prompt.text.split())
        if self.garbage_every and number % self.garbage_every == 0:
            result = BackendResult(raw_output=GARBAGE_OUTPUT)
        else:
            score = self._score(request)
            result = self._answer(request, score)
        result.prompt_tokens = prompt_tokens
        result.evaluated_tokens = prompt_tokens
        result.completion_tokens = len(result.raw_output.split())
        result.latency_s = time.perf_counter() - started
        return result

    # -- scores -------------------------------------------------------------

    def _score(self, request: JudgeRequest) -> float:
        spec = request.prompt.output
        low, high = _scale(spec, request.mode)
        if self.score_fn is not None:
            value = float(self.score_fn(request.item_id, request.prompt.text))
            if not math.isfinite(value):
                raise BackendError(f"fake judge {self.name!r}: score_fn gave {value} for {request.item_id}")
            return value
        if self.agreement is not None:
            return low + self._simulated_unit(request) * (high - low)
        unit = _unit_hash(request.item_id, request.prompt.hash, str(request.seed))
        return low + unit * (high - low)

    def _simulated_unit(self, request: JudgeRequest) -> float:
        """The simulated judge's score as a position 0-1 on the scale (see the module note)."""
        assert self.agreement is not None
        if self.labels is None:
            raise BackendError(f"simulated judge {self.name!r} has no human labels to agree with "
                               "(set options.dataset and options.quality)")
        if self._normal_scores is None:
            self._normal_scores = _normal_scores(self.labels)
        normal = NormalDist()
        agreement = self.agreement + (self.correction_gain * self._matching_share(request)
                                      if self.correction_gain else 0.0)
        a = 2.0 * math.sin(math.pi * agreement / 6.0)
        noise = normal.inv_cdf(_open_unit(_unit_hash("simulated", self.name, request.item_id, request.prompt.hash,
                                                     str(request.seed))))
        z = self._normal_scores.get(request.item_id)
        latent = noise if z is None else a * z + math.sqrt(1.0 - a * a) * noise
        return normal.cdf(latent)

    def _matching_share(self, request: JudgeRequest) -> float:
        """The share of the prompt's few-shot examples whose shown rating is their human label (module note)."""
        if not self.responses or not self.labels or self.label_scale is None:
            return 0.0
        if self._texts is None:
            counts: dict[str, int] = {}
            for text in self.responses.values():
                counts[text] = counts.get(text, 0) + 1
            self._texts = {text: item for item, text in self.responses.items()
                           if len(text) >= 20 and counts[text] == 1 and item in self.labels}
        prompt = "\n".join(m.content for m in request.prompt.messages)
        own = self.responses.get(request.item_id)
        spec = request.prompt.output
        low, high = self.label_scale
        shown = matched = 0
        for text, item in self._texts.items():
            if item == request.item_id or text == own:
                continue
            at = prompt.find(text)
            if at < 0:
                continue
            number = _NUMBER.search(prompt, at + len(text))
            if number is None:
                continue
            shown += 1
            unit = (self.labels[item] - low) / (high - low) if high > low else 0.0
            target = spec.min + min(1.0, max(0.0, unit)) * (spec.max - spec.min)
            points = spec.choice_values() if spec.choices else []
            expected = min(points, key=lambda c: (round(abs(c - target), 9), -c)) if points else target
            matched += abs(float(number.group()) - expected) < (0.5 if points else 0.125 * (spec.max - spec.min))
        return matched / shown if shown else 0.0

    def _answer(self, request: JudgeRequest, score: float) -> BackendResult:
        spec = request.prompt.output
        if request.mode is ScoringMode.GENERATE:
            return BackendResult(raw_output=_generated_text(spec, score))
        choices = answer_choices(spec, request.mode)
        if request.mode is ScoringMode.YESNO:
            p_yes = min(max(score, 0.0), 1.0)
            probs = {c: (p_yes if normalize_answer(c) == "yes" else 1.0 - p_yes) for c in choices}
        else:
            probs = _split_between_neighbours(choices, OutputSpec(spec.kind, choices=choices).choice_values(), score)
        ranked = sorted(probs.items(), key=lambda kv: -kv[1])
        top = [(c, math.log(p)) for c, p in ranked if p > 0]
        # Pad with tokens that are no rating, as a real model's top list has.
        filler = iter(("The", " I", "\n", " The", "**", " Score"))
        while len(top) < top_logprobs_count(request.top_k):
            top.append((next(filler), math.log(1e-6)))
        raw = ranked[0][0]
        # The fake puts all its probability on valid answers (its filler tokens get about none).
        return BackendResult(raw_output=raw, choice_probs=probs, top_logprobs=top[: top_logprobs_count(request.top_k)],
                             valid_mass=1.0)


def _simulation_options(name: str, options: Mapping[str, object]) -> tuple[float | None, tuple[str, str] | None]:
    """options.agreement (0 <= a < 1), with options.dataset and options.quality, for a simulated judge."""
    if "agreement" not in options:
        for key in ("dataset", "quality"):
            if key in options:
                raise ConfigError(f"judge {name!r}: options.{key} is only for a simulated judge (set options.agreement)")
        return None, None
    value = options["agreement"]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= float(value) < 1.0:
        raise ConfigError(f"judge {name!r}: options.agreement must be a number from 0 up to (not including) 1, "
                          f"not {value!r}")
    source = []
    for key in ("dataset", "quality"):
        text = options.get(key)
        if not isinstance(text, str) or not text:
            raise ConfigError(f"judge {name!r}: options.{key} is required with options.agreement (the human "
                              "labels the simulated judge agrees with)")
        source.append(text)
    return float(value), (source[0], source[1])


def _correction_gain(name: str, options: Mapping[str, object], agreement: float | None) -> float:
    """options.correction_gain: only for a simulated judge; agreement + gain below 1."""
    if "correction_gain" not in options:
        return 0.0
    value = options["correction_gain"]
    if agreement is None:
        raise ConfigError(f"judge {name!r}: options.correction_gain is only for a simulated judge (set options.agreement)")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= agreement + float(value) < 1.0 \
            or float(value) < 0:
        raise ConfigError(f"judge {name!r}: options.correction_gain must be a number from 0 with agreement + "
                          f"correction_gain below 1, not {value!r}")
    return float(value)


def _load_responses(dataset: str, quality: str) -> tuple[dict[str, str], tuple[float, float]]:
    """Each item's response text, and the quality's scale (min, max), for the correction gain."""
    data = open_dataset(dataset, remember=False)
    scale = data.qualities.get(quality)
    if scale is None or scale.min is None or scale.max is None:
        raise BackendError(f"simulated judge: {quality!r} of {data.name!r} has no numeric scale to show labels on")
    return ({ex.id: ex.candidate for ex in data.examples if ex.candidate}, (float(scale.min), float(scale.max)))


def _load_labels(dataset: str, quality: str) -> dict[str, float]:
    """Pooled (mean) human labels of ``quality`` in ``dataset``, by item id."""
    data = open_dataset(dataset, remember=False)
    if quality not in data.qualities:
        raise BackendError(f"simulated judge: dataset {data.name!r} has no quality {quality!r} "
                           f"(it has {', '.join(data.qualities) or 'none'})")
    values = human_labels(data.examples, quality, Aggregation.MEAN).values
    return {item: float(v) for item, v in values.items() if v is not None and math.isfinite(float(v))}


def _normal_scores(labels: Mapping[str, float]) -> dict[str, float]:
    """Each label's normal score: the normal quantile of its mid-rank (ties share one)."""
    ordered = sorted(labels.values())
    n = len(ordered)
    first: dict[float, int] = {}
    count: dict[float, int] = {}
    for position, value in enumerate(ordered):
        first.setdefault(value, position)
        count[value] = count.get(value, 0) + 1
    normal = NormalDist()
    quantile = {v: normal.inv_cdf((first[v] + (count[v] + 1) / 2.0 - 0.5) / n) for v in first}
    return {item: quantile[value] for item, value in labels.items()}


def _open_unit(u: float) -> float:
    return min(max(u, 1e-12), 1.0 - 1e-12)


def _scale(spec: OutputSpec, mode: ScoringMode) -> tuple[float, float]:
    if mode is ScoringMode.YESNO:
        return 0.0, 1.0
    return spec.min, spec.max


def _unit_hash(*parts: str) -> float:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _split_between_neighbours(choices: Iterable[str], values: list[float], score: float) -> dict[str, float]:
    """Mass on the two choices around ``score`` so that the expected value is ``score``."""
    pairs = sorted(zip(values, choices))
    probs = {c: 0.0 for _, c in pairs}
    if score <= pairs[0][0]:
        probs[pairs[0][1]] = 1.0
        return probs
    if score >= pairs[-1][0]:
        probs[pairs[-1][1]] = 1.0
        return probs
    for (v_low, c_low), (v_high, c_high) in zip(pairs, pairs[1:]):
        if v_low <= score <= v_high:
            upper = (score - v_low) / (v_high - v_low)
            probs[c_low] = 1.0 - upper
            probs[c_high] = upper
            break
    return probs


def _generated_text(spec: OutputSpec, score: float) -> str:
    """What a well-behaved judge writes: a discrete scale's answer is its nearest choice."""
    if spec.kind is not OutputKind.CONTINUOUS and spec.choices:
        pairs = list(zip(spec.choice_values(), spec.choices))
        value, label = min(pairs, key=lambda pair: (abs(pair[0] - score), pair[0]))
    else:
        value, label = round(score, 4), f"{score:.2f}"
    if spec.kind is OutputKind.JSON:
        payload: dict[str, object] = {}
        if spec.reasoning_key:
            payload[spec.reasoning_key] = "The fake judge weighed the response."
        payload[spec.score_key or "score"] = int(value) if float(value).is_integer() else value
        return json.dumps(payload)
    if spec.kind is OutputKind.YESNO:
        if not spec.choices:
            return "yes" if score >= (spec.min + spec.max) / 2 else "no"
        return label
    return f"The fake judge weighed the response.\nScore: {label}"


register_backend(BackendKind(name="fake", create=FakeBackend.from_config))
