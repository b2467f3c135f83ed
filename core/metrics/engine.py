"""Score candidate/reference pairs with the metric libraries, reusing their work.

Each metric is computed by its library's own code (sacrebleu, rouge-score, NLTK),
so results equal the library called directly; what changes is how often work is
done:

- one sacrebleu BLEU object of order 4 per tokenizer: n-gram statistics are
  computed once per pair and BLEU-1..4 derived from them with sacrebleu's own
  ``compute_bleu`` (the 1..n-gram counts and the closest reference length do not
  depend on the maximum order, so this is exact);
- reference n-grams (BLEU, chrF++), ROUGE tokens and n-gram counts, and METEOR
  tokens are computed once per distinct text or reference set (USR has five
  candidates per reference);
- Porter stems and WordNet synonym sets are remembered per word;
- a pair scored before (same candidate, references and language) gets its
  earlier scores back: reruns and datasets that repeat pairs pay once.
"""

from __future__ import annotations

import operator
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from .params import (
    BLEU_EFFECTIVE_ORDER,
    BLEU_SMOOTH_METHOD,
    CHRF_BETA,
    CHRF_CHAR_ORDER,
    CHRF_WORD_ORDER,
    METEOR_ALPHA,
    METEOR_BETA,
    METEOR_GAMMA,
)
from .registry import BLEU_ORDERS, CHRF_ID, METEOR_ID, resolve_metric_ids
from .synonym_index import SynonymSet

_MAX_ORDER = max(BLEU_ORDERS)


class _RememberingStemmer:
    """NLTK's Porter stemmer, remembering each word's stem."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self._stemmer = PorterStemmer()
        self._stems: dict[str, str] = {}

    def stem(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = self._stemmer.stem(word)
        return stem


class _RememberingSynonyms:
    """A WordNet reader as NLTK's METEOR matcher sees it, remembering each word's synonyms.

    The matcher only reads ``lemma.name()`` of every ``synset.lemmas()`` of
    ``wordnet.synsets(word)``, drops multi-word names (those with '_') and takes
    the set, so one stand-in synset holding the distinct single-word names
    yields the same set at a fraction of the cost.
    """

    def __init__(self, wordnet: Any) -> None:
        self._wordnet = wordnet
        self._synonyms: dict[str, list[SynonymSet]] = {}

    def synsets(self, word: str) -> list[SynonymSet]:
        found = self._synonyms.get(word)
        if found is None:
            names = dict.fromkeys(
                name
                for synset in self._wordnet.synsets(word)
                for name in (lemma.name() for lemma in synset.lemmas())
                if "_" not in name
            )
            found = self._synonyms[word] = [SynonymSet(names)] if names else []
        return found


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """Length of the longest common subsequence (Hyyro's bit-vector algorithm).

    Bit i of ``v`` is 0 when a[i] closes an LCS step found so far; the count of
    zero bits after scanning ``b`` is the LCS length.
    """
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, token in enumerate(a):
        masks[token] = masks.get(token, 0) | (1 << i)
    full = (1 << len(a)) - 1
    v = full
    for token in b:
        matched = v & masks.get(token, 0)
        v = ((v + matched) | (v - matched)) & full
    return len(a) - bin(v).count("1")


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


class MetricEngine:
    """Scores pairs for a fixed set of metrics. Not thread-safe; one per worker.

    ``wordnet``: a WordNet reader for METEOR (anything with NLTK's ``synsets(word)``);
    by default the compact index :func:`.wordnet.load_synonyms` gives, or none
    (exact+stem matching).
    """

    _UNSET: Any = object()

    def __init__(self, metric_ids: Iterable[str] | None = None, *, wordnet: Any = _UNSET) -> None:
        self.metric_ids = resolve_metric_ids(metric_ids)
        wanted = set(self.metric_ids)
        self._bleu_orders = [n for n in BLEU_ORDERS if f"bleu{n}" in wanted]
        self._rouge_ids = [m for m in ("rouge1", "rouge2", "rougeL") if m in wanted]
        self._want_chrf = CHRF_ID in wanted
        self._want_meteor = METEOR_ID in wanted

        self._bleu: dict[bool, Any] = {}
        self._bleu_refs: dict[tuple[bool, tuple[str, ...]], Any] = {}
        if self._bleu_orders:
            from sacrebleu.metrics import BLEU

            from .tokenize import BLEU_TOKENIZER, BLEU_TOKENIZER_CHINESE

            self._compute_bleu = BLEU.compute_bleu
            for chinese, tokenizer in ((False, BLEU_TOKENIZER), (True, BLEU_TOKENIZER_CHINESE)):
                self._bleu[chinese] = BLEU(
                    tokenize=tokenizer, smooth_method=BLEU_SMOOTH_METHOD, effective_order=BLEU_EFFECTIVE_ORDER,
                    max_ngram_order=_MAX_ORDER,
                )

        self._chrf: Any = None
        self._chrf_texts: dict[str, list[tuple[Counter, int]]] = {}
        if self._want_chrf:
            from sacrebleu.metrics import CHRF

            self._chrf = CHRF(char_order=CHRF_CHAR_ORDER, word_order=CHRF_WORD_ORDER, beta=CHRF_BETA)

        # ROUGE and METEOR both use NLTK's Porter stemmer in its default mode.
        stemmer = _RememberingStemmer() if (self._rouge_ids or self._want_meteor) else None

        self._rouge_tokenizers: dict[bool, Any] = {}
        self._rouge_texts: dict[tuple[bool, str], tuple[list[str], Counter, Counter]] = {}
        if self._rouge_ids:
            from rouge_score import rouge_scorer, scoring

            from .tokenize import ChineseCharTokenizer, StemmingTokenizer

            self._score_ngrams = rouge_scorer._score_ngrams
            self._create_ngrams = rouge_scorer._create_ngrams
            self._fmeasure = scoring.fmeasure
            self._rouge_tokenizers = {
                False: StemmingTokenizer(stemmer),
                True: ChineseCharTokenizer(),
            }

        if self._want_meteor:
            from nltk.translate.meteor_score import single_meteor_score

            from .wordnet import NoSynonyms, load_synonyms

            if wordnet is self._UNSET:
                wordnet = load_synonyms()
            self._single_meteor = single_meteor_score
            self._meteor_stemmer = stemmer
            self._meteor_wordnet = _RememberingSynonyms(wordnet if wordnet is not None else NoSynonyms())
            self._meteor_texts: dict[tuple[bool, str], list[str]] = {}
        self._pairs: dict[tuple[str, tuple[str, ...], bool], dict[str, float]] = {}

    def cache_size(self) -> int:
        """How many texts, reference sets and pairs the engine remembers."""
        meteor = len(self._meteor_texts) if self._want_meteor else 0
        return len(self._bleu_refs) + len(self._chrf_texts) + len(self._rouge_texts) + meteor + len(self._pairs)

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
        if self._bleu_orders:
            out.update(self._bleu_scores(candidate, refs, chinese))
        if self._rouge_ids:
            out.update(self._rouge_scores(candidate, refs, chinese))
        if self._want_meteor:
            out[METEOR_ID] = self._meteor_score(candidate, refs, chinese)
        if self._want_chrf:
            out[CHRF_ID] = self._chrf_score(candidate, refs)
        # sacrebleu scores a perfect match as exp(log(100)) = 100.00000000000004;
        # clamping keeps every score on 0-1 and moves none by more than 1e-15.
        return {k: min(1.0, max(0.0, v)) for k, v in out.items()}

    def _bleu_scores(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        bleu = self._bleu[chinese]
        key = (chinese, refs)
        ref_info = self._bleu_refs.get(key)
        if ref_info is None:
            ref_info = self._bleu_refs[key] = bleu._extract_reference_info(
                [bleu._preprocess_segment(r) for r in refs]
            )
        stats = bleu._compute_segment_statistics(bleu._preprocess_segment(candidate), ref_info)
        hyp_len, ref_len = int(stats[0]), int(stats[1])
        correct, total = stats[2:2 + _MAX_ORDER], stats[2 + _MAX_ORDER:]
        return {
            f"bleu{n}": self._compute_bleu(
                correct=correct[:n], total=total[:n], sys_len=hyp_len, ref_len=ref_len,
                smooth_method=BLEU_SMOOTH_METHOD, smooth_value=None, effective_order=BLEU_EFFECTIVE_ORDER,
                max_ngram_order=n,
            ).score / 100.0
            for n in self._bleu_orders
        }

    def _chrf_ngrams(self, text: str) -> list[tuple[Counter, int]]:
        """sacrebleu's chrF++ n-grams of one text (characters 1-6, then words 1-2), each with its
        total count, computed once per text."""
        found = self._chrf_texts.get(text)
        if found is None:
            from sacrebleu.metrics.helpers import extract_word_ngrams

            chrf = self._chrf
            line = chrf._preprocess_segment(text)
            counters = char_ngram_counts(line if chrf.whitespace else "".join(line.split()), chrf.char_order)
            if chrf.word_order > 0:
                words = chrf._remove_punctuation(line)
                counters.extend(extract_word_ngrams(words, n) for n in range(1, chrf.word_order + 1))
            found = self._chrf_texts[text] = [(c, sum(c.values())) for c in counters]
        return found

    def _chrf_score(self, candidate: str, refs: tuple[str, ...]) -> float:
        # sacrebleu's CHRF._compute_segment_statistics with the n-grams of every text
        # extracted once and the matches counted over the common n-grams only; the
        # statistics are the same integers, so the score is identical.
        chrf = self._chrf
        hyp = self._chrf_ngrams(candidate)
        best_stats: list[int] = []
        best_f = -1.0
        for ref in refs:
            stats: list[int] = []
            for (h, h_total), (r, r_total) in zip(hyp, self._chrf_ngrams(ref)):
                common = h.keys() & r.keys()
                matches = sum(map(min, map(h.__getitem__, common), map(r.__getitem__, common)))
                stats += (h_total if r else 0, r_total, matches)
            f = chrf._compute_f_score(stats)
            if f > best_f:
                best_f, best_stats = f, stats
        return chrf._compute_f_score(best_stats) / 100.0

    def _rouge_text(self, text: str, chinese: bool) -> tuple[list[str], Counter, Counter]:
        key = (chinese, text)
        found = self._rouge_texts.get(key)
        if found is None:
            tokens = self._rouge_tokenizers[chinese].tokenize(text)
            found = self._rouge_texts[key] = (
                tokens, self._create_ngrams(tokens, 1), self._create_ngrams(tokens, 2)
            )
        return found

    def _rouge_scores(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        hyp_tokens, hyp_unigrams, hyp_bigrams = self._rouge_text(candidate, chinese)
        best = dict.fromkeys(self._rouge_ids, 0.0)
        for ref in refs:
            ref_tokens, ref_unigrams, ref_bigrams = self._rouge_text(ref, chinese)
            for rouge_id in self._rouge_ids:
                if rouge_id == "rouge1":
                    f = self._score_ngrams(ref_unigrams, hyp_unigrams).fmeasure
                elif rouge_id == "rouge2":
                    f = self._score_ngrams(ref_bigrams, hyp_bigrams).fmeasure
                else:
                    f = self._lcs_fmeasure(ref_tokens, hyp_tokens)
                if f > best[rouge_id]:
                    best[rouge_id] = f
        return {k: float(v) for k, v in best.items()}

    def _lcs_fmeasure(self, ref_tokens: list[str], hyp_tokens: list[str]) -> float:
        # rouge-score's _score_lcs, with the LCS length from a bit-parallel
        # algorithm instead of its O(n*m) Python table.
        if not ref_tokens or not hyp_tokens:
            return 0.0
        lcs = lcs_length(ref_tokens, hyp_tokens)
        return self._fmeasure(lcs / len(hyp_tokens), lcs / len(ref_tokens))

    def _meteor_tokens(self, text: str, chinese: bool) -> list[str]:
        key = (chinese, text)
        found = self._meteor_texts.get(key)
        if found is None:
            from .tokenize import meteor_tokens

            found = self._meteor_texts[key] = meteor_tokens(text, chinese)
        return found

    def _meteor_score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> float:
        hyp = self._meteor_tokens(candidate, chinese)
        return float(max(
            self._single_meteor(
                self._meteor_tokens(ref, chinese), hyp,
                stemmer=self._meteor_stemmer, wordnet=self._meteor_wordnet,
                alpha=METEOR_ALPHA, beta=METEOR_BETA, gamma=METEOR_GAMMA,
            )
            for ref in refs
        ))
