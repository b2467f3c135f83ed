"""What a metric family's scorer gets and gives: the :class:`ScoringContext` the scorers of one
engine share, and the :class:`PairScorer` each family makes. Below the family modules and the
engine that asks them, so that neither imports the other.
"""

from __future__ import annotations

from typing import Any, Protocol

from .tokenize import RememberingStemmer, sacrebleu_tokenize


class PairScorer(Protocol):
    """A family's scores of one candidate against its references, each on 0-1."""

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]: ...

    def cache_size(self) -> int: ...


class ScoringContext:
    """What the scorers of one engine share: one Porter stemmer (ROUGE and METEOR both use
    NLTK's in its default mode), sacrebleu's tokenizations (BLEU and METEOR both tokenize
    with 13a, or 'zh' for Chinese) and the WordNet reader METEOR was given, if any."""

    UNSET: Any = object()

    def __init__(self, wordnet: Any = UNSET) -> None:
        #: A WordNet reader for METEOR, None for none, UNSET for the default (the compact index).
        self.wordnet = wordnet
        self._stemmer: RememberingStemmer | None = None
        self._tokenized: dict[tuple[bool, str], str] = {}

    def stemmer(self) -> RememberingStemmer:
        if self._stemmer is None:
            self._stemmer = RememberingStemmer()
        return self._stemmer

    def cache_size(self) -> int:
        """How many tokenizations the scorers share."""
        return len(self._tokenized)

    def tokenized(self, text: str, chinese: bool) -> str:
        """sacrebleu's 13a (or, for Chinese, 'zh') tokenization of ``text``, once per text."""
        key = (chinese, text)
        found = self._tokenized.get(key)
        if found is None:
            found = self._tokenized[key] = sacrebleu_tokenize(text, chinese)
        return found
