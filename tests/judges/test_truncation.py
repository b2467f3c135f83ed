"""A dialogue longer than the judge's window: oldest turns out first, marked and reported, never cut silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialjudge.core.config import JudgeConfig, Sampling
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.prompts.truncation import (
    TEMPLATE_MARGIN_TOKENS,
    PromptTooLong,
    WindowBudget,
    estimate_tokens,
    fit_to_window,
    marker_text,
)
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import Message, OutputKind, OutputSpec, RenderedPrompt, ScoringMode
from dialjudge.core.model import BINARY_01, Dataset, Example, Rating, Turn

SPEC = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"))
INSTRUCTIONS = "Rate the response from 1 to 5."


def words(text: str) -> int:
    return len(text.split())


def example(turns: int, *, words_per_turn: int = 10, last: str = "what now?") -> Example:
    context = tuple(Turn("A" if i % 2 else "B", " ".join([f"t{i}w"] * words_per_turn)) for i in range(turns - 1))
    return Example(id="long", group_id="g", context=(*context, Turn("A", last)), candidate="the reply",
                   ratings={"good": Rating((1,), BINARY_01)})


def render(ex: Example) -> RenderedPrompt:
    return RenderedPrompt((Message("system", INSTRUCTIONS),
                           Message("user", f"{ex.context_text()}\nResponse: {ex.candidate}")), SPEC, "t")


def test_the_fewest_oldest_turns_are_left_out_and_marked() -> None:
    ex = example(20)
    full = words(render(ex).text)
    window = 120 + 10 + TEMPLATE_MARGIN_TOKENS  # 120 words of prompt, 10 for the answer
    assert full > 120
    fitted = fit_to_window(render, ex, WindowBudget(window, 10, count=words))
    text = fitted.prompt.text
    assert words(text) <= 120
    kept = [t.text for t in ex.context[fitted.dropped_turns:]]
    assert all(turn in text for turn in kept)  # the newest turns, in order
    assert text.index(kept[0]) < text.index(kept[-1])
    assert marker_text(fitted.dropped_turns) in text
    assert ex.context[fitted.dropped_turns - 1].text not in text  # older ones are gone
    assert INSTRUCTIONS in text and "Response: the reply" in text  # never cut
    # The fewest: keeping one more turn would not fit (checked by rendering it here).
    one_more = Example(id="long", group_id="g", candidate="the reply", ratings={},
                       context=(Turn("", marker_text(fitted.dropped_turns - 1)),
                                *ex.context[fitted.dropped_turns - 1:]))
    assert words(render(one_more).text) > 120


def test_a_dialogue_that_fits_is_untouched() -> None:
    ex = example(5)
    fitted = fit_to_window(render, ex, WindowBudget(10_000, 10))
    assert fitted.dropped_turns == 0 and fitted.prompt == render(ex)


def test_a_last_turn_too_long_for_the_window_fails_with_a_reason() -> None:
    ex = example(3, last=" ".join(["long"] * 500))
    with pytest.raises(PromptTooLong, match=r"item 'long': the prompt needs about \d+ tokens even with only the "
                                            r"last turn .* \(window 200, 10 for the answer\); the response and "
                                            "the instructions are never cut"):
        fit_to_window(render, ex, WindowBudget(200, 10, count=words))


def test_estimate_over_counts_english() -> None:
    text = "The quick brown fox jumps over the lazy dog. " * 20
    assert estimate_tokens(text) >= len(text) / 4  # BPE tokenizers average ~4 characters per token


async def test_a_run_reports_truncated_dialogues_and_fails_only_what_cannot_fit(tmp_path: Path) -> None:
    """The real template through the engine, a fake judge with a small window (options.context_window)."""
    items = [example(40, words_per_turn=30), example(2), example(3, last=" ".join(["w"] * 3000))]
    items = [Example(id=f"i{n}", group_id=f"g{n}", context=ex.context, candidate=ex.candidate, ratings=ex.ratings)
             for n, ex in enumerate(items)]
    judge = JudgeConfig(name="small", backend="fake", sampling=Sampling(max_tokens=40),
                        extra={"context_window": 1024})
    template = get_template("likert-1to5")
    config = RunConfig.build("long", template, [judge], aspect="overall", mode=ScoringMode.GENERATE)
    backend = FakeBackend("small")
    with RunStore(tmp_path / "runs.sqlite3") as store:
        summary = await RunEngine(config, Dataset("long", items), {"small": backend},
                                  store).run()
        rows = {r["item_id"]: r for r in store.judgments.export_rows(summary.run_id)}
    assert summary.status == "finished" and summary.done == 3 and summary.failures == 1
    dropped = summary.truncated["small"]["i0"]
    assert list(summary.truncated["small"]) == ["i0"] and dropped > 0
    sent = {r.item_id: r.prompt.text for r in backend.requests}
    assert set(sent) == {"i0", "i1"}
    assert marker_text(dropped) in sent["i0"] and "Rate the response for overall" in sent["i0"]
    assert "Response: the reply" in sent["i0"] and items[0].context[-1].text in sent["i0"]
    assert estimate_tokens(sent["i0"]) <= 1024 - 40 - TEMPLATE_MARGIN_TOKENS
    assert marker_text(1) not in sent["i1"] and "left out" not in sent["i1"]
    assert rows["i2"]["score"] is None and "even with only the last turn" in rows["i2"]["error"]
