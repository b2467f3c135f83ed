"""ROUGE-1, ROUGE-2 and ROUGE-L F-measures (rouge-score), registered with the metric registry.

Each distinct text is tokenized once, by rouge-score's tokenizer (with the engine's
remembering Porter stemmer), or per character for Chinese. ROUGE-N: rouge-score's
``_score_ngrams`` counts the overlap as the sum over shared n-grams of the smaller
count, which here comes from n-gram bags (:mod:`.multiset`) made once per text; precision, recall and rouge-score's own
``scoring.fmeasure`` follow as rouge-score writes them. ROUGE-L: only the length of
the longest common subsequence is computed here, by a bit-parallel algorithm
instead of rouge-score's O(n*m) Python table (the same integer). The scores are
therefore identical.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..family import CHINESE_CHARACTERS, MULTI_REF_MAX, MetricFamily, MetricInfo, register_family
from ..multiset import Bag, ngrams, overlap
from ..scoring_context import ScoringContext
from ..signature_parts import NREFS, distribution_version
from ..tokenize import ChineseCharTokenizer, StemmingTokenizer

ROUGE_IDS = ("rouge1", "rouge2", "rougeL")
_NAMES = {"rouge1": ("ROUGE-1", "unigram"), "rouge2": ("ROUGE-2", "bigram"),
          "rougeL": ("ROUGE-L", "longest-common-subsequence")}
_NGRAM_IDS = ("rouge1", "rouge2")


def rouge_info(metric_id: str, variant: str | None = None) -> MetricInfo:
    label, unit = _NAMES[metric_id]
    return MetricInfo(
        id=metric_id,
        label=label,
        description=(
            f"{label} F-measure ({unit} overlap; rouge-score with Porter stemming). "
            f"{CHINESE_CHARACTERS} {MULTI_REF_MAX}"
        ),
        family="rouge",
    )


def rouge_signature(metric_id: str, variant: str | None = None) -> str:
    return "|".join((
        _NAMES[metric_id][0], f"nrefs:{NREFS}", "refs:max", "score:f", "case:lc", "stem:porter",
        "tok:rouge-score", "tok-zh:char", f"version:{distribution_version('rouge-score')}",
    ))


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


class RougeText:
    """One text as ROUGE sees it: its tokens and, per wanted order n, its n-gram bag."""

    __slots__ = ("bags", "tokens")

    def __init__(self, tokens: list[str], orders: tuple[int, ...]) -> None:
        self.tokens = tokens
        self.bags = {n: Bag.of(ngrams(tokens, n)) for n in orders}


class RougeScorer:
    def __init__(self, ids: tuple[str, ...], context: ScoringContext) -> None:
        from rouge_score import scoring  # loads NLTK: only when ROUGE first scores

        self._ids = ids
        self._fmeasure = scoring.fmeasure
        self._tokenizers: dict[bool, StemmingTokenizer | ChineseCharTokenizer] = {
            False: StemmingTokenizer(context.stemmer()), True: ChineseCharTokenizer()}
        self._orders = {metric_id: int(metric_id[len("rouge"):]) for metric_id in ids if metric_id in _NGRAM_IDS}
        self._want_lcs = "rougeL" in ids
        self._texts: dict[tuple[bool, str], RougeText] = {}

    def cache_size(self) -> int:
        return len(self._texts)

    def _text(self, text: str, chinese: bool) -> RougeText:
        key = (chinese, text)
        found = self._texts.get(key)
        if found is None:
            found = self._texts[key] = RougeText(self._tokenizers[chinese].tokenize(text),
                                                 tuple(self._orders.values()))
        return found

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        # rouge-score's score_multi: each metric's best F-measure over the references.
        best = dict.fromkeys(self._ids, 0.0)
        hyp = self._text(candidate, chinese)
        for ref in refs:
            target = self._text(ref, chinese)
            for rouge_id, n in self._orders.items():
                f = self._ngram_fmeasure(target, hyp, n)
                if f > best[rouge_id]:
                    best[rouge_id] = f
            if self._want_lcs:
                f = self._lcs_fmeasure(target.tokens, hyp.tokens)
                if f > best["rougeL"]:
                    best["rougeL"] = f
        return {k: float(v) for k, v in best.items()}

    def _ngram_fmeasure(self, target: RougeText, prediction: RougeText, n: int) -> float:
        # rouge-score's _score_ngrams: the overlap over max(count, 1) of each side, then its F-measure.
        shared = overlap(target.bags[n], prediction.bags[n])
        precision = shared / max(len(prediction.tokens) - n + 1, 1)
        recall = shared / max(len(target.tokens) - n + 1, 1)
        return float(self._fmeasure(precision, recall))

    def _lcs_fmeasure(self, ref_tokens: list[str], hyp_tokens: list[str]) -> float:
        # rouge-score's LCS score: precision lcs/len(hyp), recall lcs/len(ref), their F-measure.
        if not ref_tokens or not hyp_tokens:
            return 0.0
        lcs = lcs_length(ref_tokens, hyp_tokens)
        return float(self._fmeasure(lcs / len(hyp_tokens), lcs / len(ref_tokens)))


register_family(MetricFamily(name="rouge", order=20, ids=ROUGE_IDS, info=rouge_info, signature=rouge_signature,
                             scorer=RougeScorer))
