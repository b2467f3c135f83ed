"""Read the score out of a judge's generated text.

The parser anchors on the final answer, not on any number in the text:

1. ``<think>`` blocks and, when the prompt is given, long stretches copied
   from the prompt are removed: a number that only appears there is not an
   answer.
2. If the model goes on to write a new example or item (``== Example``,
   ``Background info:``, ``Task:``, ...), the answer is looked for before it
   first; only when there is none there is the rest searched.
3. Score ranges ("from 0 to 1", "1-5") and echoed rubrics ("1 = poor,
   2 = fair") are blanked out.
4. Candidates, strongest first; within a tier the last one wins: an explicit
   statement ("the score is 0.8", "Score: 4/5", "Rating: 2/2", ``"score": 3``),
   a ratio ("4 out of 5"), a marked number (``**4**``, ``[[4]]``), a line that
   is just a number, and lastly a text with one single number in it.

Nothing is ever imputed: no answer, an ambiguous one or one outside the
scale gives ``ParsedOutput(score=None, error=<reason>)``.
"""

from __future__ import annotations

import ast
import json
import math
import re
from dataclasses import dataclass
from typing import Any

from ..types import OutputKind, OutputSpec, RenderedPrompt
from .pairwise import parse_verdict


@dataclass
class ParsedOutput:
    score: float | None  # on the template's scale
    reasoning: str | None = None
    relevancy: str | None = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.score is not None


def parse_output(raw: str, spec: OutputSpec, *, prompt: RenderedPrompt | str | None = None) -> ParsedOutput:
    """The score in ``raw``. Pass the ``prompt`` so that echoed prompt text is ignored."""
    original = _strip_thinking(raw or "")
    text = original
    if prompt is not None:
        text = strip_echo(text, prompt if isinstance(prompt, str) else _prompt_text(prompt))
    if not text.strip():
        return ParsedOutput(None, error="empty output" if not (raw or "").strip() else "no answer in the output")
    if spec.kind is OutputKind.JSON:
        parsed = _parse_json(text, spec)
    elif spec.kind is OutputKind.YESNO:
        parsed = _parse_yesno(text, spec)
    elif spec.kind is OutputKind.LABEL:
        parsed = _parse_label(text, spec)
    elif spec.kind is OutputKind.PAIRWISE:

        score, reasoning, error = parse_verdict(text, spec)
        parsed = ParsedOutput(score, reasoning=reasoning, error=error)
    else:
        parsed = _parse_number(text, spec)
    if parsed.reasoning and text != original:
        parsed.reasoning = _unblanked(parsed.reasoning, text, original)
    return parsed


def _unblanked(reasoning: str, blanked: str, original: str) -> str:
    """The reasoning as the model wrote it: echo removal blanks copied prompt text with spaces
    (offsets kept) so that no score is read from it, but the reasoning shown keeps those words."""
    at = blanked.find(reasoning)
    return original[at:at + len(reasoning)] if at >= 0 else reasoning


# --------------------------------------------------------------------------- shared cleaning

_THINK_RE = re.compile(r"<think>.*?(?:</think>|\Z)", re.S | re.I)
#: Lines that start a new example or item: what a model writes when it keeps going.
_CONTINUATION_RE = re.compile(
    r"(?im)^[ \t>*#]*(?:==+\s*example\b|example\s*\d+\s*:|background info\s*:|conversation\s*:|"
    r"instruction\s*:|task\s*:|dialog(?:ue)? history\s*:|\[dialog history\]|\[kpi\b|\[user utterance\]|"
    r"define\s+\w+\s*:|question\s*:)")
_MIN_ECHO = 30


def _strip_thinking(text: str) -> str:
    return _THINK_RE.sub("", text)


def _prompt_text(prompt: RenderedPrompt) -> str:
    return "\n".join(m.content for m in prompt.messages)


def strip_echo(text: str, prompt: str, min_chars: int = _MIN_ECHO) -> str:
    """Blank out every stretch of at least ``min_chars`` characters copied from the prompt.

    A short answer line that also occurs in the prompt (a few-shot example's
    "Rating: 2/2") is shorter than that and stays. Linear time: the prompt's
    ``min_chars``-grams go in a set and the output's windows are looked up.
    """
    if len(text) < min_chars or len(prompt) < min_chars:
        return text
    grams = {prompt[i:i + min_chars] for i in range(len(prompt) - min_chars + 1)}
    copied = bytearray(len(text))
    for i in range(len(text) - min_chars + 1):
        if text[i:i + min_chars] in grams:
            copied[i:i + min_chars] = b"\x01" * min_chars
    if not any(copied):
        return text
    return "".join(" " if flag and ch != "\n" else ch for ch, flag in zip(text, copied))


def _regions(text: str) -> list[str]:
    """The text before a continuation marker first, then the whole text."""
    m = _CONTINUATION_RE.search(text)
    if m is None or not text[:m.start()].strip():
        return [text]
    return [text[:m.start()], text]


# --------------------------------------------------------------------------- numbers

_NUM = r"(?P<sign>[-−])?(?P<num>\d+(?:\.\d+)?|\.\d+)"
_DEN = r"(?:\s*(?:/|out\s+of|of)\s*(?P<den>\d+(?:\.\d+)?))?"
_END = r"(?![\d])(?!\.\d)"
_KEY = (r"(?:final\s+score|overall\s+score|scores?|ratings?|rated|rate|grade|mark|verdict|answer|gives?|"
        r"分数|评分|得分)")
_CONNECT = (r"(?:[\s*_`\"'’“”:=：>\-–—→\[\](){}]|\b(?:is|was|be|would|should|will|must|of|i|i'd|give|given|"
            r"assign|it|this|the|response|a|an|as|at|to|final|overall|around|about|approximately|roughly|"
            r"here|my)\b)*?")
_EXPLICIT_RE = re.compile(rf"(?i)(?<![A-Za-z0-9_])(?P<key>{_KEY})(?![A-Za-z0-9_]){_CONNECT}(?<![\w.]){_NUM}{_END}"
                          rf"(?P<pct>\s*%)?{_DEN}{_END}")
_RATIO_RE = re.compile(rf"(?i)(?<![\w./]){_NUM}\s*(?:/|out\s+of)\s*(?P<den>\d+(?:\.\d+)?)(?![\w/])(?!\.\d)")
_MARKED_RE = re.compile(
    rf"(?i)(?:\*\*|__|\[\[|\\boxed\{{)\s*{_NUM}{_END}(?:\s*/\s*(?P<den>\d+(?:\.\d+)?))?\s*(?:\*\*|__|\]\]|\}})")
_LINE_RE = re.compile(
    rf"(?im)^[ \t*_\"'`(\[]*{_NUM}{_END}(?P<pct>\s*%)?(?:\s*(?:/|out\s+of)\s*(?P<den>\d+(?:\.\d+)?))?"
    r"[ \t*_\"'`)\]]*[.!]?[ \t]*$")
_ANY_NUM_RE = re.compile(rf"(?<![\w./]){_NUM}{_END}(?![\w/])")
_RANGE_RE = re.compile(
    r"(?i)(?:\bfrom\s+|\bbetween\s+)?(?<![\w./])\d+(?:\.\d+)?\s*(?:-|–|—|~|\bto\b|\band\b)\s*\d+(?:\.\d+)?(?![\w/])(?!\.\d)")
_RUBRIC_RE = re.compile(
    r"(?im)(?:^[ \t]*[-*•]?[ \t]*\d+(?:\.\d+)?[ \t]*(?:=|:|-|–|means)[ \t]*[a-z]|"
    r"(?<![\w.])\d+(?:\.\d+)?\s*(?:=|means)\s*(?:very\s+|not\s+|somewhat\s+|quite\s+)?[a-z]+)")
_PLAUSIBLE_DENOMINATORS = (1.0, 5.0, 10.0, 100.0)


@dataclass
class _Candidate:
    value: float
    den: float | None
    percent: bool
    start: int


def _blank(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def _neutralise(text: str) -> str:
    """Blank out score ranges and echoed rubrics, keeping every other offset in place."""
    text = _blank(text, [m.span() for m in _RANGE_RE.finditer(text)])
    rubric = list(_RUBRIC_RE.finditer(text))
    if len(rubric) >= 2:
        # Blank only the rubric's number, so "Score: 4" on a rubric line still reads.
        spans = []
        for m in rubric:
            num = re.search(r"\d+(?:\.\d+)?", m.group(0))
            assert num is not None
            spans.append((m.start() + num.start(), m.start() + num.end()))
        text = _blank(text, spans)
    return text


def _candidate(m: re.Match[str]) -> _Candidate:
    value = float(m.group("num"))
    if m.group("sign"):
        value = -value
    groups = m.groupdict()
    den = float(groups["den"]) if groups.get("den") else None
    return _Candidate(value, den, bool(groups.get("pct")), m.start())


def _find_answer(text: str, spec: OutputSpec) -> tuple[_Candidate | None, str | None]:
    """The strongest, last candidate answer in ``text``, or a reason why there is none."""
    clean = _neutralise(text)
    official = _answer_format_re(spec)
    for regex in (official, _EXPLICIT_RE, _RATIO_RE, _MARKED_RE, _LINE_RE):
        if regex is None:
            continue
        found = [_candidate(m) for m in regex.finditer(clean)]
        if regex is _RATIO_RE:
            found = [c for c in found if c.den is not None and _plausible_denominator(c.den, spec)]
        if found:
            return found[-1], None
    numbers = [_candidate(m) for m in _ANY_NUM_RE.finditer(clean)]
    if not numbers:
        return None, "no score in the output"
    if len({c.value for c in numbers}) == 1:
        return numbers[-1], None
    shown = ", ".join(_fmt(c.value) for c in numbers[:6])
    return None, f"several numbers ({shown}) and no statement of which is the score"


def _answer_format_re(spec: OutputSpec) -> re.Pattern[str] | None:
    """A line opening with the template's own answer prefix ("Rating: 2/2", "Score: 4").

    The answer in the requested format outranks other statements, so a model
    that answers "Rating: 2/2" and then rambles "rated 2 out of 3" is read as 2.
    """
    words = re.findall(r"[^\W\d_]+", spec.answer_prefix)
    if not words or not re.fullmatch(r"[\w\s:：]*", spec.answer_prefix.strip()):
        return None
    prefix = r"\s+".join(re.escape(w) for w in words)
    return re.compile(rf"(?im)^[ \t*_>#\-]*{prefix}(?![A-Za-z0-9_]){_CONNECT}(?<![\w.]){_NUM}{_END}"
                      rf"(?P<pct>\s*%)?{_DEN}{_END}")


def _plausible_denominator(den: float, spec: OutputSpec) -> bool:
    return math.isclose(den, spec.max) or (spec.kind is OutputKind.CONTINUOUS and spec.min == 0
                                           and den in _PLAUSIBLE_DENOMINATORS)


def _to_scale(c: _Candidate, spec: OutputSpec) -> tuple[float | None, str | None]:
    value = c.value
    if c.percent:
        if spec.kind is OutputKind.CONTINUOUS and spec.min == 0:
            return value / 100.0 * spec.max, None
        return None, f"answered {_fmt(value)}% but the scale is {_fmt(spec.min)}-{_fmt(spec.max)}"
    if c.den is not None and not math.isclose(c.den, spec.max):
        if spec.kind is OutputKind.CONTINUOUS and spec.min == 0 and c.den > 0:
            return value / c.den * spec.max, None
        return None, (f"answered {_fmt(value)}/{_fmt(c.den)} but the scale is "
                      f"{_fmt(spec.min)}-{_fmt(spec.max)}")
    return value, None


def _check_range(value: float, spec: OutputSpec) -> str | None:
    if not spec.min - 1e-9 <= value <= spec.max + 1e-9:
        return f"score {_fmt(value)} is outside {_fmt(spec.min)}-{_fmt(spec.max)}"
    if spec.kind in (OutputKind.BINARY, OutputKind.JSON) and spec.choices:
        allowed = spec.choice_values()
        if not any(math.isclose(value, a, abs_tol=1e-9) for a in allowed):
            return f"score {_fmt(value)} is not one of {', '.join(spec.choices)}"
    return None


def _parse_number(text: str, spec: OutputSpec) -> ParsedOutput:
    error: str | None = "no score in the output"
    for region in _regions(text):
        candidate, error = _find_answer(region, spec)
        if candidate is None:
            continue
        value, error = _to_scale(candidate, spec)
        if value is None:
            return ParsedOutput(None, reasoning=_reasoning_before(region, candidate.start), error=error)
        error = _check_range(value, spec)
        reasoning = _reasoning_before(region, candidate.start)
        if error:
            return ParsedOutput(None, reasoning=reasoning, error=error)
        return ParsedOutput(value, reasoning=reasoning)
    return ParsedOutput(None, reasoning=text.strip() or None, error=error)


def _reasoning_before(text: str, start: int) -> str | None:
    """What the model wrote before the sentence that states its answer; a JSON reasoning field first."""
    for obj in reversed(_json_objects(text)):
        found = _text_value(obj, None, ("reason", "rationale", "explanation"))
        if found:
            return found
    before = text[:start]
    cut = max(before.rfind(mark) for mark in (". ", ".\n", "!", "?", "\n"))
    before = before[:cut + 1] if cut >= 0 else ""
    before = re.sub(r"```[a-zA-Z]*", "", before).strip()
    return before or None


def _fmt(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


# --------------------------------------------------------------------------- yes / no

_YESNO_PAIR_RE = re.compile(r"(?i)\b(?:yes\s*(?:or|/)\s*no|no\s*(?:or|/)\s*yes)\b")
_YESNO_EXPLICIT_RE = re.compile(
    r"(?i)\b(?:final\s+answer|answer|verdict|decision)\b[\s*_`\"':：=\-]*(?:is\s+)?[\s*_`\"'“”]*(?P<word>yes|no)\b")
_YESNO_ANY_RE = re.compile(r"(?i)\b(?P<word>yes|no)\b")


def _parse_yesno(text: str, spec: OutputSpec) -> ParsedOutput:
    error = "no yes/no answer in the output"
    for region in _regions(text):
        clean = _blank(region, [m.span() for m in _YESNO_PAIR_RE.finditer(region)])
        word, error = _yesno_word(clean)
        if word is not None:
            score = float(spec.max if word == "yes" else spec.min)
            said = region.strip()
            return ParsedOutput(score, reasoning=said if len(said) > len(word) + 1 else None)
    return ParsedOutput(None, error=error)


def _yesno_word(text: str) -> tuple[str | None, str]:
    explicit = list(_YESNO_EXPLICIT_RE.finditer(text))
    if explicit:
        return explicit[-1].group("word").lower(), ""
    words = {m.group("word").lower() for m in _YESNO_ANY_RE.finditer(text)}
    if len(words) == 1:
        return words.pop(), ""
    if words:
        return None, "both yes and no in the output and no explicit answer"
    return None, "no yes/no answer in the output"


# --------------------------------------------------------------------------- labels

_LABEL_LEAD = r"\b(?:final\s+answer|answer|label|verdict|choice|category)\b[\s*_`\"':：=\-]*(?:is\s+)?[\s*_`\"'“”]*"


def _parse_label(text: str, spec: OutputSpec) -> ParsedOutput:
    """One of the labels in ``spec.choices``: the one named after "Answer:" (or "Label:"), else
    the only label the text names; the score is its position in the choices."""
    if not spec.choices:
        return ParsedOutput(None, error="the template's label output has no labels")
    # Longest first, so that "Not safe" is not read as "safe".
    ordered = sorted(spec.choices, key=len, reverse=True)
    alternation = "|".join(re.escape(c.strip()) for c in ordered)
    any_re = re.compile(rf"(?i)(?<![\w])(?P<label>{alternation})(?![\w])")
    explicit_re = re.compile(rf"(?i){_LABEL_LEAD}(?<![\w])(?P<label>{alternation})(?![\w])")
    keys = [c.strip().casefold() for c in spec.choices]
    error = f"no label ({', '.join(spec.choices)}) in the output"
    for region in _regions(text):
        explicit = list(explicit_re.finditer(region))
        found = [explicit[-1]] if explicit else list(any_re.finditer(region))
        named = {m.group("label").casefold() for m in found}
        if len(named) == 1:
            label = named.pop()
            said = region.strip()
            return ParsedOutput(float(keys.index(label)), reasoning=said if len(said) > len(label) + 1 else None)
        if named:
            error = f"several labels ({', '.join(sorted(named))}) in the output and no explicit answer"
    return ParsedOutput(None, error=error)


# --------------------------------------------------------------------------- JSON

_FENCE_RE = re.compile(r"```[a-zA-Z]*\s*\n?(.*?)```", re.S)


def _parse_json(text: str, spec: OutputSpec) -> ParsedOutput:
    score_key = spec.score_key or "score"
    objects = _json_objects(text)
    with_score = [(o, k) for o in objects for k in [_find_key(o, score_key, "score")] if k is not None]
    if with_score:
        obj, key = with_score[-1]
        reasoning = _text_value(obj, spec.reasoning_key, ("reason", "rationale", "explanation"))
        relevancy = _text_value(obj, spec.relevancy_key, ("relevan",))
        value, error = _json_number(obj[key])
        if value is not None:
            error = _check_range(value, spec)
        if error:
            return ParsedOutput(None, reasoning=reasoning, relevancy=relevancy, error=f"{key!r}: {error}")
        return ParsedOutput(value, reasoning=reasoning, relevancy=relevancy)
    return _parse_json_by_pattern(text, spec, score_key, bool(objects))


def _parse_json_by_pattern(text: str, spec: OutputSpec, score_key: str, had_objects: bool) -> ParsedOutput:
    """Key-value lines that are not valid JSON (paper 002's own format has no braces)."""
    key_re = r"\s+".join(re.escape(part) for part in score_key.split())
    matches = list(re.finditer(
        rf"(?i)[\"']?{key_re}[\"']?\s*[:=]\s*[\"']?{_NUM}{_END}(?!\s*(?:/|or\b))", text))
    if not matches:
        if re.search(rf"(?i){key_re}", text):
            what = f"the value of {score_key!r} is not a score"
        elif had_objects:
            what = f"no JSON object with the key {score_key!r}"
        else:
            what = "no JSON object in the output"
        return ParsedOutput(None, reasoning=text.strip() or None, error=what)
    c = _candidate(matches[-1])
    reasoning = _pattern_text(text, spec.reasoning_key)
    relevancy = _pattern_text(text, spec.relevancy_key)
    error = _check_range(c.value, spec)
    if error:
        return ParsedOutput(None, reasoning=reasoning, relevancy=relevancy, error=error)
    return ParsedOutput(c.value, reasoning=reasoning, relevancy=relevancy)


def _pattern_text(text: str, key: str | None) -> str | None:
    if not key:
        return None
    key_re = r"\s+".join(re.escape(part) for part in key.split())
    matches = list(re.finditer(rf"(?i)[\"']?{key_re}[\"']?\s*:\s*\"((?:[^\"\\]|\\.)*)\"", text))
    return matches[-1].group(1).strip() if matches else None  # the last occurrence wins


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every JSON-ish object (and nested object) in the text; fenced blocks when there are any."""
    fenced = [m.group(1) for m in _FENCE_RE.finditer(text)]
    for sources in ([*fenced], [text]):
        out: list[dict[str, Any]] = []
        for source in sources:
            for chunk in _balanced_objects(source):
                _collect(_load_lenient(chunk), out)
        if out:
            return out
    return []


def _collect(value: Any, out: list[dict[str, Any]]) -> None:
    if isinstance(value, dict):
        out.append(value)
        for v in value.values():
            _collect(v, out)
    elif isinstance(value, list):
        for v in value:
            _collect(v, out)


def _balanced_objects(text: str) -> list[str]:
    """Top-level ``{...}`` spans, aware of quoted strings."""
    spans = []
    depth = 0
    start = -1
    quote: str | None = None
    escaped = False
    for i, ch in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == quote or (ch == "\n" and quote == "'"):
                quote = None
            continue
        if ch == '"' or (ch == "'" and depth > 0 and _opens_single_quote(text, i)):
            quote = ch
        elif ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth > 0:
            depth -= 1
            if depth == 0:
                spans.append(text[start:i + 1])
    return spans


def _opens_single_quote(text: str, i: int) -> bool:
    # A single quote starts a string only where a key or value starts, not in "don't".
    before = text[:i].rstrip()
    return not before or before[-1] in "{,:["


_SMART = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'"})


def _load_lenient(chunk: str) -> Any:
    try:
        return json.loads(chunk)
    except ValueError:
        pass
    fixed = chunk.translate(_SMART)
    fixed = re.sub(r",\s*([}\]])", r"\1", fixed)  # trailing commas
    # Missing commas between "key": value lines (paper 002's own format).
    fixed = re.sub(r"([\"\d\]}el])[ \t]*\n(\s*[\"'])", r"\1,\n\2", fixed)
    try:
        return json.loads(fixed)
    except ValueError:
        pass
    pythonish = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", fixed)))
    try:
        return ast.literal_eval(pythonish)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None


def _norm_key(key: str) -> str:
    return re.sub(r"\s+", " ", str(key).strip().strip("*_`").lower())


def _find_key(obj: dict[str, Any], wanted: str, fallback_word: str) -> str | None:
    """The key holding the score: the exact one (case and spacing aside), else the one key naming it."""
    target = _norm_key(wanted)
    for key in obj:
        if _norm_key(key) == target:
            return key
    loose = [k for k in obj if fallback_word in _norm_key(k) and not isinstance(obj[k], (dict, list))]
    return loose[0] if len(loose) == 1 else None


def _text_value(obj: dict[str, Any], key: str | None, words: tuple[str, ...]) -> str | None:
    if key:
        target = _norm_key(key)
        for k, v in obj.items():
            if _norm_key(k) == target:
                return str(v).strip()
    for k, v in obj.items():
        if any(w in _norm_key(k) for w in words) and isinstance(v, (str, int, float)):
            return str(v).strip()
    return None


def _json_number(value: Any) -> tuple[float | None, str | None]:
    if isinstance(value, bool):
        return (1.0 if value else 0.0), None
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            return None, f"{value} is not a score"
        return float(value), None
    if isinstance(value, str):
        m = re.fullmatch(rf"\s*{_NUM}\s*", value)
        if m:
            return _candidate(m).value, None
        return None, f"{value!r} is not a number"
    return None, f"{type(value).__name__} value is not a score"
