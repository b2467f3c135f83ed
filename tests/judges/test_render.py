"""render_prompt: literal data, one-pass substitution, aspects/KPIs, scales and few-shot ratings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dialjudge.core.errors import TemplateError
from dialjudge.core.judges.prompts.personas import Persona, load_personas
from dialjudge.core.judges.prompts.render import convert_rating, rating_label, render_prompt, resolve_output
from dialjudge.core.judges.prompts.templates import get_template, parse_template
from dialjudge.core.judges.types import OutputKind, OutputSpec
from dialjudge.core.model import Example, Level, Rating, Scale, ScaleKind, Turn

FED3 = Scale(ScaleKind.ORDINAL, 0, 2)
FED5 = Scale(ScaleKind.ORDINAL, 0, 4)
USR5 = Scale(ScaleKind.ORDINAL, 1, 5)
UNIT = Scale(ScaleKind.CONTINUOUS, 0, 1)
BIN = Scale(ScaleKind.BINARY, 0, 1)

NASTY = "Hi {response} {{x}} {% if a %}$y ${z} {0} {aspect_definition}"


def item(id_: str = "a", group: str = "g1", candidate: str | None = "Nice {name}!", *,
         ratings: dict[str, Rating] | None = None, fact: str | None = None,
         context: tuple[Turn, ...] | None = None, level: Level = Level.TURN) -> Example:
    turns = context or (Turn("User", NASTY), Turn("System", "Sure, $HOME is {{home}}."), Turn("User", "And now?"))
    return Example(id_, group, turns, candidate, fact=fact, ratings=ratings or {}, level=level)


def rated(id_: str, group: str, value: float, scale: Scale = FED3, quality: str = "Interesting",
          candidate: str = "ok") -> Example:
    return item(id_, group, candidate, ratings={quality: Rating((value,), scale)})


# --------------------------------------------------------------------------- safety


def test_data_with_template_syntax_stays_literal() -> None:
    persona = Persona("p", "", "Be {strict} and ${careful} {% raw %}")
    prompt = render_prompt(get_template("adv-0to1"), item(fact="Fact {fact} {{f}}"),
                           aspect="coherence", persona=persona)
    text = prompt.text
    assert NASTY in text
    assert "Sure, $HOME is {{home}}." in text
    assert "Fact {fact} {{f}}" in text
    assert "Be {strict} and ${careful} {% raw %}" in text
    assert "corresponding response: Nice {name}!" in text
    # the value "{response}" inside the dialogue was not substituted again
    assert text.count("Nice {name}!") == 1


def test_every_shipped_template_renders_nasty_data() -> None:
    ratings = {"Interesting": Rating((1,), FED3), "follow-up": Rating((1,), BIN)}
    examples = [item("e1", "g2", "one", ratings=ratings), item("e2", "g3", "two {x}", ratings=ratings)]
    for name in ("adv-0to1", "likert-1to5", "fed-fewshot", "dstc10-yesno", "inca-kpi"):
        t = get_template(name)
        kwargs = {"quality": "Interesting", "aspect": "coherence" if name == "adv-0to1" else None}
        if name == "inca-kpi":
            kwargs = {"quality": "follow-up"}
        prompt = render_prompt(t, item(ratings=ratings), fewshot=examples if t.accepts_examples else (),
                               persona=load_personas()["brand-ambassador"], **kwargs)
        assert "Nice {name}!" in prompt.text, name
        assert "Aurora Motors" in prompt.text, name
        if t.accepts_examples:
            assert "two {x}" in prompt.text, name


# --------------------------------------------------------------------------- optional values


def test_missing_fact_renders_empty_and_neutral_persona_drops_the_system_message() -> None:
    prompt = render_prompt(get_template("adv-0to1"), item(), aspect="fluency",
                           persona=load_personas()["neutral"])
    assert [m.role for m in prompt.messages] == ["user"]
    assert "### the fact : \n" in prompt.messages[0].content
    dstc = render_prompt(get_template("dstc10-yesno"), item())
    assert "Background info: none" in dstc.text
    assert "Example" not in dstc.text  # zero-shot: no example header
    assert "\n\n\n" not in dstc.text


def test_two_candidates_of_one_context_share_the_prompt_up_to_the_response() -> None:
    for name, kwargs in [("adv-0to1", {"aspect": "relevance"}), ("likert-1to5", {"quality": "Interesting"}),
                         ("fed-fewshot", {"quality": "Interesting"}), ("dstc10-yesno", {}),
                         ("inca-kpi", {"kpi": "follow-up"})]:
        t = get_template(name)
        a = render_prompt(t, item("a", candidate="First answer."), **kwargs).text
        b = render_prompt(t, item("b", candidate="Second answer."), **kwargs).text
        shared = os.path.commonprefix([a, b])
        assert a[len(shared):].startswith("First answer."), name
        tail = a[len(shared) + len("First answer."):]
        assert len(tail) < 120, (name, tail)


def test_inca_history_and_user_utterance() -> None:
    t = get_template("inca-kpi")
    prompt = render_prompt(t, item(), quality="follow-up")
    body = prompt.messages[-1].content
    assert "[User Utterance]\nAnd now?\n[System Response]\nNice {name}!" in body
    assert "[Dialog History]\nUser: " + NASTY + "\nSystem: Sure" in body
    single = item(context=(Turn("User", "Open the window."),))
    assert "[Dialog History]\n(no earlier turns)\n" in render_prompt(t, single, kpi="harmful-input").text


def test_inca_output_keys_and_prefix_name_the_kpi() -> None:
    prompt = render_prompt(get_template("inca-kpi"), item(), kpi="implicit-understanding")
    out = prompt.output
    assert out.score_key == "KPI implicit-understanding Score"
    assert out.reasoning_key == "Reasoning KPI implicit-understanding"
    assert out.relevancy_key == "Relevancy KPI implicit-understanding"
    assert out.answer_prefix == '{"KPI implicit-understanding Score":'
    assert '"KPI implicit-understanding Score": 0 or 1' in prompt.messages[0].content


# --------------------------------------------------------------------------- aspects and KPIs


def test_aspect_from_quality_names_and_aliases() -> None:
    fed = get_template("fed-fewshot")
    p = render_prompt(fed, item(), quality="Semantically appropriate")
    assert "rate how semantically appropriate the response is" in p.text
    likert = get_template("likert-1to5")
    assert "Rate the response for groundedness:" in render_prompt(likert, item(), quality="Uses Knowledge").text
    adv = get_template("adv-0to1")
    assert "Define consistency : Consistency refers" in render_prompt(adv, item(), quality="Consistent").text


def test_unknown_or_missing_aspect_is_a_template_error() -> None:
    adv = get_template("adv-0to1")
    with pytest.raises(TemplateError, match="no aspect 'naturalness'.*fluency"):
        render_prompt(adv, item(), aspect="naturalness")
    with pytest.raises(TemplateError, match="no aspect matching quality 'Engaging'"):
        render_prompt(adv, item(), quality="Engaging")
    with pytest.raises(TemplateError, match="needs the aspect"):
        render_prompt(adv, item())
    with pytest.raises(TemplateError, match="no KPI 'speed'"):
        render_prompt(get_template("inca-kpi"), item(), kpi="speed")


def test_explicit_aspect_wins_over_quality() -> None:
    p = render_prompt(get_template("adv-0to1"), item(), aspect="fluency", quality="Coherent")
    assert "Define fluency" in p.text and "coherence" not in p.text.lower().split("define")[1][:20]


# --------------------------------------------------------------------------- scales


def test_fed_template_adopts_the_quality_scale() -> None:
    t = get_template("fed-fewshot")
    overall = render_prompt(t, item(ratings={"Overall": Rating((3,), FED5)}), quality="Overall")
    assert overall.output.choices == ("0", "1", "2", "3", "4") and overall.output.max == 4
    assert 'answer with the line "Rating: r/4"' in overall.text
    understandable = resolve_output(t, item(ratings={"Understandable": Rating((1,), BIN)}),
                                    quality="Understandable")
    assert understandable.choices == ("0", "1")
    assert resolve_output(t, item(), quality="Overall", scale=USR5).choices == ("1", "2", "3", "4", "5")
    # no rating anywhere: the template's own default
    assert resolve_output(t, item(), quality="Overall").choices == ("0", "1", "2")
    # a continuous human scale keeps the template's points
    assert resolve_output(t, item(), quality="x", scale=UNIT).choices == ("0", "1", "2")


def test_fixed_scale_templates_ignore_the_quality_scale() -> None:
    t = get_template("likert-1to5")
    out = render_prompt(t, item(ratings={"Interesting": Rating((1,), FED3)}), quality="Interesting").output
    assert (out.min, out.max) == (1, 5)


# --------------------------------------------------------------------------- few-shot ratings

LIKERT15 = OutputSpec(OutputKind.LIKERT, 1, 5, ("1", "2", "3", "4", "5"))
LIKERT02 = OutputSpec(OutputKind.LIKERT, 0, 2, ("0", "1", "2"))
ZERO_ONE = OutputSpec(OutputKind.CONTINUOUS, 0, 1, tuple(f"{i / 10:.1f}" for i in range(11)))
YESNO = OutputSpec(OutputKind.YESNO, 0, 1, ("No", "Yes"))
BINARY = OutputSpec(OutputKind.JSON, 0, 1, ("0", "1"), score_key="s")


@pytest.mark.parametrize("value,scale,spec,expected,label", [
    # Likert: normalise, map onto min-max, nearest point (ties up)
    (1.4, FED3, LIKERT02, 1.0, "1"),  # FED mean of five annotators
    (1.5, FED3, LIKERT02, 2.0, "2"),
    (0.4, FED3, LIKERT15, 2.0, "2"),  # 0.2 -> 1.8
    (1.6, FED3, LIKERT15, 4.0, "4"),  # 0.8 -> 4.2
    (1.0, FED3, LIKERT15, 3.0, "3"),
    (3.0, USR5, LIKERT15, 3.0, "3"),
    (2.5, FED5, LIKERT15, 4.0, "4"),  # 0.625 -> 3.5 -> ties up
    (0.7, UNIT, LIKERT15, 4.0, "4"),  # 3.8
    (2.0, USR5, LIKERT02, 1.0, "1"),  # 0.25 -> 0.5 -> ties up
    # continuous: mapped, two decimals
    (3.67, USR5, ZERO_ONE, 0.6675, "0.67"),
    (2.0, FED3, ZERO_ONE, 1.0, "1.0"),
    (0.0, FED3, ZERO_ONE, 0.0, "0.0"),
    (1.0, FED3, ZERO_ONE, 0.5, "0.5"),
    # yes/no thresholds at 0.5 (exactly 0.5 is yes)
    (1.0, FED3, YESNO, 1.0, "Yes"),
    (0.9, FED3, YESNO, 0.0, "No"),
    (3.0, USR5, YESNO, 1.0, "Yes"),
    (2.9, USR5, YESNO, 0.0, "No"),
    (0.51, UNIT, YESNO, 1.0, "Yes"),
    # binary JSON score
    (0.6, BIN, BINARY, 1.0, "1"),
    (0.4, BIN, BINARY, 0.0, "0"),
    # out-of-scale values are clipped
    (7.0, USR5, LIKERT15, 5.0, "5"),
    (-1.0, FED3, ZERO_ONE, 0.0, "0.0"),
])
def test_convert_rating(value: float, scale: Scale, spec: OutputSpec, expected: float, label: str) -> None:
    converted = convert_rating(value, scale, spec)
    assert converted == pytest.approx(expected)
    assert rating_label(converted, spec) == label


def test_fewshot_examples_render_with_converted_ratings() -> None:
    shots = [rated("e1", "g2", 0.4, candidate="meh"), rated("e2", "g3", 1.6, candidate="great")]
    fed = render_prompt(get_template("fed-fewshot"), item(ratings={"Interesting": Rating((1,), FED3)}),
                        quality="Interesting", fewshot=shots)
    text = fed.messages[-1].content
    assert "== Example 1 ==" in text and "Response: meh\nRating: 0/2" in text
    assert "== Example 2 ==" in text and "Response: great\nRating: 2/2" in text
    assert "== Example 3 ==\nUser: " in text and text.endswith("Response: Nice {name}!")
    assert text.index("Rating: 0/2") < text.index("Rating: 2/2") < text.index("Nice {name}!")
    likert = render_prompt(get_template("likert-1to5"), item(), quality="Interesting", fewshot=shots)
    assert "Response: meh\nScore: 2" in likert.text and "Response: great\nScore: 4" in likert.text
    dstc = render_prompt(get_template("dstc10-yesno"), item(), quality="Interesting", fewshot=shots)
    assert "Example\nBackground info: none" in dstc.text
    assert "Response: meh\nQuestion: Is the above response a good response to the conversation?\nAnswer: No" in dstc.text
    assert "Response: great\nQuestion: Is the above response a good response to the conversation?\nAnswer: Yes" in dstc.text


def test_fewshot_errors() -> None:
    shots = [rated("e1", "g2", 1)]
    with pytest.raises(TemplateError, match="takes no few-shot examples"):
        render_prompt(get_template("adv-0to1"), item(), aspect="fluency", quality="Interesting", fewshot=shots)
    with pytest.raises(TemplateError, match="need the quality"):
        render_prompt(get_template("dstc10-yesno"), item(), fewshot=shots)
    with pytest.raises(TemplateError, match="no numeric rating on 'Fluent'"):
        render_prompt(get_template("fed-fewshot"), item(), quality="Fluent", fewshot=shots)


# --------------------------------------------------------------------------- levels and messages


def test_levels_must_match() -> None:
    dialog_item = item(candidate=None, level=Level.DIALOG, ratings={"Coherent": Rating((2,), FED3)})
    with pytest.raises(TemplateError, match="dialog-level template"):
        render_prompt(get_template("fed-fewshot"), dialog_item, quality="Interesting")
    with pytest.raises(TemplateError, match="turn-level template"):
        render_prompt(get_template("fed-fewshot-dialog"), item(), quality="Coherent")
    p = render_prompt(get_template("fed-fewshot-dialog"), dialog_item, quality="Coherent")
    assert "rate how coherent the system is throughout the dialog." in p.text
    assert p.text.rstrip().endswith("And now?")


def test_prompt_hash_depends_on_what_is_sent() -> None:
    t = get_template("likert-1to5")
    a = render_prompt(t, item(), quality="Interesting")
    assert a.hash == render_prompt(t, item(), quality="Interesting").hash
    assert a.hash != render_prompt(t, item(), quality="Fluent").hash
    assert a.hash != render_prompt(t, item(), quality="Interesting", persona=load_personas()["strict-fact-checker"]).hash
    assert a.template_name == "likert-1to5"


def test_custom_template_with_constants_and_assistant_turn() -> None:
    t = parse_template('''name = "custom"
[constants]
sep = "|{x}|"
[output]
kind = "binary"
modes = ["generate"]
[[messages]]
role = "user"
content = "{sep} {reference|no reference} {response}"
[[messages]]
role = "assistant"
content = "Verdict:"
''', "custom.toml")
    ex = Example("a", "g", (Turn("", "hi"),), "R", references=("ref one", "ref two"))
    p = render_prompt(t, ex)
    assert p.messages[0].content == "|{x}| ref one\nref two R"
    assert p.messages[1].role == "assistant" and p.messages[1].content == "Verdict:"


# --------------------------------------------------------------------------- real data


def test_render_every_fed_turn_item(shared_data: Path) -> None:
    from dialjudge.core.loaders.fed import read_fed

    path = shared_data / "fed" / "fed_data.json"
    if not path.is_file():
        pytest.skip(f"{path} is absent from the shared data folder")
    dataset = read_fed(path)
    fed_turn = get_template("fed-fewshot")
    fed_dialog = get_template("fed-fewshot-dialog")
    turn_items = [ex for ex in dataset if ex.level is Level.TURN]
    dialog_items = [ex for ex in dataset if ex.level is Level.DIALOG]
    shots = turn_items[:3]
    for quality in dataset.qualities_at(Level.TURN):
        usable = [s for s in shots if s.human(quality) is not None]
        p = render_prompt(fed_turn, turn_items[10], quality=quality, fewshot=usable)
        scale = turn_items[10].ratings[quality].scale
        assert p.output.max == scale.max and f"r/{int(scale.max)}" in p.text
    for quality in dataset.qualities_at(Level.DIALOG):
        p = render_prompt(fed_dialog, dialog_items[0], quality=quality)
        assert p.output.choices[-1] == str(int(dialog_items[0].ratings[quality].scale.max))
