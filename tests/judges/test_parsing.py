"""parse_output: the final answer, never a number from the reasoning or an echoed prompt."""

from __future__ import annotations

import pytest

from dialjudge.core.judges.prompts.render import render_prompt
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.parsing import ParsedOutput, parse_output, strip_echo
from dialjudge.core.judges.types import Message, OutputKind, OutputSpec, RenderedPrompt
from dialjudge.core.model import Example, Turn

UNIT = OutputSpec(OutputKind.CONTINUOUS, 0, 1, tuple(f"{i / 10:.1f}" for i in range(11)))
LIKERT5 = OutputSpec(OutputKind.LIKERT, 1, 5, ("1", "2", "3", "4", "5"))
FED3 = OutputSpec(OutputKind.LIKERT, 0, 2, ("0", "1", "2"))
BINARY = OutputSpec(OutputKind.BINARY, 0, 1, ("0", "1"))
YESNO = OutputSpec(OutputKind.YESNO, 0, 1, ("No", "Yes"))
KPI = OutputSpec(OutputKind.JSON, 0, 1, ("0", "1"), score_key="KPI follow-up Score",
                 reasoning_key="Reasoning KPI follow-up", relevancy_key="Relevancy KPI follow-up")


NUMERIC_CASES = [
    # (spec, raw output, expected score)
    (UNIT, "The response is consistent with the information provided in the input. Therefore, the score is 1.", 1.0),
    (UNIT, "the score is 0.8", 0.8),
    (UNIT, "Score: 0.35", 0.35),
    (UNIT, "Therefore, the score is 0.9.", 0.9),
    (LIKERT5, "Score: 4/5", 4.0),
    (LIKERT5, "Score: 4 / 5", 4.0),
    (FED3, "Rating: 2/2", 2.0),
    (FED3, " 1/2", 1.0),
    (LIKERT5, "**4**", 4.0),
    (LIKERT5, "The reply is fine.\n\n**Score:** 3", 3.0),
    (LIKERT5, "Final score: **2**", 2.0),
    (LIKERT5, "[[5]]", 5.0),
    (LIKERT5, "4", 4.0),
    (LIKERT5, "4.", 4.0),
    (UNIT, "0.7", 0.7),
    (UNIT, "  0.7  \n", 0.7),
    (LIKERT5, "I'd give it 4 out of 5.", 4.0),
    (LIKERT5, "4 out of 5", 4.0),
    (LIKERT5, "4/5", 4.0),
    # reasoning mentions other numbers before the explicit score
    (LIKERT5, "It would deserve 5 stars for style, but it ignores the question. Score: 2", 2.0),
    (LIKERT5, "There are 3 problems here and 2 typos.\nRating: 1", 1.0),
    # an echoed range is not an answer
    (UNIT, "The score is from 0 to 1. 0.7", 0.7),
    (UNIT, "On a scale from 0 to 1, I rate this 0.6.", 0.6),
    (LIKERT5, "Score (1-5): 3", 3.0),
    (LIKERT5, "Using the 1 to 5 scale, my score is 4.", 4.0),
    # an echoed rubric is not an answer
    (LIKERT5, "1 = very poor, 2 = poor, 3 = acceptable, 4 = good, 5 = excellent.\nMy score: 3", 3.0),
    (LIKERT5, "1: very poor\n2: poor\n3: fine\n4: good\n5: great\n\nScore: 2", 2.0),
    # several statements: the last explicit one wins
    (LIKERT5, "Initial score: 3. On reflection the reply is off topic, so the final score is 2.", 2.0),
    (LIKERT5, "I'd rate it 4 out of 5 at first.\nScore: 3", 3.0),
    # JSON in a numeric template
    (LIKERT5, '{"reasoning": "fine, 5 stars", "score": 3}', 3.0),
    (LIKERT5, '```json\n{"reasoning": "ok", "score": 4,}\n```', 4.0),
    (LIKERT5, "{'score': 4}", 4.0),
    (LIKERT5, 'Thinking about it... {"rating": 2}', 2.0),
    # rescaled answers on a 0-1 scale
    (UNIT, "Score: 7/10", 0.7),
    (UNIT, "Score: 80%", 0.8),
    # a model that keeps writing examples after answering
    (FED3, "1/2\n\n== Example 4 ==\nUser: hi\nResponse: hello\nRating: 2/2", 1.0),
    (FED3, "Rating: 0/2\n\nTask: Given a dialog history ... Rating: 2/2", 0.0),
    # reasoning blocks are ignored
    (LIKERT5, "<think>Maybe a 5? or a 1.</think>Score: 2", 2.0),
    # Chinese output
    (UNIT, "评分：0.8", 0.8),
    # binary
    (BINARY, "Score: 1", 1.0),
    (BINARY, "0", 0.0),
    # repeated identical number
    (LIKERT5, "3, yes 3", 3.0),
]


@pytest.mark.parametrize("spec,raw,expected", NUMERIC_CASES, ids=[c[1][:40] for c in NUMERIC_CASES])
def test_numeric_answers(spec: OutputSpec, raw: str, expected: float) -> None:
    parsed = parse_output(raw, spec)
    assert parsed.error is None, parsed.error
    assert parsed.score == pytest.approx(expected)


FAILURES = [
    # (spec, raw output, words the error must contain)
    (LIKERT5, "", "empty"),
    (LIKERT5, "   \n ", "empty"),
    (LIKERT5, "I cannot rate this response.", "no score"),
    (LIKERT5, "Score: -1", "outside"),
    (LIKERT5, "Score: 7", "outside"),
    (LIKERT5, "Score: 0", "outside"),
    (UNIT, "The score is 1.5", "outside"),
    (UNIT, "Score: -0.2", "outside"),
    (FED3, "Rating: 3/3", "scale"),
    (LIKERT5, "Score: 4/10", "scale"),
    (LIKERT5, "Score: 80%", "scale"),
    (LIKERT5, "The response has 2 errors and 3 typos.", "several numbers"),
    (LIKERT5, "Somewhere between 3 and 4.", "no score"),
    (BINARY, "Score: 0.5", "not one of"),
    (LIKERT5, "<think>Score: 4 seems right", "no answer"),
    (UNIT, "The score is from 0 to 1. Please output a score.", "no score"),
]


@pytest.mark.parametrize("spec,raw,words", FAILURES, ids=[c[1][:40] or "empty" for c in FAILURES])
def test_failures_are_reported_not_imputed(spec: OutputSpec, raw: str, words: str) -> None:
    parsed = parse_output(raw, spec)
    assert parsed.score is None
    assert parsed.error is not None and words in parsed.error


FED_PREFIXED = OutputSpec(OutputKind.LIKERT, 0, 2, ("0", "1", "2"), answer_prefix="Rating:")
LIKERT_PREFIXED = OutputSpec(OutputKind.LIKERT, 1, 5, ("1", "2", "3", "4", "5"), answer_prefix="Score:")


@pytest.mark.parametrize("spec,raw,expected", [
    # the answer in the template's own format outranks later free-text statements
    # (a real SmolLM2-135M output on fed-fewshot)
    (FED_PREFIXED, "Rating: 2/2\n\nThe response is rated 2 out of 3, with a rating of 2 out of 3.", 2.0),
    (FED_PREFIXED, "rated 1 out of 2 at first\nRating: 0/2\nso rated 0", 0.0),
    # ... but only at the start of a line: "Initial score: 3" is no answer line
    (LIKERT_PREFIXED, "Initial score: 3. On reflection the reply is off topic, so the final score is 2.", 2.0),
    # several answer lines: the last
    (LIKERT_PREFIXED, "Score: 4\nOn reflection, 5 stars is too much.\n**Score:** 2", 2.0),
    # without a prefix in the spec the last explicit statement wins
    (FED3, "Rating: 2/2\nThe response is rated 1 out of 2.", 1.0),
])
def test_answer_format_of_the_template(spec: OutputSpec, raw: str, expected: float) -> None:
    parsed = parse_output(raw, spec)
    assert parsed.error is None and parsed.score == expected


def test_likert_answers_between_points_are_kept() -> None:
    assert parse_output("Score: 4.5", LIKERT5).score == 4.5


def test_out_of_range_error_names_the_value_and_scale() -> None:
    parsed = parse_output("Score: 9", LIKERT5)
    assert parsed.error == "score 9 is outside 1-5"


def test_reasoning_is_what_comes_before_the_answer_sentence() -> None:
    parsed = parse_output("The reply answers the question. It is polite. Therefore, the score is 0.9.", UNIT)
    assert parsed.score == pytest.approx(0.9)
    assert parsed.reasoning == "The reply answers the question. It is polite."
    assert parse_output("0.9", UNIT).reasoning is None


def test_reasoning_from_a_json_field() -> None:
    parsed = parse_output('{"explanation": "on topic", "score": 4}', LIKERT5)
    assert (parsed.score, parsed.reasoning) == (4.0, "on topic")


# --------------------------------------------------------------------------- yes / no

YESNO_CASES = [
    ("Yes", 1.0),
    ("yes.", 1.0),
    ("No", 0.0),
    ("No, it ignores the question.", 0.0),
    ("**Yes**", 1.0),
    ("Answer: Yes", 1.0),
    ("The response is off topic.\nAnswer: no", 0.0),
    ("I think the answer is yes", 1.0),
    ("Answer Yes or No. The answer is no", 0.0),  # the echoed instruction is not an answer
    ("Yes\n\nBackground info: none\nConversation:\nA: hi\nResponse: x\nQuestion: good?\nAnswer: No", 1.0),
    ("It is a good response, yes.", 1.0),
]


@pytest.mark.parametrize("raw,expected", YESNO_CASES, ids=[c[0][:30] for c in YESNO_CASES])
def test_yes_no_answers(raw: str, expected: float) -> None:
    parsed = parse_output(raw, YESNO)
    assert parsed.error is None, parsed.error
    assert parsed.score == expected


@pytest.mark.parametrize("raw,words", [
    ("Maybe.", "no yes/no"),
    ("Yes and no: it depends.", "both yes and no"),
    ("", "empty"),
])
def test_yes_no_failures(raw: str, words: str) -> None:
    parsed = parse_output(raw, YESNO)
    assert parsed.score is None and words in (parsed.error or "")


# --------------------------------------------------------------------------- JSON (InCA)

JSON_CASES = [
    ('{"Reasoning KPI follow-up": "It resolves \\"it\\".", "KPI follow-up Score": 1, '
     '"Relevancy KPI follow-up": "relevant"}', 1.0, 'It resolves "it".', "relevant"),
    ('Let me think: 5 points matter here.\n```json\n{\n  "Reasoning KPI follow-up": "ok",\n'
     '  "KPI follow-up Score": 0,\n  "Relevancy KPI follow-up": "not relevant",\n}\n```', 0.0, "ok", "not relevant"),
    # paper 002's own layout: no braces, no comma after the score
    ('"Reasoning KPI follow-up": "fine",\n"KPI follow-up Score" : 1\n"Relevancy KPI follow-up": "relevant"',
     1.0, "fine", "relevant"),
    # braces but a missing comma
    ('{\n"Reasoning KPI follow-up": "fine",\n"KPI follow-up Score" : 0\n"Relevancy KPI follow-up": "relevant"\n}',
     0.0, "fine", "relevant"),
    # single quotes and an apostrophe inside a value
    ("{'Reasoning KPI follow-up': 'it doesn\\'t follow up', 'KPI follow-up Score': 0}", 0.0,
     "it doesn't follow up", None),
    # the score as a string, a boolean, other key spelling
    ('{"KPI follow-up Score": "1"}', 1.0, None, None),
    ('{"KPI follow-up Score": true}', 1.0, None, None),
    ('{"kpi  FOLLOW-UP score": 1}', 1.0, None, None),
    ('{"KPI FU Score": 1, "Reasoning": "short"}', 1.0, "short", None),
    # nested object
    ('{"result": {"KPI follow-up Score": 0, "Reasoning KPI follow-up": "no"}}', 0.0, "no", None),
    # several objects: the last with a score wins
    ('Draft: {"KPI follow-up Score": 0}\nFinal: {"KPI follow-up Score": 1}', 1.0, None, None),
    # smart quotes
    ('{“KPI follow-up Score”: 1}', 1.0, None, None),
]


@pytest.mark.parametrize("raw,score,reasoning,relevancy", JSON_CASES, ids=[c[0][:40] for c in JSON_CASES])
def test_json_answers(raw: str, score: float, reasoning: str | None, relevancy: str | None) -> None:
    parsed = parse_output(raw, KPI)
    assert parsed.error is None, parsed.error
    assert parsed.score == score
    assert parsed.reasoning == reasoning
    assert parsed.relevancy == relevancy


@pytest.mark.parametrize("raw,words", [
    ('{"KPI follow-up Score": 2}', "outside"),
    ('{"KPI follow-up Score": 0.5}', "not one of"),
    ('{"KPI follow-up Score": "high"}', "not a number"),
    ('{"KPI follow-up Score": -1}', "outside"),
    ('"Reasoning KPI follow-up": "fine",\n"KPI follow-up Score" : 0/1\n', "not a score"),
    ('{"Reasoning KPI follow-up": "fine"}', "no JSON object with the key"),
    ("The assistant did well.", "no JSON object"),
    # the template's format line copied back: "0 or 1" is not an answer
    ('"KPI follow-up Score": 0 or 1', "not a score"),
])
def test_json_failures(raw: str, words: str) -> None:
    parsed = parse_output(raw, KPI)
    assert parsed.score is None
    assert words in (parsed.error or ""), parsed.error


# --------------------------------------------------------------------------- echoed prompts


def _adv_prompt() -> RenderedPrompt:
    ex = Example("a", "g", (Turn("A", "I have 2 kids and 3 dogs."), Turn("B", "When was she born? June 6, 1975?")),
                 "Yes, in 1975.", fact="Cheer Chen was born on June 6, 1975.")
    return render_prompt(get_template("adv-0to1"), ex, aspect="consistency")


def test_a_number_only_inside_an_echoed_prompt_is_not_an_answer() -> None:
    prompt = _adv_prompt()
    echoed = prompt.messages[-1].content
    parsed = parse_output(echoed, prompt.output, prompt=prompt)
    assert parsed.score is None and parsed.error


def test_answer_after_an_echoed_prompt_is_found() -> None:
    prompt = _adv_prompt()
    echoed = prompt.messages[-1].content
    inline = echoed.replace("Please output a score.", "Please output a score. 0.6")
    assert parse_output(inline, prompt.output, prompt=prompt).score == pytest.approx(0.6)
    assert parse_output(echoed + "\nScore: 0.3", prompt.output, prompt=prompt).score == pytest.approx(0.3)
    # without the prompt, the dialogue's numbers make the inline answer ambiguous
    assert parse_output(inline, prompt.output).score is None


def test_a_short_answer_that_also_appears_in_the_prompt_is_kept() -> None:
    prompt = RenderedPrompt((Message("user", "== Example 1 ==\nA: hi\nResponse: hello there\nRating: 2/2\n\n"
                                              "== Example 2 ==\nA: bye\nResponse: see you\n"),), FED3)
    assert parse_output("Rating: 2/2", FED3, prompt=prompt).score == 2.0
    assert parse_output("Rating: 2/2", FED3, prompt=prompt.text).score == 2.0


def test_strip_echo_blanks_only_long_copies() -> None:
    prompt = "Rate the response from coherence. The score is from 0 to 1. Please output a score."
    out = strip_echo("Rate the response from coherence. The score is from 0 to 1.\n0.4", prompt)
    assert out.strip() == "0.4"
    assert strip_echo("0.4", prompt) == "0.4"


def test_parsed_output_ok_flag() -> None:
    assert ParsedOutput(0.5).ok and not ParsedOutput(None, error="x").ok
