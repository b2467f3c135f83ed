"""chrF++ (sacrebleu), registered with the metric registry.

sacrebleu's statistics of a pair are, per n-gram order (characters 1-6, words 1-2),
the hypothesis total, the reference total and the matches: the sum over shared
n-grams of the smaller count. Here each text's n-grams are extracted once, as
sacrebleu extracts them (each character order built from the previous one in C),
and counted per order with Counter's C loop (:class:`ChrfText`). A pair's matches
per order are the size of the intersection of the two key views, also in C; only
where both texts repeat an n-gram of that order are the smaller counts summed
(:func:`matches`). The score is sacrebleu's ``_compute_f_score`` arithmetic on those
integers (:func:`f_score`), so it is identical.
"""

from __future__ import annotations

import operator
from collections import _count_elements  # type: ignore[attr-defined]  # Counter's C counting loop
from itertools import compress
from typing import Any

from .engine import ScoringContext
from .multiset import ngrams
from .params import CHRF_BETA, CHRF_CHAR_ORDER, CHRF_WORD_ORDER
from .registry import MetricFamily, MetricInfo, register_family
from .signatures import NREFS, distribution_version

CHRF_ID = "chrf++"

CHRF_INFO = MetricInfo(
    id=CHRF_ID,
    label="chrF++",
    description=(
        "chrF++: character 1-6-gram and word 1-2-gram F-score, beta 2 (sacrebleu CHRF with "
        "word_order=2), scaled to 0-1. With several references the best one counts, as "
        "sacrebleu chooses it."
    ),
    family="chrf",
)


def chrf_signature(metric_id: str = CHRF_ID, variant: str | None = None) -> str:
    return "|".join((
        "chrF++", f"nrefs:{NREFS}", "refs:best", "case:mixed", "eff:yes", f"nc:{CHRF_CHAR_ORDER}",
        f"nw:{CHRF_WORD_ORDER}", f"beta:{CHRF_BETA}", "space:no",
        f"version:{distribution_version('sacrebleu')}",
    ))


def char_ngrams(line: str, max_order: int) -> list[list[str]]:
    """The character 1..max_order-grams of ``line`` in order, as sacrebleu's
    ``extract_all_char_ngrams`` counts them (whitespace already handled by the caller);
    each order is built from the previous one by appending a character, in C."""
    orders = []
    grams: list[str] = list(line)
    for n in range(1, max_order + 1):
        if n > 1:
            grams = list(map(operator.add, grams[:-1], line[n - 1:]))
        orders.append(grams)
    return orders


def word_ngrams(words: list[str], max_order: int) -> list[list[str]]:
    """The word 1..max_order-grams, joined by a space as sacrebleu's ``extract_word_ngrams`` joins them."""
    return [ngrams(words, n) for n in range(1, max_order + 1)]


class ChrfText:
    """One text's chrF++ n-grams: per order (characters 1-6, then words 1-2) each n-gram's count,
    the total, and whether any n-gram of that order repeats."""

    __slots__ = ("counts", "repeats", "totals")

    def __init__(self, line: str, words: list[str], char_order: int, word_order: int) -> None:
        orders: list[str | list[str]] = [line]
        grams: str | list[str] = line
        for n in range(2, char_order + 1):  # order n: each (n-1)-gram with the next character, in C
            grams = list(map(operator.add, grams, line[n - 1:]))
            orders.append(grams)
        orders += [ngrams(words, n) for n in range(1, word_order + 1)]
        self.counts: list[dict[str, int]] = [{} for _ in orders]
        for _ in map(_count_elements, self.counts, orders):  # Counter's C loop, once per order
            pass
        self.totals = list(map(len, orders))
        self.repeats = list(map(operator.lt, map(len, self.counts), self.totals))


def matches(a: ChrfText, b: ChrfText) -> list[int]:
    """Per order, the sum over the n-grams in both texts of the smaller count."""
    shared = list(map(operator.and_, map(dict.keys, a.counts), map(dict.keys, b.counts)))
    out = list(map(len, shared))  # right wherever one side counts each n-gram of the order once
    for i in compress(range(len(out)), map(operator.and_, a.repeats, b.repeats)):
        a_counts, b_counts = a.counts[i], b.counts[i]
        out[i] = sum(map(min, map(a_counts.__getitem__, shared[i]), map(b_counts.__getitem__, shared[i])))
    return out


def f_score(hyp_totals: list[int], ref_totals: list[int], matches: list[int], beta: int) -> float:
    """sacrebleu's ``CHRF._compute_f_score`` (without eps smoothing, its default) on the per-order
    totals and matches, on 0-100: the same operations in the same order, so the same float.
    (Its running eps-smoothed sum only matters with eps smoothing, so it is not kept.)"""
    factor = beta ** 2
    avg_prec, avg_rec = 0.0, 0.0
    effective_order = 0
    for n_hyp, n_ref, n_match in zip(hyp_totals, ref_totals, matches):
        if n_hyp > 0 and n_ref > 0:
            avg_prec += n_match / n_hyp
            avg_rec += n_match / n_ref
            effective_order += 1
    if effective_order == 0:
        avg_prec = avg_rec = 0.0
    else:
        avg_prec /= effective_order
        avg_rec /= effective_order
    if avg_prec + avg_rec:
        score = (1 + factor) * avg_prec * avg_rec
        score /= ((factor * avg_prec) + avg_rec)
        return 100 * score
    return 0.0


class ChrfScorer:
    def __init__(self, ids: tuple[str, ...], context: ScoringContext) -> None:
        from sacrebleu.metrics import CHRF  # heavy: loaded when chrF++ first scores

        self._chrf: Any = CHRF(char_order=CHRF_CHAR_ORDER, word_order=CHRF_WORD_ORDER, beta=CHRF_BETA)
        self._texts: dict[str, ChrfText] = {}

    def cache_size(self) -> int:
        return len(self._texts)

    def _grams(self, text: str) -> ChrfText:
        """sacrebleu's chrF++ n-grams of one text, computed once per text."""
        found = self._texts.get(text)
        if found is None:
            chrf = self._chrf
            line = chrf._preprocess_segment(text)
            words = chrf._remove_punctuation(line) if chrf.word_order > 0 else []
            found = self._texts[text] = ChrfText(line if chrf.whitespace else "".join(line.split()), words,
                                                 chrf.char_order, chrf.word_order)
        return found

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        # sacrebleu's CHRF._compute_segment_statistics and _compute_f_score: per order the
        # hypothesis total (0 when the reference has no n-gram of that order), the reference
        # total and the matches; the best F of the references.
        beta = self._chrf.beta
        hyp = self._grams(candidate)
        best_f = -1.0
        for ref in refs:
            target = self._grams(ref)
            f = f_score(hyp.totals, target.totals, matches(hyp, target), beta)
            if f > best_f:
                best_f = f
        return {CHRF_ID: best_f / 100.0}


register_family(MetricFamily(name="chrf", order=40, ids=(CHRF_ID,), info=lambda metric_id, variant: CHRF_INFO,
                             signature=chrf_signature, scorer=ChrfScorer))
