"""The answer grammars of core.judges.prompts.grammar, checked with llama.cpp's own grammar engine.

For every shipped template's output spec (both constraint forms), a grammar
sampler is initialised on the bundled model's vocabulary
(``llama_sampler_init_grammar``); a candidate text is tokenised and each token
is offered to the sampler alone: a logit that became -inf means the grammar
rejects it, otherwise the token is accepted and the next one offered; at the
end the end-of-generation token must be allowed. Valid answers (every choice,
sample numbers, sample JSON objects) must pass, others must not, and every
valid answer (and every answer sampled at random from the grammar) must parse
to the value it states.
"""

from __future__ import annotations

import ctypes
import json
import math
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dialjudge.core.judges.prompts.constraint import AnswerConstraint
from dialjudge.core.judges.prompts.grammar import (
    GrammarError,
    answer_text,
    build_grammar,
    json_schema,
    value_strings,
)
from dialjudge.core.judges.prompts.templates import load_templates
from dialjudge.core.judges.run.parsing import parse_output
from dialjudge.core.judges.types import OutputKind, OutputSpec

pytestmark = pytest.mark.model

FORMS = (AnswerConstraint.ANSWER, AnswerConstraint.REASONING)
#: Reasoning lines that name other values, as a judge's reasoning does; the final line must still win.
TRICKY_REASONING = (
    "The response is fine.",
    "Score: {other}. Answer: {other}. Rating: {other}. Verdict: {other}. The score is {other}",
    "I would say {other} out of 5 at first, 40% sure; between 1 and 2; yes or no? no, yes",
    "Task: rate it again. Question: which is better? **{other}** Answer is {other}",
)
#: Labels for a template that answers with the judged quality's own labels.
QUALITY_LABELS = ("bad", "not bad", "good")


class GrammarEngine:
    """llama.cpp's grammar sampler over the bundled model's vocabulary (weights not loaded)."""

    def __init__(self, model_path: Path) -> None:
        import llama_cpp as lib

        self.lib = lib
        params = lib.llama_model_default_params()
        params.vocab_only = True
        self.model = lib.llama_model_load_from_file(str(model_path).encode("utf-8"), params)
        assert self.model, "llama.cpp could not read the bundled model's vocabulary"
        self.vocab = lib.llama_model_get_vocab(self.model)
        self.n_vocab = lib.llama_vocab_n_tokens(self.vocab)
        self.eos = lib.llama_vocab_eos(self.vocab)

    def close(self) -> None:
        self.lib.llama_model_free(self.model)

    def tokenize(self, text: str) -> list[int]:
        data = text.encode("utf-8")
        room = len(data) + 8
        out = (self.lib.llama_token * room)()
        n = self.lib.llama_tokenize(self.vocab, data, len(data), out, room, False, False)
        assert n >= 0
        return list(out[:n])

    def detokenize(self, tokens: list[int]) -> str:
        buffer = ctypes.create_string_buffer(64)
        pieces = b""
        for token in tokens:
            n = self.lib.llama_token_to_piece(self.vocab, token, buffer, len(buffer), 0, False)
            pieces += buffer.raw[:n]
        return pieces.decode("utf-8", errors="replace")  # as the backend decodes its output

    def sampler(self, gbnf: str) -> Any:
        sampler = self.lib.llama_sampler_init_grammar(self.vocab, gbnf.encode("utf-8"), b"root")
        assert sampler, f"llama.cpp rejected the grammar:\n{gbnf}"
        return sampler

    def allows(self, sampler: Any, token: int) -> bool:
        data = (self.lib.llama_token_data * 1)(self.lib.llama_token_data(token, 0.0, 0.0))
        candidates = self.lib.llama_token_data_array(data, 1, -1, False)
        self.lib.llama_sampler_apply(sampler, ctypes.byref(candidates))
        return not math.isinf(data[0].logit)

    def accepts(self, gbnf: str, text: str) -> bool:
        sampler = self.sampler(gbnf)
        try:
            for token in self.tokenize(text):
                if not self.allows(sampler, token):
                    return False
                self.lib.llama_sampler_accept(sampler, token)
            return self.allows(sampler, self.eos)
        finally:
            self.lib.llama_sampler_free(sampler)

    def sample(self, gbnf: str, rng: Any, max_steps: int) -> str | None:
        """A text drawn from the grammar with random logits over the whole vocabulary; None if it
        has not ended within ``max_steps`` tokens."""
        import numpy as np

        lib = self.lib
        layout = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])
        assert layout.itemsize == ctypes.sizeof(lib.llama_token_data)
        sampler = self.sampler(gbnf)
        tokens: list[int] = []
        try:
            for _ in range(max_steps):
                data = np.zeros(self.n_vocab, dtype=layout)
                data["id"] = np.arange(self.n_vocab)
                data["logit"] = rng.random(self.n_vocab, dtype=np.float32)
                data["logit"][self.eos] = 2.0  # end as soon as the grammar allows it
                candidates = lib.llama_token_data_array(
                    data.ctypes.data_as(ctypes.POINTER(lib.llama_token_data)), self.n_vocab, -1, False)
                lib.llama_sampler_apply(sampler, ctypes.byref(candidates))
                best = int(np.argmax(data["logit"]))
                assert np.isfinite(data["logit"][best]), "the grammar allows no token at all"
                token = int(data["id"][best])
                if token == self.eos:
                    return self.detokenize(tokens)
                lib.llama_sampler_accept(sampler, token)
                tokens.append(token)
            return None
        finally:
            lib.llama_sampler_free(sampler)


@pytest.fixture(scope="module")
def engine(bundled_model: Path) -> Iterator[GrammarEngine]:
    grammar_engine = GrammarEngine(bundled_model)
    yield grammar_engine
    grammar_engine.close()


def shipped_specs() -> list[tuple[str, OutputSpec]]:
    """Each shipped template's output spec as rendered: keys filled for each KPI/aspect, labels given."""
    out = []
    for name, template in sorted(load_templates().items()):
        for key in sorted(template.kpis) or sorted(template.aspects) or [""]:
            keys = {"kpi": key, "aspect": key, "quality": "quality", "scale_min": "0", "scale_max": "1"}
            spec = replace(template.output, **{k: p.fill(keys) for k, p in template.output_patterns.items()})
            if spec.kind is OutputKind.LABEL and not spec.choices:
                spec = replace(spec, max=float(len(QUALITY_LABELS) - 1), choices=QUALITY_LABELS)
            out.append((f"{name}:{key}" if key else name, spec))
    return out


SPECS = shipped_specs()
#: One spec a template (the KPIs of a template differ in their keys only), for the slower random walks.
ONE_SPEC_EACH = list({name.split(":")[0]: (name, spec) for name, spec in reversed(SPECS)}.values())


def sample_values(spec: OutputSpec) -> list[str]:
    values = value_strings(spec)
    if spec.kind is OutputKind.CONTINUOUS:
        return ["0", "0.5", "0.05", "0.85", "0.99", "1", "1.0", "1.00"]
    return values


def invalid_values(spec: OutputSpec) -> list[str]:
    if spec.kind is OutputKind.CONTINUOUS:
        return ["1.5", "2", "-0.5", "0.555", "1.01", ".5", "0.", "high", "0.5.", "01"]
    numeric = spec.kind in (OutputKind.LIKERT, OutputKind.BINARY, OutputKind.JSON)
    out = ["maybe", "", "excellent"]
    if numeric:
        top = max(spec.choice_values())
        out += [str(int(top) + 1), str(int(min(spec.choice_values())) - 1), f"{top / 2 + 0.5}", "0.5"]
    else:
        out += [spec.choices[0] + "!", spec.choices[0] + " " + spec.choices[-1], "Perhaps"]
    return [v for v in out if v not in value_strings(spec)]


def expected_score(spec: OutputSpec, value: str) -> float:
    if spec.kind in (OutputKind.CONTINUOUS, OutputKind.LIKERT, OutputKind.BINARY, OutputKind.JSON):
        return float(value)
    by_choice = dict(zip((c.strip() for c in spec.choices), spec.choice_values()))
    return by_choice[value]


def other_value(spec: OutputSpec, value: str) -> str:
    values = sample_values(spec)
    return values[0] if value != values[0] else values[-1]


def test_every_shipped_template_is_covered():
    names = {name.split(":")[0] for name, _ in SPECS}
    assert names == set(load_templates())
    assert {spec.kind for _, spec in SPECS} >= {OutputKind.CONTINUOUS, OutputKind.LIKERT, OutputKind.YESNO,
                                                OutputKind.JSON, OutputKind.LABEL}


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.value)
@pytest.mark.parametrize("name, spec", SPECS, ids=[n for n, _ in SPECS])
def test_the_grammar_accepts_every_valid_answer_and_it_parses_to_its_value(
        engine: GrammarEngine, name: str, spec: OutputSpec, form: AnswerConstraint):
    grammar = build_grammar(spec, form, max_tokens=256)
    for value in sample_values(spec):
        reasonings = ([r.format(other=other_value(spec, value))[:grammar.free_chars] for r in TRICKY_REASONING]
                      if form is AnswerConstraint.REASONING or spec.kind is OutputKind.JSON else [""])
        for reasoning in reasonings:
            text = grammar.answer(value, reasoning=reasoning)
            assert engine.accepts(grammar.gbnf, text), f"{name}: the grammar rejects the valid answer {text!r}"
            parsed = parse_output(text, spec)
            assert parsed.score is not None, f"{name}: {text!r} does not parse: {parsed.error}"
            score = spec.max if spec.kind is OutputKind.YESNO and expected_score(spec, value) else \
                expected_score(spec, value)
            assert math.isclose(parsed.score, score), f"{name}: {text!r} parses as {parsed.score}, not {score}"


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.value)
@pytest.mark.parametrize("name, spec", SPECS, ids=[n for n, _ in SPECS])
def test_the_grammar_rejects_other_answers(engine: GrammarEngine, name: str, spec: OutputSpec,
                                           form: AnswerConstraint):
    grammar = build_grammar(spec, form, max_tokens=256)
    valid = sample_values(spec)[-1]
    rejected = [grammar.answer(v, reasoning="Fine.") for v in invalid_values(spec)]
    # Not the answer format: nothing, a bare value, free text after the answer, two answers.
    good = grammar.answer(valid, reasoning="Fine.")
    cut = good[:-1] if spec.kind is OutputKind.JSON else good[:len(good) - len(valid)]  # no value / no "}"
    rejected += ["", valid, good + "\n", good + " Thanks.", good + "\n" + good, cut]
    if form is AnswerConstraint.REASONING:
        # Reasoning over several lines, or holding what the parser would read instead of the final line.
        rejected += [f"One.\nTwo.\n{good.splitlines()[-1]}" if spec.kind is not OutputKind.JSON else
                     f"One.\nTwo.\n{good.split(chr(10), 1)[1]}",
                     "<think>hm\n" + good.split("\n", 1)[1], "[[A]]\n" + good.split("\n", 1)[1],
                     "x" * (grammar.free_chars + 1) + "\n" + good.split("\n", 1)[1]]
    else:
        rejected += ["Fine.\n" + good]
    if spec.kind is OutputKind.JSON:
        compact = json.dumps(json.loads(good[good.index("{"):]))
        rejected += [compact, good.replace('"relevant"', "relevant"), good.replace("{", "[", 1),
                     good.replace(f": {valid},", f': "{valid}",')]
    for text in rejected:
        assert not engine.accepts(grammar.gbnf, text), f"{name}: the grammar accepts {text!r}"


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f.value)
@pytest.mark.parametrize("name, spec", ONE_SPEC_EACH, ids=[n for n, _ in ONE_SPEC_EACH])
def test_answers_drawn_at_random_from_the_grammar_parse(engine: GrammarEngine, name: str, spec: OutputSpec,
                                                        form: AnswerConstraint):
    """Random logits over the whole vocabulary, masked by the grammar: whatever comes out parses."""
    import numpy as np

    max_tokens = 256 if spec.kind is OutputKind.JSON else 60
    grammar = build_grammar(spec, form, max_tokens=max_tokens)
    rng = np.random.default_rng([n for n, _ in SPECS].index(name) * 2 + FORMS.index(form))
    for _ in range(3):
        text = engine.sample(grammar.gbnf, rng, max_steps=max_tokens)
        assert text is not None, f"{name}: a random walk through the grammar did not end within max_tokens"
        parsed = parse_output(text, spec)
        assert parsed.ok, f"{name}: the grammar produced {text!r}, which does not parse: {parsed.error}"
        if spec.kind is OutputKind.JSON:
            stated = str(json.loads(text[text.index("{"):])[spec.score_key])
        else:
            stated = text.splitlines()[-1][len(grammar.lead) + 1:]
        assert math.isclose(parsed.score, expected_score(spec, stated) if spec.kind is not OutputKind.YESNO
                            else float(expected_score(spec, stated)))


def test_free_text_fits_in_max_tokens_and_too_few_tokens_are_refused():
    spec = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:")
    grammar = build_grammar(spec, AnswerConstraint.REASONING, max_tokens=100)
    # "\nScore: 5" is 9 bytes, 2 tokens are kept spare: 89 characters of reasoning at most.
    assert grammar.free_chars == 100 - 9 - 2
    assert "free-char{1,89}" in grammar.gbnf
    with pytest.raises(GrammarError, match="max_tokens is 20.*at least 27"):
        build_grammar(spec, AnswerConstraint.REASONING, max_tokens=20)
    with pytest.raises(GrammarError, match="max_tokens is 8"):
        build_grammar(spec, AnswerConstraint.ANSWER, max_tokens=8)
    assert build_grammar(spec, AnswerConstraint.ANSWER, max_tokens=10).free_chars == 0


def test_a_template_prefix_the_parser_would_not_read_last_falls_back_to_an_explicit_lead():
    yes_no = OutputSpec(OutputKind.YESNO, 0, 1, choices=("no", "yes"), answer_prefix="Reply:")
    grammar = build_grammar(yes_no, AnswerConstraint.REASONING, max_tokens=64)
    assert grammar.lead == "Answer:"
    text = answer_text(yes_no, "yes", lead=grammar.lead, constraint=AnswerConstraint.REASONING,
                       reasoning="Reply: no, I first thought.")
    assert parse_output(text, yes_no).score == 1.0
    # Without the explicit lead the parser sees both words and refuses: why the lead is checked.
    assert parse_output("Reply: no, I first thought.\nReply: yes", yes_no).score is None
    likert = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="")
    assert build_grammar(likert, AnswerConstraint.ANSWER, max_tokens=64).lead == "Score:"


def test_continuous_scores_need_a_whole_number_range():
    with pytest.raises(GrammarError, match="whole-number"):
        build_grammar(OutputSpec(OutputKind.CONTINUOUS, 0.5, 1.0), AnswerConstraint.ANSWER, max_tokens=64)
    with pytest.raises(GrammarError, match="not constrained"):
        build_grammar(OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2")), AnswerConstraint.OFF, max_tokens=64)


def test_the_json_schema_of_the_inca_object_lists_its_keys_in_order():
    spec = dict(SPECS)["inca-kpi:follow-up"]
    schema: dict[str, Any] = json_schema(spec)
    assert list(schema["properties"]) == ["Reasoning KPI follow-up", "KPI follow-up Score", "Relevancy KPI follow-up"]
    assert schema["properties"]["KPI follow-up Score"] == {"type": "number", "enum": [0, 1]}
    assert schema["required"] == list(schema["properties"])
    with pytest.raises(GrammarError, match="not a JSON object"):
        json_schema(OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5")))
