"""The review queue (core/review_queue): which judged items deserve a human look, and the export rows."""

from __future__ import annotations

import pytest

from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.store.run_store import Review
from dialjudge.core.judges.types import Judgment, ScoringMode
from dialjudge.core.review_queue import FlagKind, build_queue, review_rows


def judgment(item_id: str, judge: str, normalized: float | None) -> Judgment:
    return Judgment(item_id=item_id, judge=judge, mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="",
                    score=None if normalized is None else 1 + 4 * normalized, normalized=normalized,
                    error=None if normalized is not None else "no score found")


def test_build_queue_orders_failures_caught_human_gaps_and_judge_spreads():
    dataset = open_dataset("sample", remember=False)
    unit = {ex.id: (ex.human("overall") - 1) / 4 for ex in dataset.examples}
    one = {i: judgment(i, "a", u) for i, u in unit.items()}
    two = {i: judgment(i, "b", u) for i, u in unit.items()}
    one["sample-c02-ret"] = judgment("sample-c02-ret", "a", None)  # not scored
    one["sample-c01-adv1"] = judgment("sample-c01-adv1", "a", unit["sample-c01-ref"])  # ties its original
    one["sample-c01-llm"] = judgment("sample-c01-llm", "a", unit["sample-c01-llm"] - 0.5)  # gap 0.5
    one["sample-c03-llm"] = judgment("sample-c03-llm", "a", unit["sample-c03-llm"] - 0.29)  # under the threshold
    two["sample-c04-hum"] = judgment("sample-c04-hum", "b", 0.0)  # both a gap and a spread
    queue = build_queue(dataset, {"a": one, "b": two}, "overall")
    assert [c.item_id for c in queue] == ["sample-c02-ret", "sample-c01-adv1", "sample-c04-hum", "sample-c01-llm"]
    assert [c.kind for c in queue] == [FlagKind.PARSE_FAILURE, FlagKind.CAUGHT, FlagKind.JUDGE_HUMAN,
                                       FlagKind.JUDGE_HUMAN]
    assert {f.kind for f in queue[2].flags} == {FlagKind.JUDGE_HUMAN, FlagKind.JUDGES_DISAGREE}
    assert queue[2].gap == pytest.approx(1.0)
    assert queue[1].flags[0].text.endswith("its original sample-c01-ref 1.00")


def test_review_rows_mark_manual_labels():
    dataset = open_dataset("sample", remember=False)
    judged = {ex.id: judgment(ex.id, "a", 0.5) for ex in dataset.examples[:4]}
    reviews = {"sample-c01-llm": Review(3, "sample-c01-llm", "human-doubtful", "lenient", 3.0, "t"),
               "sample-c01-s2s": Review(3, "sample-c01-s2s", "fine", "", None, "t")}
    rows = review_rows(dataset, 3, "overall", {"a": judged}, reviews)
    assert [r["item_id"] for r in rows] == [ex.id for ex in dataset.examples[:4]]
    by_id = {r["item_id"]: r for r in rows}
    assert by_id["sample-c01-llm"]["label"] == 3.0 and by_id["sample-c01-llm"]["label_is_manual"] is True
    assert by_id["sample-c01-s2s"]["label"] == by_id["sample-c01-s2s"]["dataset_label"]
    assert by_id["sample-c01-s2s"]["label_is_manual"] is False and by_id["sample-c01-s2s"]["verdict"] == "fine"
    assert by_id["sample-c01-ref"]["judge:a"] == 0.5
