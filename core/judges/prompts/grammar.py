"""Constrained answers: a llama.cpp grammar (GBNF) and a JSON schema built from a template's output spec.

With a constraint, generation can only write an answer the template's parser
reads (:func:`dialjudge.core.judges.run.parsing.parse_output`), so a generate run
has no unparseable outputs. Two forms (:class:`AnswerConstraint`):

* ``answer``: the answer alone. For a rating, yes/no, a label or a pairwise
  verdict that is one line, the template's answer prefix and a valid value
  ("Score: 4", "Answer: Yes", "The score is 0.85"); for a JSON output (InCA) the
  object with its keys in the paper's order (reasoning, score, relevancy).
* ``reasoning``: one line of free text, then that answer on its own line
  ("reasoning, then a constrained final line").

Why the answer always parses: the final line is written in the strongest form
the parser knows for the kind (the template's own answer prefix, or a lead the
parser takes as an explicit answer: "Score:", "Answer:"), and within a form the
parser takes the last statement, which is the final line. The free text is one
line (so it cannot start a new "Task:" section the parser would cut at) without
``<`` (a ``<think>`` would hide the rest), brackets (MT-Bench's ``[[A]]``
verdicts outrank a "Verdict:" line), braces or backticks (a JSON object or a
fenced block in the reasoning would be read instead of the answer). The lead is
checked against the real parser when the grammar is built.

Free text is bounded, so the answer is always reached: the grammar allows at
most as many characters of free text as ``max_tokens`` leaves after the fixed
part of the answer (a token holds at least one character of ASCII text). Text
in other scripts can take several tokens a character and may still hit the
limit; the run then records "hit max_tokens" for that judgment.

Values: Likert, binary, yes/no, label and pairwise answers are the spec's
choices exactly as written; a continuous 0-1 (or other whole-number range)
score has up to two decimals ("0", "0.7", "0.85", "1.0").
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

from ...errors import ConfigError
from ..run.parsing import parse_output
from ..types import OutputKind, OutputSpec
from .constraint import AnswerConstraint

#: Decimals a continuous score may have.
MAX_DECIMALS = 2
#: The most characters of free text, whatever max_tokens allows (llama.cpp expands a bounded
#: repetition into one rule per character).
MAX_FREE_CHARS = 1000
#: The fewest characters of free text a reasoning answer needs to be worth asking for.
MIN_FREE_CHARS = 16
#: Tokens kept spare beside the answer (the end-of-generation token, and one for safety).
SPARE_TOKENS = 2
#: The most characters of a JSON relevancy value ("relevant" / "not relevant" in InCA).
MAX_RELEVANCY_CHARS = 40
#: The leads used where the template's own answer prefix is not read as an explicit answer.
NUMBER_LEAD = "Score:"
CHOICE_LEAD = "Answer:"
#: Characters free text may not hold (see the module docstring for why).
FORBIDDEN_IN_FREE_TEXT = "<[]{}`"


class GrammarError(ConfigError):
    """A template's output cannot be constrained (or max_tokens leaves no room for the answer)."""


@dataclass(frozen=True)
class AnswerGrammar:
    """The grammar for one output spec, constraint and token budget."""

    gbnf: str
    #: What precedes the value on the answer line ("Score:"); empty for JSON outputs.
    lead: str
    #: The most characters of free text (the reasoning line, or the JSON reasoning string).
    free_chars: int
    constraint: AnswerConstraint
    spec: OutputSpec

    def answer(self, value: str, *, reasoning: str = "", relevancy: str = "relevant") -> str:
        """The text the grammar accepts for ``value`` (and a reasoning line, in reasoning form)."""
        return answer_text(self.spec, value, lead=self.lead, constraint=self.constraint, reasoning=reasoning,
                           relevancy=relevancy)


@functools.lru_cache(maxsize=64)
def build_grammar(spec: OutputSpec, constraint: AnswerConstraint, *, max_tokens: int) -> AnswerGrammar:
    """The GBNF grammar for answers to ``spec`` (a rendered prompt's output spec); cached, as every
    request of a run asks for the same one."""
    constraint = AnswerConstraint(constraint)
    if constraint is AnswerConstraint.OFF:
        raise GrammarError("no grammar: the run's answers are not constrained")
    values = value_strings(spec)
    is_json = spec.kind is OutputKind.JSON
    lead = "" if is_json else answer_lead(spec)
    fixed = _fixed_bytes(spec, lead, values, constraint)
    room = max_tokens - fixed - SPARE_TOKENS
    free_fields = (constraint is AnswerConstraint.REASONING) + (is_json and bool(spec.reasoning_key))
    free_chars = min(MAX_FREE_CHARS, room // free_fields) if free_fields else 0
    if free_fields and free_chars < MIN_FREE_CHARS:
        needed = fixed + SPARE_TOKENS + MIN_FREE_CHARS * free_fields
        raise GrammarError(f"max_tokens is {max_tokens}, too few for a constrained {_what(spec, constraint)}; "
                           f"raise the judge's sampling.max_tokens to at least {needed}")
    if not free_fields and room < 0:
        raise GrammarError(f"max_tokens is {max_tokens}, too few for the constrained answer; raise the "
                           f"judge's sampling.max_tokens to at least {fixed + SPARE_TOKENS}")

    rules = {"value": _value_rule(spec, values)}
    if is_json:
        rules["answer"] = _json_rule(spec)
    else:
        rules["answer"] = f"{_literal(lead + ' ')} value"
    if constraint is AnswerConstraint.REASONING:
        rules["root"] = 'reasoning "\\n" answer'
        rules["reasoning"] = f"free-char{{1,{free_chars}}}"
        rules["free-char"] = "[^\\x00-\\x1F" + _class_escape(FORBIDDEN_IN_FREE_TEXT) + "]"
    else:
        rules["root"] = "answer"
    if is_json:
        rules["string-char"] = "[^\\x00-\\x1F\"\\\\" + _class_escape(FORBIDDEN_IN_FREE_TEXT) + "]"
        if spec.reasoning_key:
            rules["json-reasoning"] = f'"\\"" string-char{{0,{max(free_chars, 1)}}} "\\""'
        if spec.relevancy_key:
            rules["json-relevancy"] = f'"\\"" string-char{{1,{MAX_RELEVANCY_CHARS}}} "\\""'
    order = ["root", "reasoning", "answer", "value", "json-reasoning", "json-relevancy", "free-char", "string-char"]
    gbnf = "\n".join(f"{name} ::= {rules[name]}" for name in order if name in rules) + "\n"
    return AnswerGrammar(gbnf, lead, free_chars, constraint, spec)


def answer_text(spec: OutputSpec, value: str, *, lead: str | None = None,
                constraint: AnswerConstraint = AnswerConstraint.ANSWER, reasoning: str = "",
                relevancy: str = "relevant") -> str:
    """An answer in the constrained form: ``value`` on the answer line (or in the JSON object)."""
    if spec.kind is OutputKind.JSON:
        fields = []
        if spec.reasoning_key:
            fields.append(f"{json.dumps(spec.reasoning_key)}: {json.dumps(reasoning or 'ok')}")
        fields.append(f"{json.dumps(spec.score_key or 'score')}: {value}")
        if spec.relevancy_key:
            fields.append(f"{json.dumps(spec.relevancy_key)}: {json.dumps(relevancy)}")
        line = "{\n  " + ",\n  ".join(fields) + "\n}"
    else:
        line = f"{answer_lead(spec) if lead is None else lead} {value}"
    if AnswerConstraint(constraint) is AnswerConstraint.REASONING:
        return f"{reasoning or 'ok'}\n{line}"
    return line


def value_strings(spec: OutputSpec) -> list[str]:
    """Every value the grammar allows, for finite answer sets; a continuous score's two-decimal grid."""
    if spec.kind is OutputKind.CONTINUOUS or (spec.kind is OutputKind.JSON and not spec.choices):
        lo, hi = _whole_range(spec)
        grid = []
        for whole in range(lo, hi):
            grid.append(str(whole))
            grid += [f"{whole}.{d}" for d in range(10)]
            grid += [f"{whole}.{d:02d}" for d in range(100)]
        return grid + [str(hi), f"{hi}.0", f"{hi}.00"]
    if not spec.choices:
        raise GrammarError(f"a {spec.kind.value} output without choices cannot be constrained")
    return [c.strip() for c in spec.choices]


def answer_lead(spec: OutputSpec) -> str:
    """What the answer line starts with: the template's answer prefix where the parser takes
    it as an explicit answer even after free text naming another value, else "Score:"/"Answer:"."""
    numeric = spec.kind in (OutputKind.CONTINUOUS, OutputKind.LIKERT, OutputKind.BINARY)
    default = NUMBER_LEAD if numeric else CHOICE_LEAD
    own = " ".join(spec.answer_prefix.split())
    for lead in ([own] if own and own != default else []) + [default]:
        if _final_line_wins(spec, lead):
            return lead
    raise GrammarError(f"the parser does not read a {spec.kind.value} answer line {default} <value> after "
                       "free text, so this template's answers cannot be constrained")


# --------------------------------------------------------------------------- JSON schema


def json_schema(spec: OutputSpec) -> dict[str, object]:
    """A JSON schema for a JSON output (OpenAI's ``response_format``), keys in the paper's order."""
    if spec.kind is not OutputKind.JSON:
        raise GrammarError(f"a {spec.kind.value} answer is not a JSON object; a JSON schema cannot constrain it")
    score_key = spec.score_key or "score"
    properties: dict[str, object] = {}
    if spec.reasoning_key:
        properties[spec.reasoning_key] = {"type": "string"}
    if spec.choices:
        properties[score_key] = {"type": "number", "enum": [_number(c) for c in spec.choices]}
    else:
        properties[score_key] = {"type": "number", "minimum": spec.min, "maximum": spec.max}
    if spec.relevancy_key:
        properties[spec.relevancy_key] = {"type": "string"}
    return {"type": "object", "properties": properties, "required": list(properties),
            "additionalProperties": False}


# --------------------------------------------------------------------------- building blocks


def _what(spec: OutputSpec, constraint: AnswerConstraint) -> str:
    return f"{spec.kind.value} answer" + (" after reasoning" if constraint is AnswerConstraint.REASONING else "")


def _fixed_bytes(spec: OutputSpec, lead: str, values: Sequence[str], constraint: AnswerConstraint) -> int:
    """The most tokens the fixed part of an answer takes (a token holds at least one byte)."""
    longest = max(values, key=lambda v: len(v.encode("utf-8")))
    text = answer_text(spec, longest, lead=lead, constraint=constraint, reasoning="", relevancy="")
    # The placeholder reasoning ("ok") and empty relevancy are counted apart: free text has its own budget.
    size = len(text.encode("utf-8"))
    if constraint is AnswerConstraint.REASONING:
        size -= len("ok")
    if spec.kind is OutputKind.JSON:
        size += MAX_RELEVANCY_CHARS if spec.relevancy_key else 0
        size -= len("ok") if spec.reasoning_key else 0
    return size


def _final_line_wins(spec: OutputSpec, lead: str) -> bool:
    """Whether ``lead <value>`` after a line naming another value parses as that value, for every value."""
    if spec.kind is OutputKind.CONTINUOUS:
        lo, hi = _whole_range(spec)
        values = [str(lo), f"{lo}.05", f"{lo}.5", str(hi), f"{hi}.0"]
    else:
        values = value_strings(spec)
    expected = _expected_scores(spec, values)
    for value, score in zip(values, expected):
        other = values[0] if value != values[0] else values[-1]
        for line in ("ok", f"{NUMBER_LEAD} {other}. {CHOICE_LEAD} {other}. Verdict: {other}", f"{lead} {other}"):
            parsed = parse_output(f"{line}\n{lead} {value}", spec)
            if parsed.score is None or not math.isclose(parsed.score, score, abs_tol=1e-9):
                return False
        if not parse_output(f"{lead} {value}", spec).ok:
            return False
    return True


def _expected_scores(spec: OutputSpec, values: Sequence[str]) -> list[float]:
    if spec.kind in (OutputKind.CONTINUOUS, OutputKind.LIKERT, OutputKind.BINARY):
        return [float(v) for v in values]
    by_choice = dict(zip((c.strip() for c in spec.choices), spec.choice_values()))
    if spec.kind is OutputKind.YESNO:
        return [spec.max if by_choice[v] == 1.0 else spec.min for v in values]
    return [by_choice[v] for v in values]


def _whole_range(spec: OutputSpec) -> tuple[int, int]:
    if not (float(spec.min).is_integer() and float(spec.max).is_integer()) or spec.min < 0:
        raise GrammarError(f"a continuous score on {spec.min:g}-{spec.max:g} cannot be constrained: only "
                           "whole-number ranges from 0 up are")
    if spec.max - spec.min > 1000:
        raise GrammarError(f"a continuous score on {spec.min:g}-{spec.max:g} has too wide a range to constrain")
    return int(spec.min), int(spec.max)


def _value_rule(spec: OutputSpec, values: Sequence[str]) -> str:
    if spec.kind is OutputKind.CONTINUOUS or (spec.kind is OutputKind.JSON and not spec.choices):
        lo, hi = _whole_range(spec)
        decimals = "[0-9]" + "[0-9]?" * (MAX_DECIMALS - 1)
        zeros = '"0"' + ' "0"?' * (MAX_DECIMALS - 1)
        below = " | ".join(_literal(str(w)) for w in range(lo, hi))
        return f'({below}) ("." {decimals})? | {_literal(str(hi))} ("." {zeros})?'
    return " | ".join(_literal(v) for v in values)


def _json_rule(spec: OutputSpec) -> str:
    parts = []
    if spec.reasoning_key:
        parts.append(f"{_literal(json.dumps(spec.reasoning_key) + ': ')} json-reasoning")
    parts.append(f"{_literal(json.dumps(spec.score_key or 'score') + ': ')} value")
    if spec.relevancy_key:
        parts.append(f"{_literal(json.dumps(spec.relevancy_key) + ': ')} json-relevancy")
    body = f" {_literal(',' + chr(10) + '  ')} ".join(parts)
    return f"{_literal('{' + chr(10) + '  ')} {body} {_literal(chr(10) + '}')}"


def _literal(text: str) -> str:
    """A GBNF string literal."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _class_escape(chars: str) -> str:
    return re.sub(r"([\[\]\\^-])", r"\\\1", chars)


def _number(text: str) -> float | int:
    value = float(text)
    return int(value) if value.is_integer() else value


__all__ = ["AnswerGrammar", "GrammarError", "build_grammar", "answer_text", "answer_lead", "value_strings",
           "json_schema", "FORBIDDEN_IN_FREE_TEXT", "MAX_DECIMALS"]
