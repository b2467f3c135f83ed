"""``dialjudge align``'s statistics checked at the score level, on simulated datasets with a known truth.

Each dataset is shaped like USR Topical-Chat (60 contexts × 6 responses, 3 annotators on a 1-5
scale; :mod:`core.simulation.synthetic`'s model). ``n_labelled`` items are drawn at random and
labelled by the user: with the humans' pooled label rounded to the scale (*informative*), or with
a label drawn uniformly from the scale, unrelated to the item (*no information*). The starting
judge agrees with the humans at ``agreement``; each of ``n_variants`` proposed variants is the
same judge prompted otherwise (its error correlates with the start's by the design's
``error_correlation``) and agrees at ``agreement + gain`` when the corrections are informative,
at ``agreement`` when they carry no information (as the simulated judge's ``correction_gain``
option does: only matching corrections help).

Then the product's own code decides, as ``dialjudge align`` does: the split by context
(:func:`correction_split`), one round of :class:`SuccessiveHalving` on the corrected items against
the user's labels (Spearman, as :func:`correlate` gives it), and the paired randomization test of the winner
against the starting judge on the held-out contexts (:func:`paired_comparison`, read by
:func:`align_verdict`). No engine, no prompts: hundreds of datasets take seconds.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..model import Example
from ..simulation.calibration import Rate
from ..simulation.synthetic import SimulationDesign, _judge_errors, draw_ratings
from ..stats.paired import paired_comparison
from ..stats.randomization import DEFAULT_DRAWS
from .align import START, align_verdict
from .align_split import correction_split, leaked_contexts
from .halving import SuccessiveHalving

#: USR Topical-Chat's shape: 60 contexts × 6 responses, 3 annotators rating 1-5; a middling judge.
USR_TOPICAL_CHAT = SimulationDesign(n_contexts=60, n_candidates=6, n_annotators=3, rating_points=5, agreement=0.4)


@dataclass(frozen=True)
class AlignDesign:
    data: SimulationDesign = field(default_factory=lambda: USR_TOPICAL_CHAT)
    n_labelled: int = 30
    #: Variants proposed beside the starting judge (few-shot by BM25, at random, a persona).
    n_variants: int = 3
    #: Spearman correlation a variant gains from corrections that match the humans.
    gain: float = 0.0
    #: The user's labels are the humans' (True) or unrelated to the items (False).
    informative: bool = True


@dataclass(frozen=True)
class AlignOutcomes:
    """Each simulated dataset's verdict (better, worse, no difference shown, undecided)."""

    verdicts: tuple[str, ...]
    #: Held-out contexts that held a corrected item, over all datasets (0 for a sound split).
    leaked: int = 0

    def rate(self, verdict: str) -> Rate:
        return Rate(sum(v == verdict for v in self.verdicts), len(self.verdicts))

    def counts(self) -> dict[str, int]:
        return dict(Counter(self.verdicts))


def simulate_align(design: AlignDesign, n_datasets: int, seed: int = 0, *, n_draws: int = DEFAULT_DRAWS
                   ) -> AlignOutcomes:
    """``n_datasets`` alignments of ``design``, each decided by the product's code. ``n_draws``: the
    randomization test's random swaps (the product's 1,000 by default; fewer make a coarser p-value
    that is just as valid, since the observed assignment counts among the draws, and a faster check)."""
    data = design.data
    rng = np.random.default_rng(seed)
    d, k, m = n_datasets, data.n_contexts, data.n_candidates
    quality, _ratings, human = draw_ratings(rng, data, d)
    shared = _judge_errors(rng, d, k, m, data.judge_context_share)
    rho = data.error_correlation
    gained = data.agreement + (design.gain if design.informative else 0.0)
    scores = np.empty((d, 1 + design.n_variants, k * m))
    for j in range(1 + design.n_variants):
        own = _judge_errors(rng, d, k, m, data.judge_context_share)
        error = math.sqrt(rho) * shared + math.sqrt(1.0 - rho) * own
        scores[:, j, :] = quality + data.judge_error_sd(data.agreement if j == 0 else gained) * error
    groups = [f"c{g}" for g in np.repeat(np.arange(k), m)]
    ids = [f"c{i // m}-{i % m}" for i in range(k * m)]
    examples = [Example(id=i, group_id=g, context=(), candidate="") for i, g in zip(ids, groups)]
    group_of = dict(zip(ids, groups))
    names = [START, *(f"variant-{j}" for j in range(1, 1 + design.n_variants))]
    points = data.rating_points or 5
    verdicts, leaked = [], 0
    for index in range(d):
        chosen = rng.choice(k * m, size=design.n_labelled, replace=False)
        if design.informative:
            values = np.clip(np.rint(human[index, chosen]), 1, points)
        else:
            values = rng.integers(1, points + 1, size=design.n_labelled).astype(float)
        labels = {ids[i]: float(v) for i, v in zip(chosen, values)}
        split = correction_split(examples, labels, rated=set(ids), seed=index)
        leaked += len(leaked_contexts(split, examples, labels))
        tuning = [i for i in ids if i in labels]
        columns = {name: dict(zip(ids, scores[index, j].tolist())) for j, name in enumerate(names)}
        sizes = [sum(1 for i in tuning if group_of[i] == c) for c in split.tuning]
        halving = SuccessiveHalving(names, sizes, first_sample=len(split.tuning))
        round_ = halving.next_round()
        assert round_ is not None
        user = np.array([labels[i] for i in tuning])
        halving.record({name: _spearman(np.array([columns[name][i] for i in tuning]), user)
                        for name in round_.variants})
        winner = next(st.variant for st in halving.leaderboard() if st.variant != START)
        heldout = set(split.heldout)
        reference = {i: float(human[index, n]) for n, i in enumerate(ids) if group_of[i] in heldout}
        paired = paired_comparison(columns[START], columns[winner], reference, group_of, name_a=START,
                                   name_b=winner, methods=("spearman",), n_boot=0, seed=index,
                                   n_draws=n_draws)
        verdicts.append(align_verdict(paired, "spearman"))
    return AlignOutcomes(tuple(verdicts), leaked)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ with average ranks for ties: the value the search's :func:`correlate` gives (its
    other coefficients and intervals are not needed to pick the winner, and cost 20 times as much)."""
    from scipy.stats import spearmanr  # scipy loads on first use, as the statistics modules do

    return float(spearmanr(x, y).statistic)
