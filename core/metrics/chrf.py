"""chrF++ (sacrebleu), registered with the metric registry.

sacrebleu's statistics of a pair are, per n-gram order (characters 1-6, words 1-2),
the hypothesis total, the reference total and the matches: the sum over shared
n-grams of the smaller count. Here each text's n-grams are extracted once, as
sacrebleu extracts them (characters built order by order in C), and counted into two
dicts: the character n-grams of every order together (an n-gram's order is its
length) and the word n-grams together (its order is one more than its spaces). A
pair's shared n-grams are then one set intersection per dict, and the matches per
order one counting pass over them, all in C (:func:`matches_by_order`). The totals
follow from the lengths. The statistics are the integers sacrebleu's
``CHRF._compute_segment_statistics`` gives, and the score comes from sacrebleu's own
``_compute_f_score``: it is identical.
"""

from __future__ import annotations

import operator
from collections import _count_elements  # type: ignore[attr-defined]  # Counter's C counting loop
from collections.abc import Callable
from itertools import chain, repeat
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
    """One text's chrF++ n-grams: the character n-grams of all orders in one count dict, the
    word n-grams in another, whether either holds a repeat, and the totals per order."""

    __slots__ = ("chars", "chars_repeat", "totals", "words", "words_repeat")

    def __init__(self, line: str, words: list[str], char_order: int, word_order: int) -> None:
        chars: dict[str, int] = {}
        grams: list[str] = list(line)
        _count_elements(chars, grams)
        for n in range(2, char_order + 1):  # order n: each (n-1)-gram with the next character, in C
            grams = list(map(operator.add, grams, line[n - 1:]))
            _count_elements(chars, grams)
        word_grams: dict[str, int] = {}
        for n in range(1, word_order + 1):
            _count_elements(word_grams, ngrams(words, n))
        char_totals = [max(0, len(line) - n + 1) for n in range(1, char_order + 1)]
        word_totals = [max(0, len(words) - n + 1) for n in range(1, word_order + 1)]
        self.chars, self.chars_repeat = chars, len(chars) < sum(char_totals)
        self.words, self.words_repeat = word_grams, len(word_grams) < sum(word_totals)
        self.totals = char_totals + word_totals


def matches_by_order(a: dict[str, int], a_repeats: bool, b: dict[str, int], b_repeats: bool,
                     order_of: Callable[[str], int]) -> dict[int, int]:
    """Order -> the sum over the n-grams of that order in both of the smaller count."""
    shared = a.keys() & b.keys()
    out: dict[int, int] = {}
    if a_repeats and b_repeats:
        smaller = map(min, map(a.__getitem__, shared), map(b.__getitem__, shared))
        _count_elements(out, chain.from_iterable(map(repeat, map(order_of, shared), smaller)))
    else:  # one side counts each n-gram once, so each smaller count is 1
        _count_elements(out, map(order_of, shared))
    return out


def _word_order(gram: str) -> int:
    return gram.count(" ") + 1


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
        # sacrebleu's CHRF._compute_segment_statistics: per order [hyp total (0 when the
        # reference has no n-gram of that order), ref total, matches]; the best F of the references.
        chrf = self._chrf
        hyp = self._grams(candidate)
        best_f = -1.0
        for ref in refs:
            target = self._grams(ref)
            chars = matches_by_order(hyp.chars, hyp.chars_repeat, target.chars, target.chars_repeat, len)
            words = matches_by_order(hyp.words, hyp.words_repeat, target.words, target.words_repeat, _word_order)
            matches = [chars.get(n, 0) for n in range(1, chrf.char_order + 1)]
            matches += [words.get(n, 0) for n in range(1, chrf.word_order + 1)]
            stats: list[int] = []
            for hyp_total, ref_total, matched in zip(hyp.totals, target.totals, matches):
                stats += (hyp_total if ref_total else 0, ref_total, matched)
            f = chrf._compute_f_score(stats)
            if f > best_f:
                best_f = f
        return {CHRF_ID: best_f / 100.0}


register_family(MetricFamily(name="chrf", order=40, ids=(CHRF_ID,), info=lambda metric_id, variant: CHRF_INFO,
                             signature=chrf_signature, scorer=ChrfScorer))
