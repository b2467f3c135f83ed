"""BLEU-1..4 (sacrebleu), registered with the metric registry.

One sacrebleu BLEU object of order 4 per tokenizer: the n-gram statistics of a pair
are computed once and BLEU-1..4 derived from them with sacrebleu's own
``compute_bleu`` (the 1..n-gram counts and the closest reference length do not
depend on the maximum order, so this is exact); each reference set's n-grams are
extracted once.
"""

from __future__ import annotations

from typing import Any

from .engine import ScoringContext
from .params import BLEU_EFFECTIVE_ORDER, BLEU_SMOOTH_METHOD, BLEU_TOKENIZER, BLEU_TOKENIZER_CHINESE
from .registry import MetricFamily, MetricInfo, register_family
from .signatures import NREFS, distribution_version, yes_no

BLEU_ORDERS = (1, 2, 3, 4)
BLEU_IDS = tuple(f"bleu{n}" for n in BLEU_ORDERS)
_MAX_ORDER = max(BLEU_ORDERS)


def _order(metric_id: str) -> int:
    return int(metric_id[len("bleu"):])


def bleu_info(metric_id: str, variant: str | None = None) -> MetricInfo:
    n = _order(metric_id)
    return MetricInfo(
        id=metric_id,
        label=f"BLEU-{n}",
        description=(
            f"Sentence BLEU over 1- to {n}-grams (sacrebleu BLEU, max_ngram_order={n}, "
            "smooth_method='exp' with effective order, 13a tokenizer; 'zh' tokenizer for "
            "Chinese), scaled to 0-1. Several references are pooled as sacrebleu does "
            "(clipped counts over all of them, closest reference length)."
        ),
        family="bleu",
    )


def bleu_signature(metric_id: str, variant: str | None = None) -> str:
    order = _order(metric_id)
    return "|".join((
        f"BLEU-{order}", f"nrefs:{NREFS}", "case:mixed", f"eff:{yes_no(BLEU_EFFECTIVE_ORDER)}",
        f"tok:{BLEU_TOKENIZER}", f"tok-zh:{BLEU_TOKENIZER_CHINESE}", f"smooth:{BLEU_SMOOTH_METHOD}",
        f"order:{order}", f"version:{distribution_version('sacrebleu')}",
    ))


class BleuScorer:
    def __init__(self, ids: tuple[str, ...], context: ScoringContext) -> None:
        from sacrebleu.metrics import BLEU  # heavy: loaded when BLEU first scores

        self._orders = [_order(metric_id) for metric_id in ids]
        self._compute_bleu = BLEU.compute_bleu
        self._bleu: dict[bool, Any] = {
            chinese: BLEU(tokenize=tokenizer, smooth_method=BLEU_SMOOTH_METHOD,
                          effective_order=BLEU_EFFECTIVE_ORDER, max_ngram_order=_MAX_ORDER)
            for chinese, tokenizer in ((False, BLEU_TOKENIZER), (True, BLEU_TOKENIZER_CHINESE))
        }
        self._refs: dict[tuple[bool, tuple[str, ...]], Any] = {}

    def cache_size(self) -> int:
        return len(self._refs)

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        bleu = self._bleu[chinese]
        key = (chinese, refs)
        ref_info = self._refs.get(key)
        if ref_info is None:
            ref_info = self._refs[key] = bleu._extract_reference_info(
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
            for n in self._orders
        }


register_family(MetricFamily(name="bleu", order=10, ids=BLEU_IDS, info=bleu_info, signature=bleu_signature,
                             scorer=BleuScorer))
