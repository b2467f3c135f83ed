"""Turn a backend's answer into a score: parse text, or weigh answer probabilities.

* generate: the final answer is parsed by :func:`dialjudge.core.judges.run.parsing.parse_output`.
* logprob, ``top_k == 0``: the expected value over the restricted softmax
  (``choice_probs``: probabilities of the valid answers, normalised over them).
* logprob, ``top_k == K > 0``: paper 003, section 3.1: of the K most likely
  first answer tokens, keep those that are valid ratings r_i with probabilities
  p_i; w_i = p_i / sum_j p_j and the rating is sum_i r_i w_i. When the ratings
  span several tokens (a choice is a proper prefix of another, as "1" of "10",
  or a top token only begins a rating, as "0" of "0.7"), a first token does not
  name a rating, so the same formula is applied to the K most likely complete
  ratings from ``choice_probs`` (their probabilities are proportional to the
  model's probability of each whole answer, so the weights are the paper's).
* yesno: paper 003, section 3.2: g = p(yes) / (p(yes) + p(no)).

Every probability mode first checks how much probability the valid answers hold
at the answer position (``BackendResult.valid_mass``, before normalising). Below
the judge's threshold (``JudgeRequest.min_valid_mass``, 0.5 unless the judge's
``options.min_valid_mass`` says otherwise) the model was about to write something
else, and normalising the little mass left on valid answers would report a
confident score that the model never gave: such a judgment is a failure whose
reason gives the mass. Where the mass was read from a truncated top list (an
API's top log-probabilities) it is a lower bound, and the judgment says so.

A failure keeps the raw output and says why in ``Judgment.error``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from ...errors import BackendError
from ..backends.answers import answer_choices, is_partial_answer, match_choice, normalize_answer
from ..prompts.constraint import AnswerConstraint
from ..types import BackendResult, JudgeRequest, Judgment, OutputKind, OutputSpec, ScoringMode
from .parsing import parse_output


@dataclass(frozen=True)
class _Outcome:
    score: float | None
    error: str | None = None
    reasoning: str | None = None
    relevancy: str | None = None


def score_result(request: JudgeRequest, result: BackendResult, judge: str) -> Judgment:
    spec = request.prompt.output
    valid_in_top: int | None = None
    too_little = None
    if request.mode is not ScoringMode.GENERATE:
        valid_in_top = count_valid_in_top(result.top_logprobs, _weighed_choices(spec, request.mode), request.top_k)
        too_little = mass_failure(result, spec, request.mode, request.min_valid_mass)
    if request.mode is ScoringMode.GENERATE:
        outcome = _from_generated(result.raw_output, spec, request, result.completion_tokens)
    elif too_little is not None:
        outcome = _Outcome(None, too_little)
    elif request.mode is ScoringMode.YESNO:
        outcome = _from_yes_no(result, spec)
    elif spec.kind is OutputKind.LABEL:
        outcome = _most_likely_label(result, spec)
    elif request.top_k <= 0:
        outcome = _expected_value(result, spec)
    else:
        outcome = _top_k_weighted(result, spec, request.top_k)

    normalized = None
    score, error = outcome.score, outcome.error
    if score is not None:
        if request.mode is ScoringMode.YESNO:
            normalized = score  # g is a probability already
        else:
            score, normalized, error = _on_scale(score, spec)

    return Judgment(
        item_id=request.item_id,
        judge=judge,
        mode=request.mode,
        prompt_hash=request.prompt.hash,
        raw_output=result.raw_output,
        score=score,
        normalized=normalized,
        error=error,
        reasoning=outcome.reasoning,
        relevancy=outcome.relevancy,
        distribution=dict(result.choice_probs) if result.choice_probs is not None else None,
        top_logprobs=list(result.top_logprobs) if result.top_logprobs is not None else None,
        latency_s=result.latency_s,
        prompt_tokens=result.prompt_tokens,
        evaluated_tokens=result.evaluated_tokens,
        completion_tokens=result.completion_tokens,
        repeat=request.repeat,
        cached=False,
        sampling=request.sampling.to_dict(),
        valid_mass=result.valid_mass,
        valid_in_top=valid_in_top,
        mass_is_lower_bound=result.mass_is_lower_bound,
    )


def _weighed_choices(spec: OutputSpec, mode: ScoringMode) -> tuple[str, ...]:
    try:
        return answer_choices(spec, mode)
    except BackendError:  # no choices: the scoring below says so
        return spec.choices


def answer_noun(spec: OutputSpec, mode: ScoringMode) -> str:
    """What one valid answer is called in messages ("rating", "label", ...)."""
    if mode is ScoringMode.YESNO or spec.kind is OutputKind.YESNO:
        return "yes/no answer"
    if spec.kind is OutputKind.LABEL:
        return "label"
    if spec.kind is OutputKind.PAIRWISE:
        return "verdict"
    return "rating"


def format_mass(mass: float, *, lower_bound: bool = False) -> str:
    """A probability as a percentage that keeps small masses readable (0.57%, not 0%)."""
    percent = 100.0 * mass
    text = f"{percent:.1f}%" if percent >= 0.1 or percent == 0 else f"{percent:.1g}%"
    return f">={text}" if lower_bound else text


def mass_failure(result: BackendResult, spec: OutputSpec, mode: ScoringMode, threshold: float) -> str | None:
    """The reason a probability-mode answer is not scored for too little valid mass, or None.

    An unmeasured mass (None: a backend or a stored answer from before it was measured) is
    not checked; it shows as unknown wherever masses are shown.
    """
    mass = result.valid_mass
    if mass is None or mass >= threshold:
        return None
    noun = answer_noun(spec, mode)
    shown = f"at least {format_mass(mass)}" if result.mass_is_lower_bound else format_mass(mass)
    reason = (f"{LOW_MASS_REASON}{noun}: {shown} of the probability on valid {noun}s "
              f"(the judge needs {format_mass(threshold)}, options.min_valid_mass)")
    if result.mass_is_lower_bound:
        reason += "; read from a truncated top list, where valid answers below it cannot be seen"
    return reason


#: How a judgment not scored for too little valid mass begins its reason (see mass_failure).
LOW_MASS_REASON = "the answer did not start with a "


#: How a group of failures for too little valid mass begins (see group_failure_reasons).
LOW_MASS_GROUP = "too little valid mass"


def group_failure_reasons(failures: Iterable[tuple[str, float | None, int]]) -> list[tuple[str, int]]:
    """Failure reasons with their counts, commonest first, failures for too little valid mass grouped.

    ``failures``: (reason, valid mass or None, count). Each low-mass reason names its own mass, so a
    run would list one line per mass value; those that differ only in the mass become one line with
    the range ("11 × too little valid mass, 23.1-29.4% of the probability on valid ratings (the judge
    needs 30%, ...)"). Other reasons are kept as they are."""
    counts: dict[str, int] = {}
    masses: dict[tuple[str, str], list[float]] = {}
    grouped: dict[tuple[str, str], int] = {}
    for reason, mass, count in failures:
        parts = _low_mass_parts(reason) if mass is not None else None
        if parts is None:
            counts[reason] = counts.get(reason, 0) + count
            continue
        masses.setdefault(parts, []).append(mass)  # type: ignore[arg-type]  # checked above
        grouped[parts] = grouped.get(parts, 0) + count
    for (noun, rest), count in grouped.items():
        values = masses[(noun, rest)]
        low, high = min(values), max(values)
        span = format_mass(low) if format_mass(low) == format_mass(high) else f"{format_mass(low)}-{format_mass(high)}"
        bound = "at least " if "truncated top list" in rest else ""
        text = f"{LOW_MASS_GROUP}, {bound}{span} of the probability on valid {noun}s{rest}"
        counts[text] = counts.get(text, 0) + count
    return sorted(counts.items(), key=lambda rc: (-rc[1], rc[0]))


def _low_mass_parts(reason: str) -> tuple[str, str] | None:
    """(the answer's noun, what follows the mass) of a low-mass reason (see mass_failure), else None."""
    if not reason.startswith(LOW_MASS_REASON) or ": " not in reason:
        return None
    noun = reason[len(LOW_MASS_REASON):].split(": ", 1)[0]
    marker = f" of the probability on valid {noun}s"
    if marker not in reason:
        return None
    return noun, reason.split(marker, 1)[1]


def is_low_mass_failure(judgment: Judgment) -> bool:
    """Whether a judgment failed because its valid answers held too little probability."""
    return judgment.failed and (judgment.error or "").startswith(LOW_MASS_REASON)


def count_valid_in_top(top: list[tuple[str, float]] | None, choices: tuple[str, ...], top_k: int) -> int | None:
    """How many entries of the top-K list (the whole list for K = 0) spell or begin a valid answer."""
    if top is None:
        return None
    listed = top[:top_k] if top_k > 0 else top
    return sum(1 for token, _ in listed if match_choice(token, choices) is not None
               or is_partial_answer(token, choices))


def _on_scale(score: float, spec: OutputSpec) -> tuple[float | None, float | None, str | None]:
    if not math.isfinite(score):
        return None, None, f"score {score} is not a number"
    if spec.max == spec.min:
        return None, None, f"the template's scale is empty (min = max = {spec.min})"
    low, high = sorted((spec.min, spec.max))
    # Expected values can land a hair outside the scale through float rounding.
    tolerance = 1e-9 * (high - low)
    if score < low - tolerance or score > high + tolerance:
        return None, None, f"score {score:g} is outside the scale {spec.min:g}-{spec.max:g}"
    score = min(max(score, low), high)
    return score, spec.normalize(score), None


def _from_generated(raw: str, spec: OutputSpec, request: JudgeRequest, completion_tokens: int = 0) -> _Outcome:
    # Imported here: parsing belongs to the templates side and is only needed in this mode.

    max_tokens = request.sampling.max_tokens
    hit_limit = completion_tokens >= max_tokens > 0
    constrained = request.constrain is not AnswerConstraint.OFF
    if constrained and hit_limit:
        # The grammar leaves room for the whole answer in ASCII text; a cut one may read as another value.
        return _Outcome(None, f"hit max_tokens ({max_tokens}) before the constrained answer completed")
    # With the prompt, numbers the model merely copied from it are not taken for its answer. A
    # constrained answer's value is fixed by the grammar, so copied text cannot be taken for it.
    parsed = parse_output(raw, spec, prompt=None if constrained else request.prompt)
    if parsed.error or parsed.score is None:
        error = parsed.error or "no score found in the output"
        if hit_limit:
            error += f" (generation hit max_tokens = {max_tokens})"
        return _Outcome(None, error, reasoning=parsed.reasoning, relevancy=parsed.relevancy)
    return _Outcome(float(parsed.score), reasoning=parsed.reasoning, relevancy=parsed.relevancy)


def _choice_values(spec: OutputSpec, choices: tuple[str, ...]) -> dict[str, float] | str:
    # The spec's own values where it is asked about its own choices (an answer mapping sets them: .rescore).
    valued = spec if choices == spec.choices else OutputSpec(kind=spec.kind, choices=choices)
    try:
        return dict(zip(choices, valued.choice_values()))
    except ValueError:
        return f"the template's choices {list(choices)} are not all numbers (or yes/no)"


def _probabilities(result: BackendResult, choices: tuple[str, ...]) -> dict[str, float] | str:
    """choice_probs keyed by the spec's spelling of each choice, or the reason there are none."""
    if not result.choice_probs:
        return "the backend returned no answer probabilities"
    probs: dict[str, float] = {c: 0.0 for c in choices}
    for name, p in result.choice_probs.items():
        choice = match_choice(name, choices)
        if choice is not None and p > 0:
            probs[choice] += p
    if sum(probs.values()) <= 0:
        return "no probability mass on any valid answer"
    return probs


def _expected_value(result: BackendResult, spec: OutputSpec) -> _Outcome:
    choices = spec.choices
    values = _choice_values(spec, choices)
    if isinstance(values, str):
        return _Outcome(None, values)
    probs = _probabilities(result, choices)
    if isinstance(probs, str):
        return _Outcome(None, probs)
    total = sum(probs.values())
    return _Outcome(sum(values[c] * p for c, p in probs.items()) / total)


def _most_likely_label(result: BackendResult, spec: OutputSpec) -> _Outcome:
    """Labels have no order, so no expected value: the most probable label's position; the
    probabilities over the labels stay in the judgment's distribution."""
    probs = _probabilities(result, spec.choices)
    if isinstance(probs, str):
        return _Outcome(None, probs)
    best = max(spec.choices, key=lambda c: probs[c])
    return _Outcome(float(spec.choices.index(best)))


def _top_k_weighted(result: BackendResult, spec: OutputSpec, k: int) -> _Outcome:
    choices = spec.choices
    values = _choice_values(spec, choices)
    if isinstance(values, str):
        return _Outcome(None, values)
    top = (result.top_logprobs or [])[:k]

    if _ratings_span_tokens(choices, top):
        probs = _probabilities(result, choices)
        if isinstance(probs, str):
            return _Outcome(None, probs)
        ranked = sorted(((p, c) for c, p in probs.items() if p > 0), reverse=True)[:k]
        rated = [(values[c], p) for p, c in ranked]
    else:
        if not top:
            return _Outcome(None, "the backend returned no top log-probabilities")
        rated = []
        for token, logprob in top:
            choice = match_choice(token, choices)
            if choice is not None:
                rated.append((values[choice], math.exp(logprob)))
        if not rated:
            shown = ", ".join(repr(t) for t, _ in top)
            return _Outcome(None, f"none of the top-{k} first tokens ({shown}) is a valid rating")

    total = sum(p for _, p in rated)
    if total <= 0:
        return _Outcome(None, "the valid ratings among the top tokens have zero probability")
    return _Outcome(sum(r * p for r, p in rated) / total)


def _ratings_span_tokens(choices: tuple[str, ...], top: list[tuple[str, float]]) -> bool:
    keys = [normalize_answer(c) for c in choices]
    if any(a != b and b.startswith(a) for a in keys for b in keys):
        return True
    return any(match_choice(t, choices) is None and is_partial_answer(t, choices) for t, _ in top)


def _from_yes_no(result: BackendResult, spec: OutputSpec) -> _Outcome:
    choices = answer_choices(spec, ScoringMode.YESNO)
    probs = _probabilities(result, choices)
    if isinstance(probs, str):
        return _Outcome(None, probs)
    p_yes = sum(p for c, p in probs.items() if normalize_answer(c) == "yes")
    p_no = sum(p for c, p in probs.items() if normalize_answer(c) == "no")
    return _Outcome(p_yes / (p_yes + p_no))
