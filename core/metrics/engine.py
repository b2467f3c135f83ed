"""Score candidate/reference pairs as the metric libraries do, doing each piece of work once.

Each metric family registers its scorer (:mod:`.registry`); the engine makes the
scorers of the wanted metrics and asks each for its scores. Every score equals the
library called directly (sacrebleu, rouge-score, NLTK; tests compare them pair by
pair with ``==``): the scorers use the libraries' tokenizers, stemmer and METEOR
matcher, and where they count n-grams themselves they compute the same integers
and the same arithmetic (see each family module). What changes is how often work
is done:

- each distinct text is tokenized once (sacrebleu's 13a or 'zh' tokenization is
  shared by BLEU and METEOR through :class:`ScoringContext`), and its n-grams are
  counted once, in C (BLEU, ROUGE-N, chrF++; :mod:`.multiset`; chrF++'s characters
  of Latin-1 texts as int64 codes in numpy, :mod:`.char_codes`), so a pair costs
  a few set intersections; USR has five candidates per reference, KdConv's replies
  are candidates of one pair and references of another;
- BLEU-1..4 come from one set of order-4 statistics;
- Porter stems and WordNet synonym sets are remembered per word;
- a pair scored before (same candidate, references and language) gets its
  earlier scores back: reruns and datasets that repeat pairs pay once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from .registry import families_of, resolve_metric_ids
from .scoring_context import PairScorer, ScoringContext

__all__ = ["MetricEngine", "ScoringContext"]


class MetricEngine:
    """Scores pairs for a fixed set of metrics. Not thread-safe; one per worker.

    ``wordnet``: a WordNet reader for METEOR (anything with NLTK's ``synsets(word)``);
    by default the compact index :func:`.wordnet.load_synonyms` gives, or none
    (exact+stem matching).
    """

    def __init__(self, metric_ids: Iterable[str] | None = None, *, wordnet: Any = ScoringContext.UNSET) -> None:
        self.metric_ids = resolve_metric_ids(metric_ids)
        context = self._context = ScoringContext(wordnet)
        self._scorers: list[PairScorer] = [family.scorer(ids, context) for family, ids in families_of(self.metric_ids)]
        self._pairs: dict[tuple[str, tuple[str, ...], bool], dict[str, float]] = {}

    def cache_size(self) -> int:
        """How many texts, reference sets and pairs the engine remembers."""
        return (sum(scorer.cache_size() for scorer in self._scorers) + self._context.cache_size()
                + len(self._pairs))

    def score(self, candidate: str, references: Sequence[str], chinese: bool = False) -> dict[str, float]:
        """Every wanted metric for one candidate against its references, each on 0-1."""
        refs = tuple(references)
        if not refs:
            raise ValueError("a reference-based metric needs at least one reference")
        key = (candidate, refs, chinese)
        found = self._pairs.get(key)
        if found is None:
            found = self._pairs[key] = self._score(candidate, refs, chinese)
        return dict(found)

    def _score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        out: dict[str, float] = {}
        for scorer in self._scorers:
            out.update(scorer.score(candidate, refs, chinese))
        # sacrebleu scores a perfect match as exp(log(100)) = 100.00000000000004;
        # clamping keeps every score on 0-1 and moves none by more than 1e-15.
        return {metric_id: min(1.0, max(0.0, out[metric_id])) for metric_id in self.metric_ids}
