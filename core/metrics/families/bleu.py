"""BLEU-1..4 (sacrebleu), registered with the metric registry.

sacrebleu's sentence BLEU of a pair rests on integers: per order n, the hypothesis
n-grams and the clipped matches (each n-gram's count, at most its largest count in any
one reference), plus the hypothesis length and the closest reference length. Here each
text is tokenized once (by sacrebleu's tokenizer, shared with METEOR) and its n-grams
kept per order as a :class:`~.multiset.Bag`: several references pool into one bag of
each n-gram's largest count, and the clipped matches are mostly the size of a set
intersection, done in C. The 1..n-gram
statistics do not depend on the maximum order, so BLEU-1..4 come from one set of
statistics; :func:`bleu_scores` is sacrebleu's ``BLEU.compute_bleu`` for exp smoothing
with effective order, step for step, so every score is the same float.
"""

from __future__ import annotations

import math

from ..family import MetricFamily, MetricInfo, register_family
from ..multiset import Bag, largest, ngrams, overlap
from ..params import BLEU_EFFECTIVE_ORDER, BLEU_SMOOTH_METHOD, BLEU_TOKENIZER, BLEU_TOKENIZER_CHINESE
from ..scoring_context import ScoringContext
from ..signature_parts import NREFS, distribution_version, yes_no

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


#: sacrebleu's ``my_log`` of a zero precision.
_LOG_ZERO = -9999999999


def _log(value: float) -> float:
    return _LOG_ZERO if value == 0.0 else math.log(value)


def bleu_scores(correct: list[int], total: list[int], sys_len: int, ref_len: int,
                orders: list[int]) -> list[float]:
    """sacrebleu's ``BLEU.compute_bleu(smooth_method='exp', effective_order=True,
    max_ngram_order=n)`` for each n in ``orders``, on 0-100, from one set of statistics.

    The precision of order m depends only on orders 1..m (the exp smoothing halves
    once per order without a match, in order), so the precisions of order 4 serve
    every n; each score is then the same expression sacrebleu evaluates.
    """
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1 - ref_len / sys_len) if sys_len > 0 else 0.0
    max_order = max(orders)
    precisions = [0.0] * max_order
    smooth_mteval = 1.0
    effective = [0] * (max_order + 1)  # effective[n]: the effective order of BLEU-n
    eff_order = 0
    for n in range(1, max_order + 1):
        if total[n - 1] != 0 and eff_order == n - 1:
            eff_order = n
            if correct[n - 1] == 0:
                smooth_mteval *= 2
                precisions[n - 1] = 100. / (smooth_mteval * total[n - 1])
            else:
                precisions[n - 1] = 100. * correct[n - 1] / total[n - 1]
        effective[n] = eff_order
    logs = [_log(p) for p in precisions]
    out = []
    for n in orders:
        if not any(correct[:n]):  # sacrebleu's early stop: no match of order <= n
            out.append(0.0)
        else:
            eff = effective[n]
            out.append(bp * math.exp(sum(logs[:eff]) / eff))
    return out


class BleuText:
    """One tokenized text: its length and its n-gram bags of orders 1-4."""

    __slots__ = ("bags", "length")

    def __init__(self, tokens: list[str]) -> None:
        self.length = len(tokens)
        self.bags = [Bag.of(ngrams(tokens, n)) for n in range(1, _MAX_ORDER + 1)]


class BleuScorer:
    def __init__(self, ids: tuple[str, ...], context: ScoringContext) -> None:
        from sacrebleu.metrics import BLEU  # heavy: loaded when BLEU first scores

        self._orders = [_order(metric_id) for metric_id in ids]
        self._ids = ids
        self._context = context
        # sacrebleu's own object: its tokenizer settings and its closest-reference-length rule.
        self._bleu = BLEU(smooth_method=BLEU_SMOOTH_METHOD, effective_order=BLEU_EFFECTIVE_ORDER,
                          max_ngram_order=_MAX_ORDER)
        self._texts: dict[tuple[bool, str], BleuText] = {}
        self._ref_sets: dict[tuple[bool, tuple[str, ...]], tuple[list[Bag], list[int]]] = {}

    def cache_size(self) -> int:
        return len(self._texts) + len(self._ref_sets)

    def _text(self, text: str, chinese: bool) -> BleuText:
        key = (chinese, text)
        found = self._texts.get(key)
        if found is None:
            # BLEU._preprocess_segment: (no lowercasing) the tokenizer on the right-stripped text.
            found = self._texts[key] = BleuText(self._context.tokenized(text.rstrip(), chinese).split())
        return found

    def _references(self, refs: tuple[str, ...], chinese: bool) -> tuple[list[Bag], list[int]]:
        if len(refs) == 1:
            only = self._text(refs[0], chinese)
            return only.bags, [only.length]
        key = (chinese, refs)
        found = self._ref_sets.get(key)
        if found is None:
            texts = [self._text(ref, chinese) for ref in refs]
            # Each n-gram at its largest count in any one reference, as sacrebleu's
            # _extract_reference_info merges them.
            pooled = [largest(bags) for bags in zip(*(t.bags for t in texts))]
            found = self._ref_sets[key] = (pooled, [t.length for t in texts])
        return found

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        hyp = self._text(candidate, chinese)
        ref_bags, ref_lens = self._references(refs, chinese)
        # sacrebleu's _compute_segment_statistics: matches clipped by the reference counts,
        # totals max(0, length - n + 1), the closest reference length.
        correct = list(map(overlap, hyp.bags, ref_bags))
        total = [max(0, hyp.length - n) for n in range(_MAX_ORDER)]
        ref_len = self._bleu._get_closest_ref_len(hyp.length, ref_lens)
        scores = bleu_scores(correct, total, hyp.length, ref_len, self._orders)
        return {metric_id: score / 100.0 for metric_id, score in zip(self._ids, scores)}


register_family(MetricFamily(name="bleu", order=10, ids=BLEU_IDS, info=bleu_info, signature=bleu_signature,
                             scorer=BleuScorer))
