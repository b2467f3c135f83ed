"""chrF++ (sacrebleu), registered with the metric registry.

Each text's character and word n-grams are extracted once (sacrebleu's own
extraction, characters built order by order in C), and a pair's matches are counted
over the n-grams the two texts share; the statistics are the integers sacrebleu's
``CHRF._compute_segment_statistics`` gives, so the score is identical.
"""

from __future__ import annotations

import operator
from collections import Counter
from typing import Any

from .engine import ScoringContext
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


def char_ngram_counts(line: str, max_order: int) -> list[Counter]:
    """Counts of the character 1..max_order-grams of ``line``, as sacrebleu's
    ``extract_all_char_ngrams`` gives them (whitespace already handled by the caller);
    each order is built from the previous one by appending a character, in C."""
    counters = []
    grams: list[str] = list(line)
    for n in range(1, max_order + 1):
        if n > 1:
            grams = list(map(operator.add, grams[:-1], line[n - 1:]))
        counters.append(Counter(grams))
    return counters


class ChrfScorer:
    def __init__(self, ids: tuple[str, ...], context: ScoringContext) -> None:
        from sacrebleu.metrics import CHRF  # heavy: loaded when chrF++ first scores
        from sacrebleu.metrics.helpers import extract_word_ngrams  # sacrebleu, as above

        self._chrf: Any = CHRF(char_order=CHRF_CHAR_ORDER, word_order=CHRF_WORD_ORDER, beta=CHRF_BETA)
        self._extract_word_ngrams = extract_word_ngrams
        self._texts: dict[str, list[tuple[Counter, int]]] = {}

    def cache_size(self) -> int:
        return len(self._texts)

    def _ngrams(self, text: str) -> list[tuple[Counter, int]]:
        """sacrebleu's chrF++ n-grams of one text (characters 1-6, then words 1-2), each with its
        total count, computed once per text."""
        found = self._texts.get(text)
        if found is None:
            chrf = self._chrf
            line = chrf._preprocess_segment(text)
            counters = char_ngram_counts(line if chrf.whitespace else "".join(line.split()), chrf.char_order)
            if chrf.word_order > 0:
                words = chrf._remove_punctuation(line)
                counters.extend(self._extract_word_ngrams(words, n) for n in range(1, chrf.word_order + 1))
            found = self._texts[text] = [(c, sum(c.values())) for c in counters]
        return found

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        # sacrebleu's CHRF._compute_segment_statistics with the n-grams of every text
        # extracted once and the matches counted over the common n-grams only.
        chrf = self._chrf
        hyp = self._ngrams(candidate)
        best_stats: list[int] = []
        best_f = -1.0
        for ref in refs:
            stats: list[int] = []
            for (h, h_total), (r, r_total) in zip(hyp, self._ngrams(ref)):
                common = h.keys() & r.keys()
                matches = sum(map(min, map(h.__getitem__, common), map(r.__getitem__, common)))
                stats += (h_total if r else 0, r_total, matches)
            f = chrf._compute_f_score(stats)
            if f > best_f:
                best_f, best_stats = f, stats
        return {CHRF_ID: chrf._compute_f_score(best_stats) / 100.0}


register_family(MetricFamily(name="chrf", order=40, ids=(CHRF_ID,), info=lambda metric_id, variant: CHRF_INFO,
                             signature=chrf_signature, scorer=ChrfScorer))
