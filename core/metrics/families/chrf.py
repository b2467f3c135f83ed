"""chrF++ (sacrebleu), registered with the metric registry.

sacrebleu's statistics of a pair are, per n-gram order (characters 1-6, words 1-2),
the hypothesis total, the reference total and the matches: the sum over shared
n-grams of the smaller count. A text of L characters has L-n+1 character n-grams of
order n, so the totals need no n-gram at all. The matches need a text's n-grams, and
each text's are made once and kept (:class:`ChrfText`):

- a Latin-1 text's character n-grams (every English text) are int64 codes, counted
  and matched in numpy (:mod:`.char_codes`): a byte per character, so a 6-gram fits;
- other texts' character n-grams (a Chinese character needs 16 bits or more, six of
  them do not fit an int64), a Latin-1 text's too when it is paired with one of those,
  and every text's word n-grams are strings, made order by order as sacrebleu makes
  them and counted with Counter's C loop, and only as far as some pair needs them
  (:class:`GramLadder`): two texts that share no n-gram of order n share none of any
  higher order, so a pair stops there (most Chinese dialogue pairs at order 2 or 3).

The score is sacrebleu's ``_compute_f_score`` arithmetic on those integers
(:func:`f_score`), so it is identical.
"""

from __future__ import annotations

import operator
from collections import _count_elements  # type: ignore[attr-defined]  # Counter's C counting loop
from collections.abc import Callable, KeysView
from itertools import islice
from typing import TYPE_CHECKING, Any

from ..family import MetricFamily, MetricInfo, register_family
from ..multiset import ngrams
from ..params import CHRF_BETA, CHRF_CHAR_ORDER, CHRF_WORD_ORDER
from ..scoring_context import ScoringContext
from ..signature_parts import NREFS, distribution_version

if TYPE_CHECKING:
    from ..char_codes import CodedGrams

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
    ``extract_all_char_ngrams`` counts them (whitespace already handled by the caller)."""
    chars = list(line)
    orders = [chars]
    for n in range(2, max_order + 1):
        orders.append(longer_char_grams(orders[-1], chars, n))
    return orders


def longer_char_grams(shorter: list[str], chars: list[str], n: int) -> list[str]:
    """A text's character n-grams from its (n-1)-grams: each with the character after it, in C.
    ``chars`` is the text as a list, so that no character string is made again per order
    (iterating a str makes a new string per character beyond Latin-1, every Chinese one)."""
    return list(map(operator.add, shorter, islice(chars, n - 1, None)))


def longer_word_grams(shorter: list[str], words: list[str], n: int) -> list[str]:
    """A text's word n-grams, joined by a space as sacrebleu's ``extract_word_ngrams`` joins them."""
    return ngrams(words, n)


class GramLadder:
    """One text's n-grams of one kind (characters or words), order by order, built only as far
    as some pair asks (:meth:`grow`; :func:`ladder_matches` stops at the first order two texts do not share).

    Per built order: the distinct n-grams (a set, or a dict's keys) and, only where some n-gram
    repeats, each one's count. Once an order has no repeat no higher one has (a repeated
    (n+1)-gram repeats its n-gram prefix), so those are plain sets, cheaper than counts."""

    __slots__ = ("_last", "counts", "items", "keys", "longer", "max_order")

    def __init__(self, items: list[str], max_order: int,
                 longer: Callable[[list[str], list[str], int], list[str]]) -> None:
        self.items = items  # the characters or the words
        self.max_order = max_order
        self.longer = longer  # (the (n-1)-grams, items, n) -> the n-grams
        #: Per order built so far (index n-1 for order n): the distinct n-grams.
        self.keys: list[set[str] | KeysView[str]] = []
        #: Per order built so far: each n-gram's count where some n-gram repeats, else None.
        self.counts: list[dict[str, int] | None] = []
        self._last = items  # the n-grams of the highest order built

    def grow(self) -> None:
        """Build the next order."""
        n = len(self.keys) + 1
        grams = self._last = self.items if n == 1 else self.longer(self._last, self.items, n)
        if n > 1 and self.counts[-1] is None:
            self.keys.append(set(grams))
            self.counts.append(None)
        else:
            counts: dict[str, int] = {}
            _count_elements(counts, grams)
            self.keys.append(counts.keys())
            self.counts.append(counts if len(counts) < len(grams) else None)
        if n == self.max_order:
            self._last = self.items  # nothing left to extend: let the highest order's list go


def ladder_matches(a: GramLadder, b: GramLadder) -> list[int]:
    """Per order, the sum over the n-grams in both texts of the smaller count."""
    out: list[int] = []
    a_keys, b_keys = a.keys, b.keys
    for n in range(a.max_order):  # order n + 1
        if len(a_keys) == n:
            a.grow()
        if len(b_keys) == n:
            b.grow()
        shared = a_keys[n] & b_keys[n]
        if not shared:  # nothing shared at this order, so nothing at any higher one
            out += [0] * (a.max_order - n)
            break
        a_counts, b_counts = a.counts[n], b.counts[n]
        if a_counts is None or b_counts is None:
            out.append(len(shared))  # one side counts each n-gram of the order once
        else:
            out.append(sum(map(min, map(a_counts.__getitem__, shared), map(b_counts.__getitem__, shared))))
    return out


class ChrfText:
    """One text's chrF++ n-grams: per order (characters 1-6, then words 1-2) the total; the
    character n-grams as codes (``coded``, Latin-1 texts) and as strings (``chars``, a ladder
    grown only where used: for other texts, and for a Latin-1 text against one of them); the
    word n-grams (``words``, a ladder too)."""

    __slots__ = ("chars", "coded", "totals", "words")

    def __init__(self, line: str, words: list[str], char_order: int, word_order: int,
                 coded: CodedGrams | None = None) -> None:
        # Order n of L items has L-n+1 n-grams, none when L < n.
        self.totals = ([max(0, len(line) - n) for n in range(char_order)]
                       + [max(0, len(words) - n) for n in range(word_order)])
        self.coded = coded
        self.chars = GramLadder(list(line), char_order, longer_char_grams)
        self.words = GramLadder(words, word_order, longer_word_grams)


def matches(a: ChrfText, b: ChrfText) -> list[int]:
    """Per order (characters, then words), the sum over the n-grams in both texts of the smaller count."""
    if a.coded is not None and b.coded is not None:
        chars = a.coded.matches(b.coded)
    else:
        chars = ladder_matches(a.chars, b.chars)
    return chars + ladder_matches(a.words, b.words)


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

        from .. import char_codes  # numpy, likewise

        self._chrf: Any = CHRF(char_order=CHRF_CHAR_ORDER, word_order=CHRF_WORD_ORDER, beta=CHRF_BETA)
        self._codes = char_codes if self._chrf.char_order <= char_codes.MAX_ORDER else None
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
            if not chrf.whitespace:
                line = "".join(line.split())
            codes = self._codes
            coded = codes.CodedGrams(line, chrf.char_order) if codes is not None and codes.is_latin1(line) else None
            found = self._texts[text] = ChrfText(line, words, chrf.char_order, chrf.word_order, coded)
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
