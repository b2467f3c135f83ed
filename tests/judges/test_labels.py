"""Label outputs (templates, parsing, scoring) and a judge's answers mapped onto a quality's labels."""

from __future__ import annotations

import pytest

from dialjudge.core.config import Sampling
from dialjudge.core.errors import TemplateError
from dialjudge.core.judges.post_run.labels import LabelMappingError, label_mapping
from dialjudge.core.judges.prompts.render import render_prompt, resolve_output
from dialjudge.core.judges.prompts.templates import get_template, parse_template
from dialjudge.core.judges.run.parsing import parse_output
from dialjudge.core.judges.run.scoring import score_result
from dialjudge.core.judges.types import (
    BackendResult,
    JudgeRequest,
    Judgment,
    OutputKind,
    OutputSpec,
    ScoringMode,
)
from dialjudge.core.model import Example, Rating, Scale, ScaleKind, Turn

SEVERITY = Scale(ScaleKind.CATEGORICAL, labels=("none", "mild", "not severe", "severe"))
YES_NO = Scale(ScaleKind.CATEGORICAL, labels=("No", "Yes"))


def _example(scale: Scale, value: str = "none") -> Example:
    return Example("e1", "e1", (Turn("A", "hi there"),), "hello", ratings={"q": Rating((value,), scale)})


def test_label_template_takes_the_quality_labels() -> None:
    template = get_template("label-choice")
    prompt = render_prompt(template, _example(SEVERITY), quality="q")
    assert prompt.output.kind is OutputKind.LABEL
    assert prompt.output.choices == SEVERITY.labels and prompt.output.max == 3
    assert "none, mild, not severe or severe" in prompt.text


def test_label_template_refuses_a_numeric_quality() -> None:
    template = get_template("label-choice")
    with pytest.raises(TemplateError, match="has a ordinal scale|has an? ordinal scale"):
        resolve_output(template, quality="q", scale=Scale(ScaleKind.ORDINAL, 1, 5))


def test_label_output_needs_labels_or_the_quality_scale() -> None:
    text = '''name = "x"\n[output]\nkind = "label"\n[[messages]]\nrole = "user"\ncontent = "{response}"\n'''
    with pytest.raises(TemplateError, match="a label output needs output.choices"):
        parse_template(text)


@pytest.mark.parametrize(("raw", "score"), [
    ("Answer: severe", 3.0),
    ("The reply is rude but Answer: not severe", 2.0),  # the longest label wins over "severe"
    ("mild", 1.0),
    ("I think it is mild, not none. Label: none", 0.0),
])
def test_parse_label(raw: str, score: float) -> None:
    spec = OutputSpec(OutputKind.LABEL, 0, 3, SEVERITY.labels)
    assert parse_output(raw, spec).score == score


def test_parse_label_failures_say_why() -> None:
    spec = OutputSpec(OutputKind.LABEL, 0, 3, SEVERITY.labels)
    assert "several labels" in (parse_output("mild or severe", spec).error or "")
    assert "no label" in (parse_output("no idea", spec).error or "")


def test_logprob_label_is_the_most_probable_label_not_an_average() -> None:
    spec = OutputSpec(OutputKind.LABEL, 0, 3, SEVERITY.labels, modes=(ScoringMode.LOGPROB,))
    prompt = render_prompt(get_template("label-choice"), _example(SEVERITY), quality="q")
    request = JudgeRequest("e1", prompt, ScoringMode.LOGPROB, Sampling())
    result = BackendResult(choice_probs={"none": 0.45, "mild": 0.0, "not severe": 0.1, "severe": 0.45000001})
    judgment = score_result(request, result, "j")
    assert judgment.score == 3.0  # the expected position would be 1.8: "not severe"
    assert spec.choice_values() == [0.0, 1.0, 2.0, 3.0]


def _judgment(score: float | None, normalized: float | None, distribution=None) -> Judgment:
    return Judgment("e1", "j", ScoringMode.YESNO, "h", "", score, normalized, distribution=distribution)


def test_yes_no_answers_map_onto_the_yes_label() -> None:
    spec = get_template("label-yesno").output
    mapping = label_mapping(spec, ScoringMode.YESNO, YES_NO, "q")
    assert (mapping.yes_label, mapping.no_label, mapping.positive) == ("Yes", "No", "Yes")
    labels, probs = mapping.answers({"a": _judgment(0.7, 0.7), "b": _judgment(0.2, 0.2), "c": _judgment(None, None)})
    assert labels == {"a": "Yes", "b": "No", "c": None}
    assert probs == {"a": 0.7, "b": 0.2, "c": None}
    # generate mode answers carry no probability, so no AUC
    assert label_mapping(spec, ScoringMode.GENERATE, YES_NO, "q").answers({"a": _judgment(1.0, 1.0)})[1] is None


def test_yes_label_must_be_named_when_the_labels_do_not_say_it() -> None:
    spec = get_template("label-yesno").output
    safe = Scale(ScaleKind.CATEGORICAL, labels=("unsafe", "safe"))
    with pytest.raises(LabelMappingError, match="--yes-label"):
        label_mapping(spec, ScoringMode.YESNO, safe, "q")
    mapping = label_mapping(spec, ScoringMode.YESNO, safe, "q", yes_label="SAFE")
    assert (mapping.yes_label, mapping.no_label) == ("safe", "unsafe")
    with pytest.raises(LabelMappingError, match="not a label"):
        label_mapping(spec, ScoringMode.YESNO, safe, "q", yes_label="maybe")


def test_templates_that_name_no_label_are_refused_with_the_fix() -> None:
    likert = get_template("likert-1to5").output
    with pytest.raises(LabelMappingError, match="label-choice"):
        label_mapping(likert, ScoringMode.GENERATE, YES_NO, "q")
    with pytest.raises(LabelMappingError, match="4 labels"):
        label_mapping(get_template("label-yesno").output, ScoringMode.YESNO, SEVERITY, "q")


def test_inca_json_zero_one_maps_onto_a_binary_scale() -> None:
    spec = get_template("inca-kpi").output
    binary = Scale(ScaleKind.BINARY, 0, 1)
    mapping = label_mapping(spec, ScoringMode.LOGPROB, binary, "kpi")
    assert (mapping.yes_label, mapping.no_label) == (1.0, 0.0)
    labels, probs = mapping.answers({"a": _judgment(0.8, 0.8)})
    assert labels == {"a": 1.0} and probs == {"a": 0.8}


def test_label_answers_give_the_positive_probability_on_two_labels() -> None:
    spec = resolve_output(get_template("label-choice"), quality="q", scale=YES_NO)
    mapping = label_mapping(spec, ScoringMode.LOGPROB, YES_NO, "q")
    labels, probs = mapping.answers({"a": _judgment(1.0, 1.0, {"No": 0.2, "Yes": 0.6})})
    assert labels == {"a": "Yes"} and probs == {"a": pytest.approx(0.75)}


def test_reasoning_keeps_the_words_the_model_copied_from_the_prompt() -> None:
    # Echo removal blanks copied prompt text so no score is read from it; the reasoning shown keeps it.
    spec = OutputSpec(OutputKind.LIKERT, 1, 5, tuple("12345"))
    prompt = "Rate the coherence of the response to the conversation about the weather in Paris today."
    raw = "The response to the conversation about the weather in Paris today is on topic. Score: 4"
    parsed = parse_output(raw, spec, prompt=prompt)
    assert parsed.score == 4.0
    assert parsed.reasoning == "The response to the conversation about the weather in Paris today is on topic."
