"""Templates and personas: the shipped set, validation with positions, loading order, saving."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialjudge.core.errors import ConfigError, TemplateError
from dialjudge.core.judges.prompts.personas import (
    Persona,
    get_persona,
    load_personas,
    save_persona,
    save_template,
    toml_string,
    user_persona_dir,
)
from dialjudge.core.judges.prompts.templates import (
    VARIABLES,
    TextPattern,
    get_template,
    load_templates,
    parse_template,
    shipped_template_dir,
    user_template_dir,
)
from dialjudge.core.judges.types import OutputKind, ScoringMode

MINIMAL = '''name = "mini"
description = "a test template"

[output]
kind = "likert"
min = 1
max = 5
modes = ["generate", "logprob"]

[[messages]]
role = "user"
content = """
Rate this.
{context}
Response: {response}
"""
'''


def _with(old: str, new: str, text: str = MINIMAL) -> str:
    assert old in text
    return text.replace(old, new)


# --------------------------------------------------------------------------- the shipped set


def test_shipped_templates_load_and_include_the_papers_prompts() -> None:
    templates = load_templates()
    assert {"adv-0to1", "inca-kpi", "fed-fewshot", "fed-fewshot-dialog", "dstc10-yesno",
            "likert-1to5"} <= set(templates)
    for name, t in templates.items():
        assert t.description, name
        assert "{name}" in t.text and "{{" in t.text, f"{name} documents its placeholder syntax"
        assert t.source.endswith(f"{name}.toml")


def test_adv_0to1_follows_paper_000() -> None:
    t = get_template("adv-0to1")
    assert set(t.aspects) == {"fluency", "coherence", "relevance", "consistency"}
    assert t.aspects["consistency"].startswith("Consistency refers to the logical and factual consistency")
    assert "external commonsense knowledge" in t.aspects["consistency"]
    assert t.output.kind is OutputKind.CONTINUOUS and (t.output.min, t.output.max) == (0, 1)
    assert t.output.choices == tuple(f"{i / 10:.1f}" for i in range(11))
    assert set(t.output.modes) == {ScoringMode.GENERATE, ScoringMode.LOGPROB}
    assert {"fact", "aspect_definition", "context", "response"} <= t.variables
    assert "The score is from 0 to 1. Please output a score." in t.messages[-1].content


def test_inca_kpi_follows_paper_002() -> None:
    t = get_template("inca-kpi")
    assert set(t.kpis) == {"follow-up", "implicit-understanding", "harmful-input"}
    assert all(len(d) > 200 for d in t.kpis.values()), "KPI definitions should be precise"
    assert t.output.kind is OutputKind.JSON
    assert t.output.score_key == "KPI {kpi} Score"
    assert t.output.reasoning_key and t.output.relevancy_key
    assert t.output.choices == ("0", "1")
    assert {"persona", "history", "user_utterance", "response", "kpi_definition"} <= t.variables
    assert "impartial chatbot assistant judge" in t.messages[0].content


def test_fed_and_dstc10_follow_paper_003() -> None:
    fed = get_template("fed-fewshot")
    assert fed.output.kind is OutputKind.LIKERT and fed.scale_from_quality
    assert fed.examples is not None and "== Example {index} ==" in fed.examples.pattern.text
    assert "Rating: {rating}/{scale_max}" in fed.examples.pattern.text
    assert fed.resolve_aspect("Semantically appropriate") == "semantically-appropriate"
    assert fed.aspects["interesting"] == "how interesting the response is with regards to the dialog history."
    dialog = get_template("fed-fewshot-dialog")
    assert dialog.level == "dialog" and "response" not in dialog.variables
    assert dialog.resolve_aspect("Error recovery") == "error-recovery"
    dstc = get_template("dstc10-yesno")
    assert dstc.output.kind is OutputKind.YESNO
    assert ScoringMode.YESNO in dstc.output.modes and ScoringMode.GENERATE in dstc.output.modes
    assert dstc.output.answer_prefix == "Answer:"
    likert = get_template("likert-1to5")
    assert likert.output.choices == ("1", "2", "3", "4", "5")
    assert set(likert.output.modes) == {ScoringMode.GENERATE, ScoringMode.LOGPROB}


def test_every_shipped_template_puts_the_response_last() -> None:
    for t in load_templates().values():
        body = t.messages[-1].content
        item = body.index("{response}") if "response" in t.variables else body.index("{context}")
        for shared in ("{examples}", "{fact", "{history", "{user_utterance}", "{context}", "{aspect_definition}",
                       "{kpi_definition}"):
            if shared in body and shared != body[item:item + len(shared)]:
                assert body.index(shared) < item, (t.name, shared)
        # only the final message holds the per-item parts
        for m in t.messages[:-1]:
            assert not {"context", "response"} & m.pattern.names, t.name


def test_variables_are_documented() -> None:
    assert {"context", "response", "fact", "reference", "aspect", "aspect_definition", "persona",
            "examples", "kpi", "kpi_definition", "history", "user_utterance", "quality"} <= set(VARIABLES)


# --------------------------------------------------------------------------- validation


def test_minimal_template_parses() -> None:
    t = parse_template(MINIMAL, "mini.toml")
    assert t.name == "mini" and t.variables == {"context", "response"}
    assert t.output.choices == ("1", "2", "3", "4", "5")  # filled from min-max


def _error(text: str) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        parse_template(text, "bad.toml")
    return info.value


def test_unknown_variable_reports_file_line_and_column() -> None:
    err = _error(_with("Rate this.", "Rate {aspekt} now."))
    assert "unknown variable {aspekt}" in str(err)
    assert err.source == "bad.toml"
    lines = _with("Rate this.", "Rate {aspekt} now.").split("\n")
    assert lines[err.line - 1][err.column - 1:].startswith("{aspekt}")


@pytest.mark.parametrize("content,fragment", [
    ("Rate {% if x %} now", "malformed placeholder"),
    ("Rate {x y} now", "malformed placeholder"),
    ("Rate {} now", "malformed placeholder"),
    ("Rate {Context} now", "malformed placeholder"),
    ("Rate } now", "unmatched '}'"),
    ("Rate { now", "unclosed '{'"),
    ("Rate ${context} {{x}} $y now", None),  # literal $ and escaped braces are fine
])
def test_malformed_placeholders(content: str, fragment: str | None) -> None:
    text = _with("Rate this.", content)
    if fragment is None:
        parse_template(text, "ok.toml")
        return
    err = _error(text)
    assert fragment in str(err)
    assert err.line is not None and err.column is not None
    assert text.split("\n")[err.line - 1] == content
    assert content[err.column - 1] in "{}"


def test_toml_syntax_error_has_a_position() -> None:
    err = _error(MINIMAL.replace('kind = "likert"', 'kind = likert'))
    assert "not valid TOML" in str(err) and err.line == 5


@pytest.mark.parametrize("old,new,fragment", [
    ('description = "a test template"', 'descripton = "x"', "unknown key 'descripton'"),
    ('kind = "likert"', 'kind = "stars"', "output.kind must be one of"),
    ('modes = ["generate", "logprob"]', 'modes = ["guess"]', "unknown mode 'guess'"),
    ('modes = ["generate", "logprob"]', 'modes = ["yesno"]', "needs output.kind = 'yesno'"),
    ('kind = "likert"\nmin = 1\nmax = 5\nmodes = ["generate", "logprob"]', 'kind = "json"', "score_key"),
    ('max = 5', 'max = 1', "must be greater than"),
    ('max = 5', 'max = 5\nchoices = ["1", "9"]', "outside 1-5"),
    ('max = 5', 'max = 5\nchoices = ["5", "1"]', "scale order"),
    ('max = 5', 'max = 5\nchoices = ["one"]', "must be numbers"),
    ('max = 5', 'max = 5\nscale = "dataset"', "output.scale"),
    ('max = 5', 'max = 5\nshade = 1', "unknown key 'shade'"),
    ('role = "user"', 'role = "critic"', "role must be one of"),
    ('name = "mini"', 'name = "my template"', "name 'my template'"),
    ('name = "mini"\n', '', "'name' is required"),
    ('[output]', '[aspects]\nx = 1\n\n[output]', "aspects.x must be a string"),
    ('[output]', '[aspect_aliases]\nfluent = "fluency"\n\n[output]', "not in [aspects]"),
    ('[output]', '[constants]\ncontext = "x"\n\n[output]', "built-in variable"),
    ('Rate this.', 'Define: {aspect_definition}', "no [aspects] table"),
    ('Rate this.', '{kpi_definition}', "no [kpis] table"),
    ('Rate this.', '{examples}', "no [examples] table"),
    ('[output]', '[examples]\nformat = "{response} {rating}"\n\n[output]', "no message uses {examples}"),
    ('[output]', 'level = "dialog"\n[output]', "cannot use {response}"),
])
def test_invalid_templates_are_rejected_at_load(old: str, new: str, fragment: str) -> None:
    err = _error(_with(old, new))
    assert fragment in str(err), str(err)


def test_example_format_must_show_the_rating() -> None:
    text = _with("[output]", '[examples]\nformat = "Response: {response}"\n\n[output]')
    text = _with("Rate this.", "{examples}", text)
    assert "{rating}" in str(_error(text))


def test_yesno_and_binary_outputs_are_zero_to_one() -> None:
    err = _error(_with('kind = "likert"', 'kind = "yesno"'))
    assert "scored 0-1" in str(err)
    t = parse_template(_with('kind = "likert"\nmin = 1\nmax = 5', 'kind = "yesno"')
                       .replace('["generate", "logprob"]', '["yesno"]'), "y.toml")
    assert t.output.choices == ("no", "yes")


def test_output_key_placeholders_are_checked() -> None:
    text = _with('kind = "likert"\nmin = 1\nmax = 5', 'kind = "json"\nscore_key = "KPI {kip} Score"')
    text = text.replace('["generate", "logprob"]', '["generate"]')
    assert "output.score_key: unknown variable {kip}" in str(_error(text))


def test_text_pattern_fill_is_single_pass() -> None:
    p = TextPattern.parse("A {x}\n{y}\nB {{literal}}")
    assert p.fill({"x": "{y}", "y": "$y {% raw %}"}) == "A {y}\n$y {% raw %}\nB {literal}"
    assert p.fill({"x": "1", "y": ""}) == "A 1\nB {literal}"  # a sole empty placeholder drops its line


def test_defaults_and_blank_line_collapse() -> None:
    p = TextPattern.parse("Fact: {fact|none}\n\n{examples}\n\nItem")
    assert p.fill({"fact": "", "examples": ""}) == "Fact: none\n\nItem"
    assert p.fill({"fact": "F", "examples": "E"}) == "Fact: F\n\nE\n\nItem"


# --------------------------------------------------------------------------- loading and saving


def _write(directory: Path, name: str, text: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_user_dirs_override_shipped_templates(tmp_path: Path) -> None:
    shipped = get_template("likert-1to5")
    override = _with('name = "mini"', 'name = "likert-1to5"')
    _write(tmp_path / "extra", "likert-1to5", override)
    _write(tmp_path / "extra", "mini", MINIMAL)
    templates = load_templates([tmp_path / "extra"])
    assert templates["likert-1to5"].description == "a test template"
    assert "mini" in templates
    # <user_data_dir>/templates overrides the extra dirs
    _write(user_template_dir(), "mini", _with("a test template", "from the user dir"))
    assert load_templates([tmp_path / "extra"])["mini"].description == "from the user dir"
    assert get_template("likert-1to5").description == shipped.description  # no extra dir: shipped


def test_file_name_must_match_template_name(tmp_path: Path) -> None:
    _write(tmp_path, "other", MINIMAL)
    with pytest.raises(TemplateError, match="differs from the file name"):
        load_templates([tmp_path])


def test_broken_user_templates_can_be_collected(tmp_path: Path) -> None:
    _write(tmp_path, "mini", _with("Rate this.", "Rate {nope}."))
    _write(tmp_path, "ok", _with('name = "mini"', 'name = "ok"'))
    (tmp_path / "personas.toml").write_text('[x]\ntext = "y"\n', encoding="utf-8")  # not a template
    errors: list[TemplateError] = []
    templates = load_templates([tmp_path], errors=errors)
    assert "ok" in templates and "mini" not in templates
    assert len(errors) == 1 and "mini.toml" in str(errors[0]) and "{nope}" in str(errors[0])
    with pytest.raises(TemplateError):
        load_templates([tmp_path])


def test_missing_extra_dir_and_unknown_template(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_templates([tmp_path / "nowhere"])
    with pytest.raises(TemplateError, match="no template named 'nope'"):
        get_template("nope")


def test_save_template_goes_to_the_user_dir_and_never_over_shipped(tmp_path: Path) -> None:
    shipped_file = shipped_template_dir() / "likert-1to5.toml"
    before = shipped_file.read_text(encoding="utf-8")
    text = _with('name = "mini"', 'name = "likert-1to5"')
    path = save_template(text, "likert-1to5")
    assert path == user_template_dir() / "likert-1to5.toml"
    assert shipped_file.read_text(encoding="utf-8") == before
    assert get_template("likert-1to5").description == "a test template"


def test_save_template_validates_first() -> None:
    with pytest.raises(TemplateError, match="unknown variable"):
        save_template(_with("Rate this.", "{oops}"), "mini")
    assert not (user_template_dir() / "mini.toml").exists()
    with pytest.raises(TemplateError, match="not 'other'"):
        save_template(MINIMAL, "other")
    with pytest.raises(TemplateError, match="file name"):
        save_template(MINIMAL, "../escape")


# --------------------------------------------------------------------------- personas


def test_shipped_personas() -> None:
    personas = load_personas()
    assert {"neutral", "brand-ambassador", "firmware-security-expert", "strict-fact-checker",
            "lenient-conversational-partner"} <= set(personas)
    assert len(personas) >= 6
    assert personas["neutral"].text == "" and personas["neutral"].is_neutral
    ambassador = personas["brand-ambassador"].text
    assert "ambassador" in ambassador and "highly critical" in ambassador and "Aurora Motors" in ambassador
    assert "firmware" in personas["firmware-security-expert"].text
    assert all(p.description for p in personas.values())


def test_save_persona_round_trips_tricky_text() -> None:
    tricky = 'Say "hi" \\ {persona} {{x}} $y {% raw %}\nline two\ttab \x01 \u00e9\u4e2d'
    path = save_persona(Persona("tricky", 'desc "quoted"', tricky))
    assert path.parent == user_persona_dir()
    loaded = get_persona("tricky")
    assert loaded == Persona("tricky", 'desc "quoted"', tricky.strip())


def test_saved_persona_overrides_shipped_one_without_touching_it() -> None:
    save_persona(Persona("neutral", "mine", "Be kind."))
    assert load_personas()["neutral"].text == "Be kind."


def test_persona_names_and_files_are_checked(tmp_path: Path) -> None:
    with pytest.raises(TemplateError, match="file name"):
        save_persona(Persona("Bad Name", "", "x"))
    (tmp_path / "personas.toml").write_text('[pirate]\ndescription = "arr"\ntext = "Talk like a pirate."\n',
                                            encoding="utf-8")
    (tmp_path / "personas").mkdir()
    (tmp_path / "personas" / "robot.toml").write_text('text = "Beep."\n', encoding="utf-8")
    personas = load_personas([tmp_path])
    assert personas["pirate"].text == "Talk like a pirate." and personas["robot"].text == "Beep."
    (tmp_path / "personas.toml").write_text('[pirate]\ndescription = "arr"\n', encoding="utf-8")
    with pytest.raises(TemplateError, match="text is required"):
        load_personas([tmp_path])
    (tmp_path / "personas.toml").write_text('[pirate\n', encoding="utf-8")
    with pytest.raises(TemplateError) as info:
        load_personas([tmp_path])
    assert info.value.line == 1
    with pytest.raises(TemplateError, match="no persona named"):
        get_persona("nobody")


def test_toml_string_escapes() -> None:
    import tomllib

    for value in ['plain', 'q"uote', "back\\slash", "new\nline", "\x7f\x00", "{x} ${y}"]:
        assert tomllib.loads(f"v = {toml_string(value)}")["v"] == value


# --------------------------------------------------------------------------- the judge sees what it judges


def test_a_template_that_never_shows_the_reply_is_refused_naming_what_is_missing() -> None:
    blind = _with("Response: {response}\n", "Is this good?\n")
    with pytest.raises(TemplateError, match=r"no message shows the reply being judged: use \{response\}") as info:
        parse_template(blind, "blind.toml")
    assert info.value.line is not None  # points at the messages


def test_a_dialog_level_template_must_show_the_dialogue() -> None:
    dialog = _with('description = "a test template"\n', 'description = "a test template"\nlevel = "dialog"\n')
    dialog = _with("{context}\nResponse: {response}\n", "Rate the conversation.\n", dialog)
    with pytest.raises(TemplateError, match=r"must show the dialogue it rates: use \{context\}"):
        parse_template(dialog, "dialog.toml")


def test_every_shipped_template_shows_the_judge_what_it_judges() -> None:
    for name, t in load_templates().items():
        if t.level == "dialog":
            assert {"context", "history"} & t.variables, name
        elif t.output.kind is OutputKind.PAIRWISE:
            assert {"response_a", "response_b"} <= t.variables, name
        else:
            assert "response" in t.variables, name
