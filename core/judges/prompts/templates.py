"""Judge prompt templates: TOML files parsed and validated once, at load time.

A template is a TOML file (see ``prompts/templates/*.toml``) with ``name``,
``description``, ``[[messages]]`` (role + content), ``[output]`` (how to read
the answer), and optionally ``[aspects]``, ``[aspect_aliases]``, ``[kpis]``,
``[constants]`` and ``[examples]`` (how one few-shot example is written).

Placeholder syntax, used in message contents, the example format, the output
keys and the answer prefix:

* ``{name}`` is replaced by the variable ``name``;
* ``{name|text}`` is replaced by ``text`` when the variable is empty;
* ``{{`` and ``}}`` are literal braces; any other brace is an error;
* a line holding nothing but one placeholder disappears when it renders empty;
* values are inserted in one pass and never scanned again, so braces, ``$x``
  or ``{% %}`` inside a dialogue, a fact or a persona stay literal.

Every problem (bad TOML, an unknown variable, a malformed placeholder, an
output spec that cannot be scored) raises :class:`TemplateError` with the
template's source, line and column.
"""

from __future__ import annotations

import functools
import re
import sys
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from ...config import user_data_dir
from ...errors import ConfigError, TemplateError
from ..types import OutputKind, OutputSpec, ScoringMode
from .naming import _check_name, toml_string

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

#: Variables a message may use, filled per item by :func:`render.render_prompt`.
VARIABLES: dict[str, str] = {
    "context": "the dialogue turns, one 'Speaker: text' line each",
    "response": "the candidate response being judged",
    "fact": "the knowledge or persona snippet (empty when there is none)",
    "reference": "the reference response(s), one a line",
    "aspect": "the aspect (quality) being rated, as the template names it",
    "aspect_definition": "the template's definition of that aspect",
    "persona": "the persona text (empty for no persona)",
    "examples": "the rendered few-shot block (empty for zero-shot)",
    "kpi": "the KPI id",
    "kpi_definition": "the template's definition of that KPI",
    "history": "the context minus its last turn",
    "user_utterance": "the text of the last context turn",
    "quality": "the dataset's name of the quality being judged",
    "scale_min": "the lowest score of the output scale",
    "scale_max": "the highest score of the output scale",
    "scale_points": "the allowed answers, e.g. '0, 1 or 2'",
    "next_index": "the number of few-shot examples plus one",
    "response_a": "pairwise templates: the reply shown first (A)",
    "response_b": "pairwise templates: the reply shown second (B)",
}

#: Variables one few-shot example's format may use (on top of the constants).
EXAMPLE_VARIABLES: dict[str, str] = {
    "index": "the 1-based position of the example",
    "rating": "the example's human rating, converted to the template's scale",
    **{k: VARIABLES[k] for k in (
        "context", "response", "fact", "reference", "history", "user_utterance",
        "aspect", "kpi", "quality", "scale_min", "scale_max",
    )},
}

#: Variables the output keys and the answer prefix may use.
KEY_VARIABLES = ("kpi", "aspect", "quality", "scale_min", "scale_max")

ROLES = ("system", "user", "assistant")
LEVELS = ("turn", "dialog")

_TOP_KEYS = {"name", "description", "level", "messages", "output", "aspects", "aspect_aliases",
             "kpis", "constants", "examples"}
_OUTPUT_KEYS = {"kind", "min", "max", "choices", "score_key", "reasoning_key", "relevancy_key",
                "answer_prefix", "modes", "scale"}
_EXAMPLE_KEYS = {"format", "header", "joiner"}
_NAME_RE = re.compile(r"[a-z_][a-z0-9_]*\Z")
_TEMPLATE_NAME_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*\Z")
#: Personas live beside templates in a template folder; this file is not a template.
PERSONAS_FILE = "personas.toml"


# --------------------------------------------------------------------------- placeholders


@dataclass(frozen=True)
class Placeholder:
    name: str
    default: str
    line: int  # 1-based, within the text it was parsed from
    column: int


@dataclass(frozen=True)
class PatternLine:
    segments: tuple[str | Placeholder, ...]
    #: The line holds one placeholder and only whitespace besides; it is
    #: dropped (with its newline) when that placeholder renders empty.
    sole: Placeholder | None = None


class _PatternError(Exception):
    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


@dataclass(frozen=True)
class TextPattern:
    """Text parsed once into literal pieces and placeholders."""

    text: str
    lines: tuple[PatternLine, ...]

    @classmethod
    def parse(cls, text: str) -> "TextPattern":
        lines = []
        for number, line in enumerate(text.split("\n"), start=1):
            lines.append(_parse_line(line, number))
        return cls(text, tuple(lines))

    # Cached: every prompt rendered asks (a template's needs_aspect, per item), and the pattern is frozen.
    @functools.cached_property
    def placeholders(self) -> tuple[Placeholder, ...]:
        return tuple(s for ln in self.lines for s in ln.segments if isinstance(s, Placeholder))

    @functools.cached_property
    def names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.placeholders)

    def fill(self, values: Mapping[str, str]) -> str:
        """Substitute in one pass; inserted values are never scanned again."""
        out: list[str] = []
        dropped_between_blanks = False
        for line in self.lines:
            if line.sole is not None and not _value(values, line.sole):
                # An empty optional block between two blank lines leaves one blank line, not two.
                dropped_between_blanks = bool(out) and not out[-1].strip()
                continue
            text = "".join(seg if isinstance(seg, str) else _value(values, seg) for seg in line.segments)
            if dropped_between_blanks and not text.strip():
                dropped_between_blanks = False
                continue
            dropped_between_blanks = False
            out.append(text)
        return "\n".join(out)


def _value(values: Mapping[str, str], p: Placeholder) -> str:
    value = values[p.name]
    return value if value else p.default


def _parse_line(line: str, number: int) -> PatternLine:
    segments: list[str | Placeholder] = []
    literal: list[str] = []
    i = 0
    n = len(line)
    while i < n:
        ch = line[i]
        if ch == "{":
            if line.startswith("{{", i):
                literal.append("{")
                i += 2
                continue
            end = line.find("}", i + 1)
            if end < 0:
                raise _PatternError("unclosed '{' (write '{{' for a literal brace)", number, i + 1)
            body = line[i + 1:end]
            name, bar, default = body.partition("|")
            name = name.strip()
            if "{" in body:
                raise _PatternError("'{' inside a placeholder (write '{{' for a literal brace)",
                                    number, i + 2 + body.index("{"))
            if not _NAME_RE.match(name):
                shown = "{" + body + "}"
                raise _PatternError(
                    f"malformed placeholder {shown!r}: use {{name}} or {{name|default}} with a "
                    "lowercase variable name, and '{{' / '}}' for literal braces", number, i + 1)
            if literal:
                segments.append("".join(literal))
                literal = []
            segments.append(Placeholder(name, default if bar else "", number, i + 1))
            i = end + 1
            continue
        if ch == "}":
            if line.startswith("}}", i):
                literal.append("}")
                i += 2
                continue
            raise _PatternError("unmatched '}' (write '}}' for a literal brace)", number, i + 1)
        literal.append(ch)
        i += 1
    if literal:
        segments.append("".join(literal))
    placeholders = [s for s in segments if isinstance(s, Placeholder)]
    sole = None
    if len(placeholders) == 1 and all(isinstance(s, Placeholder) or not s.strip() for s in segments):
        sole = placeholders[0]
    return PatternLine(tuple(segments), sole)


# --------------------------------------------------------------------------- the template


@dataclass(frozen=True)
class MessageTemplate:
    role: str
    content: str
    pattern: TextPattern


@dataclass(frozen=True)
class ExampleFormat:
    """How one few-shot example is written, and how the block is assembled."""

    pattern: TextPattern
    header: str = ""
    joiner: str = "\n\n"


@dataclass
class Template:
    name: str
    description: str
    messages: tuple[MessageTemplate, ...]
    #: The output spec as written: keys may still hold ``{kpi}``/``{aspect}``;
    #: render_prompt fills them and adopts the quality's scale where asked.
    output: OutputSpec
    #: Every variable the messages use.
    variables: frozenset[str]
    aspects: dict[str, str] = field(default_factory=dict)
    kpis: dict[str, str] = field(default_factory=dict)
    source: str = ""
    level: str = "turn"
    #: Other names of aspects (a dataset's quality names): alias -> aspect.
    aspect_aliases: dict[str, str] = field(default_factory=dict)
    constants: dict[str, str] = field(default_factory=dict)
    examples: ExampleFormat | None = None
    #: Likert templates that rate on the judged quality's own scale (FED's 0-2, 0-4, ...).
    scale_from_quality: bool = False
    #: The TOML text, kept for display and for saving a copy.
    text: str = ""
    output_patterns: dict[str, TextPattern] = field(default_factory=dict)

    @property
    def accepts_examples(self) -> bool:
        return "examples" in self.variables

    def uses(self, variable: str) -> bool:
        return variable in self.variables

    @property
    def needs_aspect(self) -> bool:
        return bool({"aspect", "aspect_definition"} & self.variables) or any(
            "aspect" in p.names for p in self.output_patterns.values())

    @property
    def needs_kpi(self) -> bool:
        return bool({"kpi", "kpi_definition"} & self.variables) or any(
            "kpi" in p.names for p in self.output_patterns.values())

    def resolve_aspect(self, name: str | None) -> str | None:
        """The aspect a name (an aspect, an alias or a dataset's quality name) refers to."""
        return _resolve(name, self.aspects, self.aspect_aliases)

    def resolve_kpi(self, name: str | None) -> str | None:
        return _resolve(name, self.kpis, {})


def normalize_name(name: str) -> str:
    """'Semantically appropriate', 'semantically_appropriate' -> 'semantically-appropriate'."""
    return re.sub(r"[\s_\-]+", "-", name.strip().lower())


def _resolve(name: str | None, table: Mapping[str, str], aliases: Mapping[str, str]) -> str | None:
    if not name:
        return None
    wanted = normalize_name(name)
    for key in table:
        if normalize_name(key) == wanted:
            return key
    for alias, target in aliases.items():
        if normalize_name(alias) == wanted:
            return target
    return None


# --------------------------------------------------------------------------- parsing


def parse_template(text: str, source: str = "<template>") -> Template:
    """Parse and validate one template; every problem is a TemplateError with a position."""
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message, line, column = toml_error_position(str(exc), text)
        raise TemplateError(f"not valid TOML: {message}", source=source, line=line, column=column) from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise TemplateError("not valid TOML: arrays or tables nested too deeply", source=source) from None
    return _Parser(text, source).build(raw)


def toml_error_position(message: str, text: str) -> tuple[str, int | None, int | None]:
    m = re.search(r"\s*\(at line (\d+), column (\d+)\)\s*$", message)
    if m:
        return message[:m.start()], int(m.group(1)), int(m.group(2))
    if "(at end of document)" in message:
        lines = text.split("\n")
        return message.replace(" (at end of document)", " at the end of the file"), len(lines), len(lines[-1]) + 1
    return message, None, None


class _Parser:
    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self._search_from = 0

    def error(self, message: str, line: int | None = None, column: int | None = None) -> TemplateError:
        return TemplateError(message, source=self.source, line=line, column=column)

    def key_line(self, key: str) -> int | None:
        """Best-effort line of a key or a table header, for messages about its value."""
        m = re.search(rf"(?m)^[ \t]*(\[+[ \t]*{re.escape(key)}[ \t]*\]+|{re.escape(key)}[ \t]*=)", self.text)
        return self.text.count("\n", 0, m.start()) + 1 if m else None

    def pattern(self, value: str, where: str, allowed: Iterable[str], allowed_label: str) -> TextPattern:
        """Parse a text holding placeholders; positions are mapped back into the file."""
        offset = self.text.find(value, self._search_from) if value else -1
        if offset < 0 and value:
            offset = self.text.find(value)
        if offset >= 0:
            self._search_from = offset + len(value)
        try:
            pattern = TextPattern.parse(value)
        except _PatternError as exc:
            line, column = self.file_position(offset, exc.line, exc.column)
            raise self.error(f"{where}: {exc.message}", line, column) from None
        known = set(allowed)
        for p in pattern.placeholders:
            if p.name not in known:
                line, column = self.file_position(offset, p.line, p.column)
                raise self.error(
                    f"{where}: unknown variable {{{p.name}}} ({allowed_label}: "
                    f"{', '.join(sorted(known))})", line, column)
        return pattern

    def file_position(self, offset: int, line: int, column: int) -> tuple[int | None, int | None]:
        if offset < 0:
            # The value was written with escapes, so it does not occur verbatim in the file.
            return None, None
        start_line = self.text.count("\n", 0, offset) + 1
        if line == 1:
            start_col = offset - (self.text.rfind("\n", 0, offset) + 1) + 1
            return start_line, start_col + column - 1
        return start_line + line - 1, column

    def build(self, raw: Mapping[str, Any]) -> Template:
        unknown = sorted(set(raw) - _TOP_KEYS)
        if unknown:
            raise self.error(f"unknown key {unknown[0]!r} (allowed: {', '.join(sorted(_TOP_KEYS))})",
                             self.key_line(unknown[0]))
        name = self.string(raw, "name", required=True)
        if not _TEMPLATE_NAME_RE.match(name):
            raise self.error(f"name {name!r} must be letters, digits, '-', '_' or '.'", self.key_line("name"))
        description = self.string(raw, "description", default="")
        level = self.string(raw, "level", default="turn")
        if level not in LEVELS:
            raise self.error(f"level must be 'turn' or 'dialog', not {level!r}", self.key_line("level"))

        constants = self.string_table(raw, "constants")
        for key in constants:
            if not _NAME_RE.match(key):
                raise self.error(f"constant {key!r}: names are lowercase letters, digits and '_'",
                                 self.key_line("constants"))
            if key in VARIABLES or key in EXAMPLE_VARIABLES:
                raise self.error(f"constant {key!r} has the name of a built-in variable",
                                 self.key_line("constants"))
        aspects = self.string_table(raw, "aspects")
        aliases = self.string_table(raw, "aspect_aliases")
        for alias, target in aliases.items():
            if target not in aspects:
                raise self.error(f"aspect_aliases.{alias} points at {target!r}, which is not in [aspects]",
                                 self.key_line("aspect_aliases"))
        kpis = self.string_table(raw, "kpis")

        output_raw = raw.get("output")
        if not isinstance(output_raw, Mapping):
            raise self.error("an [output] table is required", self.key_line("output"))
        output, scale_from_quality = self.output(output_raw)

        examples = self.example_format(raw.get("examples"), constants)
        messages = self.messages(raw.get("messages"), constants)
        variables = frozenset(n for m in messages for n in m.pattern.names)

        key_names = set(KEY_VARIABLES) | set(constants)
        output_patterns: dict[str, TextPattern] = {}
        for key in ("score_key", "reasoning_key", "relevancy_key", "answer_prefix"):
            value = getattr(output, key)
            if value:
                output_patterns[key] = self.pattern(value, f"output.{key}", key_names, "allowed here")

        template = Template(
            name=name, description=description, messages=messages, output=output,
            variables=variables, aspects=aspects, kpis=kpis, source=self.source, level=level,
            aspect_aliases=aliases, constants=constants, examples=examples,
            scale_from_quality=scale_from_quality, text=self.text, output_patterns=output_patterns,
        )
        self.check_consistency(template)
        return template

    def check_consistency(self, t: Template) -> None:
        if "aspect_definition" in t.variables and not t.aspects:
            raise self.error("the messages use {aspect_definition} but there is no [aspects] table",
                             self.key_line("messages"))
        if "kpi_definition" in t.variables and not t.kpis:
            raise self.error("the messages use {kpi_definition} but there is no [kpis] table",
                             self.key_line("messages"))
        if t.examples is not None and not t.accepts_examples:
            raise self.error("[examples] is set but no message uses {examples}", self.key_line("examples"))
        if t.accepts_examples and t.examples is None:
            raise self.error("a message uses {examples} but there is no [examples] table with a format",
                             self.key_line("messages"))
        pair_slots = {"response_a", "response_b"}
        if t.output.kind is OutputKind.PAIRWISE and not pair_slots <= t.variables:
            raise self.error("messages: a pairwise template must show both replies: use {response_a} and {response_b}",
                             self.key_line("messages"))
        if t.output.kind is not OutputKind.PAIRWISE and pair_slots & t.variables:
            raise self.error("messages: {response_a} and {response_b} are for pairwise templates (output.kind = 'pairwise')",
                             self.key_line("messages"))
        if t.level == "dialog" and "response" in t.variables:
            raise self.error("a dialog-level template rates whole dialogues and cannot use {response}",
                             self.key_line("level"))
        # The judge must see what it judges: without it, every answer is a guess that still parses.
        if t.level == "dialog" and not {"context", "history"} & t.variables:
            raise self.error("messages: a dialog-level template must show the dialogue it rates: use {context}",
                             self.key_line("messages"))
        if t.level != "dialog" and t.output.kind is not OutputKind.PAIRWISE and "response" not in t.variables:
            raise self.error("messages: no message shows the reply being judged: use {response}",
                             self.key_line("messages"))

    def string(self, raw: Mapping[str, Any], key: str, *, required: bool = False, default: str = "") -> str:
        if key not in raw:
            if required:
                raise self.error(f"{key!r} is required")
            return default
        value = raw[key]
        if not isinstance(value, str):
            raise self.error(f"{key} must be a string, not {type(value).__name__}", self.key_line(key))
        return value

    def string_table(self, raw: Mapping[str, Any], key: str) -> dict[str, str]:
        table = raw.get(key, {})
        if not isinstance(table, Mapping):
            raise self.error(f"[{key}] must be a table of name = text", self.key_line(key))
        out: dict[str, str] = {}
        for k, v in table.items():
            if not isinstance(v, str):
                raise self.error(f"{key}.{k} must be a string, not {type(v).__name__}", self.key_line(key))
            out[k] = v
        return out

    def messages(self, raw: Any, constants: Mapping[str, str]) -> tuple[MessageTemplate, ...]:
        line = self.key_line("messages")
        if not isinstance(raw, list) or not raw:
            raise self.error("at least one [[messages]] table (role and content) is required", line)
        allowed = set(VARIABLES) | set(constants)
        out = []
        for i, m in enumerate(raw, start=1):
            where = f"messages[{i}]"
            if not isinstance(m, Mapping):
                raise self.error(f"{where} must be a table with role and content", line)
            extra = sorted(set(m) - {"role", "content"})
            if extra:
                raise self.error(f"{where}: unknown key {extra[0]!r} (allowed: content, role)", line)
            role, content = m.get("role"), m.get("content")
            if role not in ROLES:
                raise self.error(f"{where}.role must be one of {', '.join(ROLES)}, not {role!r}", line)
            if not isinstance(content, str):
                raise self.error(f"{where}.content must be a string", line)
            out.append(MessageTemplate(role, content, self.pattern(content, where, allowed, "known")))
        return tuple(out)

    def example_format(self, raw: Any, constants: Mapping[str, str]) -> ExampleFormat | None:
        if raw is None:
            return None
        line = self.key_line("examples")
        if not isinstance(raw, Mapping):
            raise self.error("[examples] must be a table with format, header and joiner", line)
        extra = sorted(set(raw) - _EXAMPLE_KEYS)
        if extra:
            raise self.error(f"examples: unknown key {extra[0]!r} (allowed: {', '.join(sorted(_EXAMPLE_KEYS))})",
                             line)
        fmt = raw.get("format")
        if not isinstance(fmt, str) or not fmt.strip():
            raise self.error("examples.format (the text of one example) is required", line)
        for key in ("header", "joiner"):
            if key in raw and not isinstance(raw[key], str):
                raise self.error(f"examples.{key} must be a string", line)
        pattern = self.pattern(fmt, "examples.format", set(EXAMPLE_VARIABLES) | set(constants), "known")
        if "rating" not in pattern.names:
            raise self.error("examples.format must show the example's {rating}", line)
        return ExampleFormat(pattern, header=raw.get("header", ""), joiner=raw.get("joiner", "\n\n"))

    def output(self, raw: Mapping[str, Any]) -> tuple[OutputSpec, bool]:
        line = self.key_line("output")
        extra = sorted(set(raw) - _OUTPUT_KEYS)
        if extra:
            raise self.error(f"output: unknown key {extra[0]!r} (allowed: {', '.join(sorted(_OUTPUT_KEYS))})",
                             line)
        try:
            kind = OutputKind(raw.get("kind"))
        except ValueError:
            kinds = ", ".join(k.value for k in OutputKind)
            raise self.error(f"output.kind must be one of {kinds}, not {raw.get('kind')!r}", line) from None
        if kind is OutputKind.LABEL and isinstance(raw.get("choices"), list) and len(raw["choices"]) > 1:
            # A label output scores a label's position: 0 .. number of labels - 1.
            defaults = (0.0, float(len(raw["choices"]) - 1))
        else:
            defaults = {OutputKind.LIKERT: (1.0, 5.0)}.get(kind, (0.0, 1.0))
        lo = self.number(raw, "min", defaults[0], line)
        hi = self.number(raw, "max", defaults[1], line)
        if not hi > lo:
            raise self.error(f"output.max ({hi:g}) must be greater than output.min ({lo:g})", line)
        if kind in (OutputKind.BINARY, OutputKind.YESNO) and (lo, hi) != (0.0, 1.0):
            raise self.error(f"a {kind.value} output is scored 0-1; drop output.min/max", line)

        scale = raw.get("scale", "fixed")
        if scale not in ("fixed", "quality"):
            raise self.error("output.scale must be 'fixed' or 'quality'", line)
        if scale == "quality" and kind not in (OutputKind.LIKERT, OutputKind.LABEL):
            raise self.error("output.scale = 'quality' is only for likert and label outputs", line)
        if kind is OutputKind.LABEL and scale != "quality" and not raw.get("choices"):
            raise self.error("a label output needs output.choices (the labels), or output.scale = 'quality' "
                             "to answer with the judged quality's own labels", line)

        choices = raw.get("choices")
        if choices is None:
            choices = _default_choices(kind, lo, hi)
        if not isinstance(choices, list) or not all(isinstance(c, str) and c.strip() for c in choices):
            raise self.error("output.choices must be a list of non-empty strings", line)
        if kind is OutputKind.PAIRWISE:
            _check_pairwise_output(self, raw, choices, lo, hi, line)
        try:
            values = OutputSpec(kind, lo, hi, tuple(choices)).choice_values()
        except ValueError:
            raise self.error("output.choices must be numbers, or 'yes' and 'no'", line) from None
        if kind is not OutputKind.PAIRWISE and values and (values != sorted(values) or len(set(values)) != len(values)):
            raise self.error("output.choices must be distinct and in scale order (lowest first)", line)
        for c, v in zip(choices, values):
            if not lo - 1e-9 <= v <= hi + 1e-9:
                raise self.error(f"output.choices: {c!r} is outside {lo:g}-{hi:g}", line)
        if kind is OutputKind.YESNO and sorted(c.strip().lower() for c in choices) != ["no", "yes"]:
            raise self.error("a yesno output needs choices 'no' and 'yes' (in any case)", line)
        if kind is OutputKind.LIKERT and not (float(lo).is_integer() and float(hi).is_integer()):
            raise self.error("a likert output needs whole-number min and max", line)

        raw_modes = raw.get("modes", ["generate"])
        if not isinstance(raw_modes, list) or not raw_modes:
            raise self.error("output.modes must be a non-empty list", line)
        modes = []
        for m in raw_modes:
            try:
                modes.append(ScoringMode(m))
            except ValueError:
                allowed = ", ".join(x.value for x in ScoringMode)
                raise self.error(f"output.modes: unknown mode {m!r} (allowed: {allowed})", line) from None
        labels_from_quality = kind is OutputKind.LABEL and scale == "quality"
        if (ScoringMode.LOGPROB in modes or ScoringMode.YESNO in modes) and not choices and not labels_from_quality:
            raise self.error("probability modes (logprob, yesno) need output.choices", line)
        if ScoringMode.YESNO in modes and kind is not OutputKind.YESNO:
            raise self.error("the yesno mode needs output.kind = 'yesno'", line)

        keys: dict[str, str | None] = {}
        for key in ("score_key", "reasoning_key", "relevancy_key"):
            value = raw.get(key)
            if value is not None and (not isinstance(value, str) or not value.strip()):
                raise self.error(f"output.{key} must be a non-empty string", line)
            keys[key] = value
        if kind is OutputKind.JSON and not keys["score_key"]:
            raise self.error("a json output needs output.score_key (the key holding the score)", line)
        prefix = raw.get("answer_prefix", "")
        if not isinstance(prefix, str):
            raise self.error("output.answer_prefix must be a string", line)

        spec = OutputSpec(kind=kind, min=lo, max=hi, choices=tuple(choices), answer_prefix=prefix,
                          modes=tuple(modes), **keys)
        return spec, scale == "quality"

    def number(self, raw: Mapping[str, Any], key: str, default: float, line: int | None) -> float:
        value = raw.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(f"output.{key} must be a number", line)
        return float(value)


def _check_pairwise_output(parser: Any, raw: Mapping[str, Any], choices: list[str], lo: float, hi: float,
                           line: int | None) -> None:
    """A pairwise verdict: choices first-wins, second-wins[, tie], distinct; scored p(first wins) on 0-1."""
    if (lo, hi) != (0.0, 1.0):
        raise parser.error("a pairwise output is scored 0-1 (p(first wins)); drop output.min/max", line)
    if len(choices) not in (2, 3):
        raise parser.error("a pairwise output needs output.choices = [first wins, second wins] or "
                           "[first wins, second wins, tie], e.g. [\"A\", \"B\", \"tie\"]", line)
    if len({c.strip().lower() for c in choices}) != len(choices):
        raise parser.error("output.choices of a pairwise output must be distinct", line)


def _default_choices(kind: OutputKind, lo: float, hi: float) -> list[str]:
    if kind is OutputKind.LIKERT and float(lo).is_integer() and float(hi).is_integer():
        return [str(v) for v in range(int(lo), int(hi) + 1)]
    if kind is OutputKind.BINARY:
        return ["0", "1"]
    if kind is OutputKind.YESNO:
        return ["no", "yes"]
    if kind is OutputKind.PAIRWISE:
        return ["A", "B", "tie"]
    return []


# --------------------------------------------------------------------------- loading


def shipped_template_dir() -> Any:
    """The templates bundled with dialjudge (an importlib Traversable)."""
    return resources.files("dialjudge.prompts") / "templates"


def user_template_dir() -> Path:
    return user_data_dir() / "templates"


def load_templates(extra_dirs: Sequence[Path] = (), *,
                   errors: list[TemplateError] | None = None) -> dict[str, Template]:
    """Shipped templates, then ``extra_dirs``, then ``<user_data_dir>/templates``.

    A later file with the same name overrides an earlier one. When ``errors``
    is given, broken user files are collected there and skipped (the TUI lists
    them); otherwise the first one raises.
    """
    found: dict[str, Template] = {}
    shipped = shipped_template_dir()
    for entry in sorted(shipped.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            # A broken shipped template is a bug in dialjudge: always raise.
            t = _parse_file_text(entry.read_text(encoding="utf-8"), str(entry), entry.name)
            found[t.name] = t
    for directory in extra_dirs:
        if not Path(directory).is_dir():
            raise ConfigError(f"template folder {directory} does not exist")
        _load_dir(Path(directory), found, errors)
    user_dir = user_template_dir()
    if user_dir.is_dir():
        _load_dir(user_dir, found, errors)
    return found


def get_template(name: str, extra_dirs: Sequence[Path] = ()) -> Template:
    templates = load_templates(extra_dirs)
    try:
        return templates[name]
    except KeyError:
        raise TemplateError(f"no template named {name!r} (known: {', '.join(sorted(templates))})") from None


def load_template_file(path: Path) -> Template:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateError(f"cannot read: {exc.strerror}", source=str(path)) from None
    except UnicodeDecodeError:
        raise TemplateError("not UTF-8 text", source=str(path)) from None
    return _parse_file_text(text, str(path), path.name)


def _load_dir(directory: Path, found: dict[str, Template], errors: list[TemplateError] | None) -> None:
    for path in sorted(directory.glob("*.toml")):
        if path.name == PERSONAS_FILE:
            continue
        try:
            t = load_template_file(path)
        except TemplateError as exc:
            if errors is None:
                raise
            errors.append(exc)
            continue
        found[t.name] = t


def _parse_file_text(text: str, source: str, filename: str) -> Template:
    template = parse_template(text, source)
    stem = filename[: -len(".toml")]
    if template.name != stem:
        raise TemplateError(f"name {template.name!r} differs from the file name {filename!r}; "
                            "name the file after the template", source=source)
    return template


# --------------------------------------------------------------------------- identity: save as, override, revert

_NAME_LINE = re.compile(r'^(\s*name\s*=\s*)("(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\')', re.MULTILINE)


def renamed_template_text(text: str, new_name: str) -> str:
    """``text`` with its top-level ``name`` set to ``new_name`` (save as), checked by parsing it."""
    _check_name(new_name, "template")
    table_start = re.search(r"^\s*\[", text, re.MULTILINE)
    head_end = table_start.start() if table_start else len(text)
    match = _NAME_LINE.search(text, 0, head_end)
    if match is None:
        raise TemplateError("the template has no top-level name = \"…\" line to rename")
    renamed = text[: match.start(2)] + toml_string(new_name) + text[match.end(2):]
    parsed = parse_template(renamed, f"{new_name}.toml")
    if parsed.name != new_name:  # pragma: no cover - the regex found another key
        raise TemplateError(f"renaming the template gave name {parsed.name!r}, not {new_name!r}")
    return renamed


def is_shipped_name(name: str) -> bool:
    """A template of this name ships with dialjudge (a user file of that name overrides it)."""
    return (shipped_template_dir() / f"{name}.toml").is_file()


def overridden_names(templates: Mapping[str, Template]) -> frozenset[str]:
    """Names of shipped templates that a user's file takes the place of."""
    shipped_dir = str(shipped_template_dir())
    return frozenset(name for name, t in templates.items()
                     if is_shipped_name(name) and not t.source.startswith(shipped_dir))


def revert_override(template: Template) -> Path:
    """Put the shipped template back: the user's overriding file is renamed ``NAME.toml.overridden``
    (kept, no longer loaded). Returns the new path."""
    if not is_shipped_name(template.name):
        raise TemplateError(f"{template.name!r} is not a shipped template: there is nothing to revert to")
    path = Path(template.source)
    if str(path).startswith(str(shipped_template_dir())) or not path.is_file():
        raise TemplateError(f"{template.name!r} is the shipped template already")
    kept = path.with_name(path.name + ".overridden")
    n = 1
    while kept.exists():
        n += 1
        kept = path.with_name(f"{path.name}.overridden-{n}")
    path.rename(kept)
    return kept
