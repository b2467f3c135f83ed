"""Two ways of judging the same pairs, against the humans' preference: a paired permutation test.

On the pairs both judged (matched by pair id) with a human label, each side is right or wrong per pair
(the human label among A, B and tie; a side's verdict by :attr:`JudgedPair.verdict`, the conservative
rule of Zheng et al.: a pair asked in both orders counts as won only when the same reply wins both
times, else a tie). The difference in agreement (x minus y) is tested by swapping the two sides'
verdicts within each prompt (all pairs of one prompt together, since they are not independent):
every one of the 2^k swaps when 2^k is at most ``permutations``, else that many random ones (seeded),
with p = (1 + extreme) / (1 + N). With one pair per prompt this is the exact sign test on the pairs
only one side gets right (McNemar's exact test); with several it respects their dependence, which
McNemar's test does not.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .preference import JudgedPair, PairedAgreement, compare_agreement

RULE_TEXT = ("a verdict by the conservative rule (asked in both orders, a reply wins only if it wins both times, "
             "else a tie; a pointwise run's verdict is the reply it scored higher), right when it equals the "
             "humans' label (their majority vote, or the reply with the higher mean rating; A, B or tie)")
TEST_TEXT = "paired permutation test: the two sides' verdicts swapped within each prompt"
DEFAULT_PERMUTATIONS = 10_000


@dataclass(frozen=True)
class PairVerdictTest:
    """x against y on the pairs both judged."""

    name_x: str
    name_y: str
    agreement: PairedAgreement
    p_value: float
    exact: bool
    n_assignments: int
    #: Prompts (the swap units) behind the pairs.
    units: int

    @property
    def decided(self) -> bool:
        return math.isfinite(self.p_value) and self.p_value < 0.05 and bool(self.agreement.difference)

    def verdict(self) -> str:
        a = self.agreement
        if not a.n:
            return f"{self.name_x} vs {self.name_y}: no pair judged by both with a human label — no comparison"
        share_x, share_y = a.agree_x / a.n, a.agree_y / a.n
        how = (f"exact over all {self.n_assignments:,} swaps" if self.exact
               else f"{self.n_assignments:,} random swaps")
        numbers = (f"{100 * share_x:.1f}% vs {100 * share_y:.1f}% of {a.n} pairs both judged ({self.units} prompts), "
                   f"p = {self.p_value:.3g}, {how}")
        if self.decided:
            better = self.name_x if (a.difference or 0) > 0 else self.name_y
            return f"{better} agrees better with the humans: {numbers}"
        return f"no difference shown between {self.name_x} and {self.name_y}: {numbers}"


def pair_verdict_test(x: Sequence[JudgedPair], y: Sequence[JudgedPair], *, name_x: str = "x", name_y: str = "y",
                      permutations: int = DEFAULT_PERMUTATIONS, n_boot: int = 1000, seed: int = 0) -> PairVerdictTest:
    """The test of the module doc; ``compare_agreement`` gives the counts and the bootstrap CI."""
    summary = compare_agreement(x, y, n_boot=n_boot, seed=seed)
    by_id = {p.pair: p for p in y}
    both = [(p, by_id[p.pair]) for p in x if p.pair in by_id and p.human is not None and p.verdict is not None
            and by_id[p.pair].verdict is not None]
    if not both:
        return PairVerdictTest(name_x, name_y, summary, math.nan, True, 0, 0)
    prompts: dict[object, int] = {}
    unit = np.array([prompts.setdefault(p.prompt, len(prompts)) for p, _ in both])
    k = len(prompts)
    right = np.array([(p.verdict == p.human) - (q.verdict == p.human) for p, q in both], dtype=float)
    per_prompt = np.bincount(unit, weights=right, minlength=k)
    observed = abs(per_prompt.sum())
    if 2 ** k <= permutations:
        signs = 1.0 - 2.0 * ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1)
        flipped = np.abs(signs @ per_prompt)
        return PairVerdictTest(name_x, name_y, summary, float(np.mean(flipped >= observed - 1e-9)), True,
                               int(signs.shape[0]), k)
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, permutations, 1000):
        rows = min(1000, permutations - start)
        signs = np.where(rng.random((rows, k)) < 0.5, -1.0, 1.0)
        extreme += int((np.abs(signs @ per_prompt) >= observed - 1e-9).sum())
    return PairVerdictTest(name_x, name_y, summary, (1 + extreme) / (1 + permutations), False, permutations, k)


__all__ = ["DEFAULT_PERMUTATIONS", "PairVerdictTest", "RULE_TEXT", "TEST_TEXT", "pair_verdict_test"]
