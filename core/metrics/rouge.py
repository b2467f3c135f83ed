"""ROUGE-1, ROUGE-2 and ROUGE-L F-measures (rouge-score), registered with the metric registry.

ROUGE-1/2 come from rouge-score's public ``RougeScorer`` with a tokenizer that
tokenizes each distinct text once. ROUGE-L takes the same tokens and rouge-score's
public ``scoring.fmeasure``; only the length of the longest common subsequence is
computed here, by a bit-parallel algorithm instead of rouge-score's O(n*m) Python
table (the length is the same integer, so the score is identical).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .engine import ScoringContext
from .registry import CHINESE_CHARACTERS, MULTI_REF_MAX, MetricFamily, MetricInfo, register_family
from .signatures import NREFS, distribution_version
from .tokenize import ChineseCharTokenizer, RememberingTokenizer, StemmingTokenizer

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


class RougeScorer:
    def __init__(self, ids: tuple[str, ...], context: ScoringContext) -> None:
        from rouge_score import rouge_scorer, scoring  # loads NLTK: only when ROUGE first scores

        self._ids = ids
        self._fmeasure = scoring.fmeasure
        self._tokenizers = {
            False: RememberingTokenizer(StemmingTokenizer(context.stemmer())),
            True: RememberingTokenizer(ChineseCharTokenizer()),
        }
        ngram_ids = [metric_id for metric_id in ids if metric_id in _NGRAM_IDS]
        self._ngram_scorers: dict[bool, Any] = {
            chinese: rouge_scorer.RougeScorer(ngram_ids, tokenizer=tokenizer)
            for chinese, tokenizer in self._tokenizers.items()
        } if ngram_ids else {}
        self._want_lcs = "rougeL" in ids

    def cache_size(self) -> int:
        return sum(tokenizer.remembered() for tokenizer in self._tokenizers.values())

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        best = dict.fromkeys(self._ids, 0.0)
        ngram_scorer = self._ngram_scorers.get(chinese)
        tokenizer = self._tokenizers[chinese]
        for ref in refs:
            found: dict[str, float] = {}
            if ngram_scorer is not None:
                found.update((rouge_id, s.fmeasure) for rouge_id, s in ngram_scorer.score(ref, candidate).items())
            if self._want_lcs:
                found["rougeL"] = self._lcs_fmeasure(tokenizer.tokenize(ref), tokenizer.tokenize(candidate))
            for rouge_id, f in found.items():
                if f > best[rouge_id]:
                    best[rouge_id] = f
        return {k: float(v) for k, v in best.items()}

    def _lcs_fmeasure(self, ref_tokens: list[str], hyp_tokens: list[str]) -> float:
        # rouge-score's LCS score: precision lcs/len(hyp), recall lcs/len(ref), their F-measure.
        if not ref_tokens or not hyp_tokens:
            return 0.0
        lcs = lcs_length(ref_tokens, hyp_tokens)
        return float(self._fmeasure(lcs / len(hyp_tokens), lcs / len(ref_tokens)))


register_family(MetricFamily(name="rouge", order=20, ids=ROUGE_IDS, info=rouge_info, signature=rouge_signature,
                             scorer=RougeScorer))
