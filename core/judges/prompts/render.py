"""Render one item through a template into the exact prompt a backend receives.

Rendering never evaluates anything in the data: each template text was parsed
once into literal pieces and placeholders (see :mod:`templates`), and values
are inserted in a single pass. Missing optional values (no fact, no persona,
zero-shot) render empty; a message that renders empty is left out.

Few-shot examples show their human rating on the template's own scale: the
dataset's value is normalised to 0-1 and mapped onto the template's min-max;
Likert, binary and yes/no outputs then take the nearest allowed answer (ties
go up, so yes/no thresholds at 0.5), continuous outputs keep two decimals.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Sequence

from ...errors import TemplateError
from ...model import Aggregation, Example, Level, Scale, ScaleKind
from ..types import Message, OutputKind, OutputSpec, RenderedPrompt
from .personas import Persona
from .templates import Template


def render_prompt(template: Template, example: Example, *, aspect: str | None = None,
                  persona: Persona | None = None, fewshot: Sequence[Example] = (),
                  quality: str | None = None, kpi: str | None = None,
                  scale: Scale | None = None,
                  aggregation: Aggregation = Aggregation.MEAN) -> RenderedPrompt:
    """The prompt for ``example``.

    ``aspect`` / ``kpi`` default to ``quality`` when the template knows it by
    that name (or an alias). ``scale`` overrides the scale a ``scale =
    "quality"`` template adopts; otherwise the item's (or an example's)
    rating scale for ``quality`` is used. Few-shot ratings are the
    ``aggregation`` of the annotators' values.
    """
    _check_level(template, example)
    aspect_name = _pick(template, "aspect", aspect, quality, template.resolve_aspect,
                        list(template.aspects), template.needs_aspect)
    kpi_name = _pick(template, "KPI", kpi, quality, template.resolve_kpi,
                     list(template.kpis), template.needs_kpi)
    output = resolve_output(template, example, fewshot, quality, scale)

    keys = {"kpi": kpi_name or "", "aspect": aspect_name or "", "quality": quality or "",
            "scale_min": _number(output.min), "scale_max": _number(output.max), **template.constants}
    filled: dict[str, Any] = {k: p.fill(keys) for k, p in template.output_patterns.items()}
    output = replace(output, **filled)

    values = {
        **template.constants,
        **_item_values(example),
        "aspect": aspect_name or "",
        "aspect_definition": template.aspects.get(aspect_name, "") if aspect_name else "",
        "kpi": kpi_name or "",
        "kpi_definition": template.kpis.get(kpi_name, "") if kpi_name else "",
        "persona": persona.text.strip() if persona else "",
        "quality": quality or "",
        "scale_min": keys["scale_min"],
        "scale_max": keys["scale_max"],
        "scale_points": _points(output),
        "next_index": str(len(fewshot) + 1),
        "examples": render_examples(template, fewshot, output, quality, aggregation, keys),
    }
    messages = []
    for m in template.messages:
        content = m.pattern.fill(values).strip("\n")
        if content.strip():
            messages.append(Message(m.role, content))
    if not messages:
        raise TemplateError(f"template {template.name!r} rendered no message", source=template.source)
    return RenderedPrompt(tuple(messages), output, template.name)


def resolve_output(template: Template, example: Example | None = None, fewshot: Sequence[Example] = (),
                   quality: str | None = None, scale: Scale | None = None) -> OutputSpec:
    """The template's output spec, on the quality's own scale where the template asks for it."""
    output = template.output
    if not template.scale_from_quality:
        return output
    chosen = scale
    if chosen is None and quality:
        for ex in ([example] if example is not None else []) + list(fewshot):
            rating = ex.ratings.get(quality)
            if rating is not None:
                chosen = rating.scale
                break
    if output.kind is OutputKind.LABEL:
        return _label_output(template, output, chosen, quality)
    if chosen is None or chosen.kind not in (ScaleKind.ORDINAL, ScaleKind.BINARY):
        return output  # a continuous or categorical human scale: rate on the template's own points
    assert chosen.min is not None and chosen.max is not None
    if not (float(chosen.min).is_integer() and float(chosen.max).is_integer()):
        return output
    lo, hi = int(chosen.min), int(chosen.max)
    return replace(output, min=float(lo), max=float(hi), choices=tuple(str(v) for v in range(lo, hi + 1)))


def _label_output(template: Template, output: OutputSpec, scale: Scale | None, quality: str | None) -> OutputSpec:
    """A label template answers with the judged quality's own labels (a binary 0/1 scale's are "0", "1")."""
    if scale is not None and scale.kind is ScaleKind.CATEGORICAL and len(scale.labels) >= 2:
        labels = tuple(scale.labels)
    elif scale is not None and scale.kind is ScaleKind.BINARY:
        labels = (_number(scale.min or 0.0), _number(scale.max or 1.0))
    else:
        what = "no rating" if scale is None else (
            f"a {scale.kind.value} scale" if scale.kind is not ScaleKind.CATEGORICAL else "fewer than two labels")
        raise TemplateError(f"template {template.name!r} answers with the judged quality's labels, but "
                            f"{quality or 'the quality'!r} has {what}; pick a quality with a label list",
                            source=template.source)
    return replace(output, min=0.0, max=float(len(labels) - 1), choices=labels)


# --------------------------------------------------------------------------- few-shot ratings


def convert_rating(value: float, scale: Scale, spec: OutputSpec) -> float:
    """A human rating on ``scale`` as a value on the template's scale."""
    unit = min(1.0, max(0.0, scale.normalize(value)))
    target = spec.min + unit * (spec.max - spec.min)
    if spec.kind is OutputKind.CONTINUOUS or not spec.choices:
        return target
    # Nearest allowed answer; ties go to the higher one (2.5 -> 3, yes at exactly 0.5).
    candidates = spec.choice_values()
    return min(candidates, key=lambda c: (round(abs(c - target), 9), -c))


def rating_label(value: float, spec: OutputSpec) -> str:
    """How the template writes a rating: its choice string, or a short decimal."""
    if spec.kind is not OutputKind.CONTINUOUS:
        for choice, v in zip(spec.choices, spec.choice_values()):
            if math.isclose(v, value, abs_tol=1e-9):
                return choice
    rounded = round(value, 2)
    text = f"{rounded:.2f}".rstrip("0")
    return text + "0" if text.endswith(".") else text


def example_rating(example: Example, quality: str, aggregation: Aggregation = Aggregation.MEAN) -> float | None:
    """The example's pooled numeric human rating on ``quality``; None when it has none."""
    rating = example.ratings.get(quality)
    if rating is None or not rating.scale.is_numeric:
        return None
    try:
        value = rating.aggregate(aggregation).value
    except (TypeError, ValueError):
        return None  # a label on a numeric scale (FED's "N/A (...)"): not a rating
    if value is None or isinstance(value, str):
        return None
    return float(value)


def render_examples(template: Template, fewshot: Sequence[Example], output: OutputSpec,
                    quality: str | None, aggregation: Aggregation = Aggregation.MEAN,
                    keys: dict[str, str] | None = None) -> str:
    if not fewshot:
        return ""
    if template.examples is None:
        raise TemplateError(f"template {template.name!r} takes no few-shot examples (it has no "
                            "{examples} slot); run it zero-shot", source=template.source)
    if not quality:
        raise TemplateError("few-shot examples need the quality they were rated on", source=template.source)
    blocks = []
    for index, ex in enumerate(fewshot, start=1):
        value = example_rating(ex, quality, aggregation)
        if value is None:
            raise TemplateError(f"few-shot example {ex.id!r} has no numeric rating on {quality!r}",
                                source=template.source)
        converted = convert_rating(value, ex.ratings[quality].scale, output)
        values = {**template.constants, **(keys or {}), **_item_values(ex), "index": str(index),
                  "rating": rating_label(converted, output)}
        blocks.append(template.examples.pattern.fill(values).strip("\n"))
    block = template.examples.joiner.join(blocks)
    return f"{template.examples.header}{block}" if template.examples.header else block


# --------------------------------------------------------------------------- helpers


def _item_values(ex: Example) -> dict[str, str]:
    history = ex.context[:-1] if ex.context else ()
    return {
        "context": ex.context_text(),
        "response": ex.candidate or "",
        "fact": (ex.fact or "").strip(),
        "reference": "\n".join(r for r in ex.references if r),
        "history": "\n".join(f"{t.speaker}: {t.text}" if t.speaker else t.text for t in history),
        "user_utterance": ex.context[-1].text if ex.context else "",
        "response_a": ex.pair.response_a if ex.pair else "",
        "response_b": ex.pair.response_b if ex.pair else "",
    }


class ItemMismatch(TemplateError):
    """An item of a kind the template does not judge (a whole dialogue for a reply template, a pair for a
    pointwise one). Nothing is wrong in the template's file, so it names none: the run engine names the
    dataset's file and the item instead."""


def _check_level(template: Template, example: Example) -> None:
    if example.is_pairwise and template.output.kind is OutputKind.PAIRWISE:
        return  # a pair of replies to one context (core.judges.run.pairwise)
    if template.output.kind is OutputKind.PAIRWISE:
        raise ItemMismatch(f"template {template.name!r} compares two replies, but item {example.id!r} is one "
                           "reply; run it in pairwise mode (--mode pairwise)")
    if example.is_pairwise:
        raise ItemMismatch(pairwise_refusal(template.name, [example.id]))
    if template.level == "turn" and (example.candidate is None or example.level is Level.DIALOG):
        raise ItemMismatch(
            f"template {template.name!r} rates one response, but item {example.id!r} is a whole "
            "dialogue with no candidate; use a dialog-level template")
    if template.level == "dialog" and example.level is not Level.DIALOG:
        raise ItemMismatch(
            f"template {template.name!r} rates whole dialogues, but item {example.id!r} is a "
            "turn-level response; use a turn-level template")


def pairwise_refusal(template: str, item_ids: Sequence[str]) -> str:
    shown = ", ".join(repr(i) for i in item_ids[:3]) + (f" and {len(item_ids) - 3} more" if len(item_ids) > 3 else "")
    return (f"{shown} {'is a pairwise item' if len(item_ids) == 1 else 'are pairwise items'} (a prompt, two "
            f"responses and which one the humans preferred); template {template!r} judges one response at a time, "
            "so judge them with a pairwise template (e.g. --template pairwise-plain)")


def _pick(template: Template, what: str, explicit: str | None, quality: str | None, resolve,
          known: list[str], needed: bool) -> str | None:
    """The aspect (or KPI) to rate: named explicitly, else the quality when the template knows it."""
    if explicit:
        found = resolve(explicit)
        if found is not None:
            return found
        if known:
            raise TemplateError(f"template {template.name!r} has no {what} {explicit!r} "
                                f"(it knows: {', '.join(known)})", source=template.source)
        return explicit  # the template defines none, so any name goes
    found = resolve(quality)
    if found is not None or not needed:
        return found
    if quality and not known:
        return quality
    if quality:
        raise TemplateError(f"template {template.name!r} has no {what} matching quality {quality!r} "
                            f"(it knows: {', '.join(known)}); name one explicitly", source=template.source)
    raise TemplateError(f"template {template.name!r} needs the {what} to rate", source=template.source)


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def _points(spec: OutputSpec) -> str:
    choices = list(spec.choices)
    if not choices:
        return f"{_number(spec.min)} to {_number(spec.max)}"
    if len(choices) == 1:
        return choices[0]
    return ", ".join(choices[:-1]) + " or " + choices[-1]


__all__ = ["ItemMismatch", "render_prompt", "resolve_output", "convert_rating", "rating_label", "example_rating",
           "render_examples"]
