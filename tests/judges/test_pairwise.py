"""Pairwise judging in core: pair planning, templates, rendering both orders, verdicts, runs and their report."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from dialjudge.core.config import JudgeConfig
from dialjudge.core.errors import ConfigError, TemplateError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.post_run.pairwise_report import pairwise_report
from dialjudge.core.judges.prompts.render import render_prompt
from dialjudge.core.judges.prompts.templates import Template, load_templates, parse_template
from dialjudge.core.judges.run.config import JudgeSpec, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.events import RunSummary
from dialjudge.core.judges.run.pairwise import (
    PairSetting,
    Verdict,
    pair_example,
    pair_examples,
    parse_verdict,
    plan_pairs,
    verdict_of,
)
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import Judgment, OutputKind, OutputSpec, ScoringMode
from dialjudge.core.model import Dataset, Example, Rating, Scale, ScaleKind, Turn

LIKERT_1_5 = Scale(ScaleKind.ORDINAL, 1, 5)
PAIRWISE = OutputSpec(OutputKind.PAIRWISE, choices=("A", "B", "tie"))


def make_dataset(contexts: int = 3, per_context: int = 4) -> Dataset:
    """Candidate c of context g has c + 1 words and a human rating of c + 1 (so longer is better)."""
    examples = []
    for g in range(contexts):
        for c in range(per_context):
            examples.append(Example(
                id=f"g{g}c{c}", group_id=f"g{g}", context=(Turn("user", f"hello from context {g}"),),
                candidate=" ".join(["word"] * (c + 1)), fact=f"fact {g}",
                ratings={"Overall": Rating((c + 1, c + 1), LIKERT_1_5)}))
    return Dataset("toy", examples)


def template(name: str = "pairwise-plain") -> Template:
    return load_templates()[name]


# --------------------------------------------------------------------------- planning


def test_all_pairs_in_both_orders() -> None:
    plan = plan_pairs(make_dataset(3, 4).examples, PairSetting())
    assert (plan.contexts, plan.candidates, plan.pairs) == (3, 12, 18)  # 3 x C(4, 2)
    assert len(plan.asked) == 36  # each pair both ways
    ids = {p.item_id for p in plan.asked}
    assert {"g0c0>g0c1", "g0c1>g0c0"} <= ids
    assert all(p.first[:2] == p.second[:2] == p.context for p in plan.asked)  # never across contexts


def test_sampled_pairs_are_seeded_and_counted_per_context() -> None:
    items = make_dataset(5, 6).examples
    a = plan_pairs(items, PairSetting(per_context=2, seed=7))
    again = plan_pairs(items, PairSetting(per_context=2, seed=7))
    other = plan_pairs(items, PairSetting(per_context=2, seed=8))
    assert a.asked == again.asked
    assert a.asked != other.asked
    assert (a.pairs, len(a.asked)) == (10, 20)
    one_order = plan_pairs(items, PairSetting(per_context=2, seed=7, both_orders=False))
    assert (one_order.pairs, len(one_order.asked)) == (10, 10)
    assert "10 pairs of 30 candidates in 5 contexts" in a.describe(PairSetting(per_context=2, seed=7))


def test_more_pairs_asked_than_exist_means_all_and_lone_candidates_are_reported() -> None:
    items = make_dataset(2, 3).examples + [Example(id="solo", group_id="g9", context=(Turn("u", "x"),),
                                                   candidate="only one")]
    plan = plan_pairs(items, PairSetting(per_context=10))
    assert (plan.pairs, plan.single_candidate_contexts) == (6, 1)
    assert "1 contexts with one candidate left out" in plan.describe(PairSetting(per_context=10))


@pytest.mark.parametrize("text, expected", [("all", None), ("3", 3), (None, None)])
def test_pair_setting_parses(text: str | None, expected: int | None) -> None:
    assert PairSetting.parse(text).per_context == expected


@pytest.mark.parametrize("text", ["0", "-2", "some"])
def test_pair_setting_refuses_nonsense(text: str) -> None:
    with pytest.raises(ConfigError, match="pairs"):
        PairSetting.parse(text)


# --------------------------------------------------------------------------- templates and rendering


def test_shipped_pairwise_templates_load_with_their_verdict_choices() -> None:
    for name in ("pairwise-plain", "pairwise-aspect"):
        t = load_templates()[name]
        assert t.output.kind is OutputKind.PAIRWISE
        assert t.output.choices == ("A", "B", "tie")
        assert t.output.choice_values() == [1.0, 0.0, 0.5]
        assert {"response_a", "response_b"} <= t.variables


BASE = '''name = "p"
description = "d"
[[messages]]
role = "user"
content = "{context} A: {response_a} B: {response_b}"
[output]
kind = "pairwise"
'''


@pytest.mark.parametrize("change, message", [
    (("B: {response_b}", ""), "use {response_a} and {response_b}"),
    (('kind = "pairwise"', 'kind = "pairwise"\nchoices = ["A"]'), "first wins, second wins"),
    (('kind = "pairwise"', 'kind = "pairwise"\nchoices = ["A", "a"]'), "distinct"),
    (('kind = "pairwise"', 'kind = "pairwise"\nmax = 5'), "scored 0-1"),
    (('kind = "pairwise"', 'kind = "likert"'), "are for pairwise templates"),
])
def test_the_loader_names_what_is_wrong_with_a_pairwise_template(change: tuple[str, str], message: str) -> None:
    with pytest.raises(TemplateError, match="output|messages") as info:
        parse_template(BASE.replace(*change), "p.toml")
    assert message in str(info.value)


def test_a_pairwise_template_renders_both_orders_with_the_replies_swapped() -> None:
    ds = make_dataset(1, 2)
    short, long_ = ds.examples
    ab = render_prompt(template(), pair_example(short, long_), quality="Overall")
    ba = render_prompt(template(), pair_example(long_, short), quality="Overall")
    assert f"Reply A: {short.candidate}\n" in ab.messages[-1].content
    assert f"Reply B: {long_.candidate}\n" in ab.messages[-1].content
    assert f"Reply A: {long_.candidate}\n" in ba.messages[-1].content
    assert "Fact: fact 0" in ab.messages[-1].content
    assert ab.hash != ba.hash


def test_a_pairwise_template_refuses_a_single_reply_and_a_pointwise_one_refuses_a_pair() -> None:
    ds = make_dataset(1, 2)
    with pytest.raises(TemplateError, match="compares two replies"):
        render_prompt(template(), ds.examples[0])
    with pytest.raises(TemplateError, match="pairwise"):
        render_prompt(load_templates()["likert-1to5"], pair_example(*ds.examples), aspect="overall")


# --------------------------------------------------------------------------- verdicts


@pytest.mark.parametrize("text, score", [
    ("Reply B stays on topic.\nVerdict: B", 0.0),
    ("Verdict: A", 1.0),
    ("verdict: tie.", 0.5),
    ("[[A]]", 1.0),
    ("The better response is b", 0.0),
    ("B", 0.0),
    ("**Verdict:** A\n", 1.0),
])
def test_verdicts_are_read_from_generated_text(text: str, score: float) -> None:
    assert parse_verdict(text, PAIRWISE)[0] == score


@pytest.mark.parametrize("text, error", [
    ("Both are a fine reply.", "no verdict"),
    ("A and B are both good", "several verdicts"),
    ("The better response is a good one", "no verdict"),
])
def test_unreadable_verdicts_fail_with_a_reason(text: str, error: str) -> None:
    score, _, message = parse_verdict(text, PAIRWISE)
    assert score is None and message is not None and error in message


def _judgment(score: float | None, distribution: dict[str, float] | None = None) -> Judgment:
    return Judgment("a>b", "j", ScoringMode.LOGPROB, "", "", score, score, distribution=distribution)


def test_verdict_of_a_probability_answer_is_its_most_likely_choice() -> None:
    choices = ("A", "B", "tie")
    # Expected value 0.55 would read as "first", but the most likely answer is the tie.
    assert verdict_of(_judgment(0.55, {"A": 0.3, "B": 0.2, "tie": 0.5}), choices) is Verdict.TIE
    assert verdict_of(_judgment(0.3, {"A": 0.1, "B": 0.5, "tie": 0.4}), choices) is Verdict.SECOND
    assert verdict_of(_judgment(1.0), choices) is Verdict.FIRST
    assert verdict_of(_judgment(None), choices) is None


# --------------------------------------------------------------------------- runs


def _config(ds: Dataset, setting: PairSetting, mode: ScoringMode = ScoringMode.GENERATE) -> RunConfig:
    return RunConfig.build(ds, template(), [JudgeSpec.of(JudgeConfig(name="fake", backend="fake"))], mode=mode,
                           quality="Overall", pairs=setting)


def _run(config: RunConfig, ds: Dataset, store: RunStore, backend: FakeBackend) -> RunSummary:
    return asyncio.run(RunEngine(config, ds, {"fake": backend}, store).run())


def first_always(item_id: str, prompt: str) -> float:
    return 1.0  # "A" every time: pure position bias


def longer_wins(item_id: str, prompt: str) -> float:
    first, second = item_id.split(">")
    return 1.0 if first[-1] > second[-1] else 0.0  # a later candidate is longer (and better rated)


def test_a_position_biased_judge_flips_every_pair(tmp_path: Path) -> None:
    ds = make_dataset(3, 3)
    config = _config(ds, PairSetting())
    with RunStore(tmp_path / "runs.db") as store:
        summary = _run(config, ds, store, FakeBackend(score_fn=first_always))
        table = store.judgments.load_judgments(summary.run_id)
    assert set(table["fake"]) == {p.item_id for p in plan_pairs(ds.examples, PairSetting()).asked}
    report = pairwise_report(config, ds, table)
    judge = report.judges["fake"]
    assert (judge.position.both_orders, judge.position.flips) == (9, 9)
    assert judge.position.first_win_share == 1.0
    assert judge.accuracy is not None and judge.accuracy.accuracy == pytest.approx(0.5)  # right in one order of each
    # Every candidate wins exactly its first-position half: win rate 1/2 and equal strengths.
    assert set(judge.scores.win_rate.values()) == {0.5}
    assert report.humans_position is not None and report.humans_position.flips == 0


def test_a_judge_that_agrees_with_the_humans_scores_like_them(tmp_path: Path) -> None:
    ds = make_dataset(3, 4)
    config = _config(ds, PairSetting(), ScoringMode.LOGPROB)
    with RunStore(tmp_path / "runs.db") as store:
        summary = _run(config, ds, store, FakeBackend(score_fn=longer_wins))
        report = pairwise_report(config, ds, store.judgments.load_judgments(summary.run_id))
    judge = report.judges["fake"]
    assert judge.accuracy is not None and judge.accuracy.accuracy == 1.0
    assert judge.position.flips == 0 and judge.length.share == 1.0
    assert report.humans_length is not None and report.humans_length.share == 1.0
    columns = report.score_columns()
    assert set(columns) == {"fake:winrate", "fake:bt"}
    # With all pairs asked, the strengths order each context's candidates as the human ratings do.
    for g in range(3):
        compared = sorted(c for c in columns["fake:bt"] if c.startswith(f"g{g}"))
        strengths = [float(columns["fake:bt"][c] or 0.0) for c in compared]
        assert strengths == sorted(strengths)


def test_a_pairwise_run_is_answered_from_the_store_and_asks_only_its_failures_again(tmp_path: Path) -> None:
    ds = make_dataset(2, 3)
    config = _config(ds, PairSetting())
    with RunStore(tmp_path / "runs.db") as store:
        first = FakeBackend(score_fn=longer_wins)
        _run(config, ds, store, first)
        again = FakeBackend(score_fn=longer_wins)
        summary = _run(config, ds, store, again)
    assert len(first.requests) == 12
    assert again.requests == [] and summary.cached == 12

    with RunStore(tmp_path / "other.db") as store:  # no cache here: failures, then a resume that retries them
        flaky = FakeBackend(score_fn=longer_wins, fail_every=4)
        broken = _run(config, ds, store, flaky)
        assert broken.failures == 3 and broken.status == "finished"
        resumed = _run(config, ds, store, FakeBackend(score_fn=longer_wins))
        # Only the three failed pair orders go to the model again; the rest come from the store.
        assert (resumed.backend_calls, resumed.cached, resumed.failures) == (3, 9, 0)
        assert len(store.judgments.load_judgments(resumed.run_id)["fake"]) == 12


def test_the_pair_setting_is_part_of_the_run_and_its_fingerprint() -> None:
    ds = make_dataset(2, 3)
    config = _config(ds, PairSetting(per_context=2, seed=3))
    restored = RunConfig.from_dict(config.to_dict())
    assert restored.pairs == PairSetting(per_context=2, seed=3)
    assert restored.fingerprint == config.fingerprint
    assert dataclasses.replace(config, pairs=PairSetting(per_context=2, seed=4)).fingerprint != config.fingerprint
    pointwise = dataclasses.replace(config, pairs=None)
    assert "pairs" not in pointwise.to_dict()  # pointwise runs keep their old fingerprints
    asked = pair_examples(ds.examples, PairSetting(per_context=2, seed=3))
    assert [ex.id for ex in config.select_items(ds)] == [ex.id for ex in asked]
