"""The align split (core/tuning/align_split.py): no context that holds a correction reaches the held-out
(evaluation) split, whatever items are corrected; and the check that says so catches a leaky split."""

from __future__ import annotations

import random

import pytest

from dialjudge.core.errors import ConfigError
from dialjudge.core.model import Example
from dialjudge.core.tuning.align_split import corrected_contexts, correction_split, leaked_contexts
from dialjudge.core.tuning.split import ContextSplit


def _examples(n_contexts: int = 20, per_context: int = 6) -> list[Example]:
    return [Example(id=f"c{c}-{j}", group_id=f"c{c}", context=(), candidate=f"reply {c} {j}")
            for c in range(n_contexts) for j in range(per_context)]


@pytest.mark.parametrize("seed", range(25))
def test_no_corrected_context_reaches_the_heldout_split(seed: int) -> None:
    examples = _examples()
    rng = random.Random(seed)
    labelled = set(rng.sample([ex.id for ex in examples], rng.randint(1, 40)))
    rated = {ex.id for ex in examples if rng.random() > 0.1}
    try:
        split = correction_split(examples, labelled, rated=rated, seed=seed)
    except ConfigError:  # every context corrected: nothing left to hold out
        assert len(corrected_contexts(examples, labelled)) > 18
        return
    group = {ex.id: ex.group_id for ex in examples}
    heldout_items = [ex for ex in examples if ex.group_id in set(split.heldout)]
    # By context, not only by item: no held-out item shares a dialogue with a corrected one.
    assert not {group[i] for i in labelled} & {ex.group_id for ex in heldout_items}
    assert set(split.tuning) == {group[i] for i in labelled}
    assert set(split.heldout) == {ex.group_id for ex in examples if ex.id in rated} - set(split.tuning)
    assert leaked_contexts(split, examples, labelled) == set()


def test_the_leak_check_catches_a_split_that_holds_out_a_corrected_context() -> None:
    examples = _examples(4, 2)
    leaky = ContextSplit(("c0",), ("c1", "c2", "c3"), 0, 0.75)
    assert leaked_contexts(leaky, examples, {"c0-1", "c2-0"}) == {"c2"}


def test_a_split_without_two_untouched_contexts_is_refused() -> None:
    examples = _examples(3, 2)
    with pytest.raises(ConfigError, match="at least 2 untouched contexts"):
        correction_split(examples, {"c0-0", "c1-1"}, rated={ex.id for ex in examples})
    with pytest.raises(ConfigError, match="none of the corrections"):
        correction_split(examples, {"elsewhere"}, rated={ex.id for ex in examples})
