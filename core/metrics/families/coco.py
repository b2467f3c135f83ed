"""BLEU-1..4 and ROUGE-L as the MS-COCO caption scorers define them (the ``nlg-eval`` profile).

Maluuba's nlg-eval, which most dialogue-metric papers since 2017 report (Yeh et al. 2021,
"A Comprehensive Assessment of Dialog Evaluation Metrics", among them), strips the
hypothesis and each reference and hands them to the COCO scorers unchanged: no
lowercasing, no tokenizer. Written here from the scorers' definitions:

BLEU (COCO ``bleu_scorer``): tokens are ``str.split()`` (any whitespace); the clipped
n-gram counts ``c`` take each n-gram's maximum count over the references; ``g`` is the
hypothesis' n-gram count ``max(0, len - n + 1)``; BLEU-N is the geometric mean of the
precisions ``(c + 1e-15) / (g + 1e-9)`` for n = 1..N (no other smoothing), times
``exp(1 - 1/ratio)`` when ``ratio = (len + 1e-15) / (ref_len + 1e-9)`` is below 1, where
``ref_len`` is the "closest" reference length (smallest length difference, the shorter
length on a tie).

ROUGE-L (COCO ``rouge``): tokens are ``str.split(" ")`` (single spaces, so two spaces in a
row make an empty token, as in COCO); for each reference the LCS length over the
hypothesis' and the reference's length gives a precision and a recall; the best
precision and the best recall over the references (taken separately) combine into the
F-measure with beta = 1.2; 0 when either is 0.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from ..family import MetricFamily, MetricInfo, register_family
from .rouge import lcs_length

NLG_EVAL = "nlg-eval"
COCO_BLEU_IDS = tuple(f"{NLG_EVAL}-bleu{n}" for n in (1, 2, 3, 4))
COCO_ROUGE_L_ID = f"{NLG_EVAL}-rougeL"
#: COCO's terms that keep a zero count from zeroing the product (and a zero length from dividing by zero).
TINY = 1e-15
SMALL = 1e-9
ROUGE_L_BETA = 1.2
_MAX_ORDER = 4
PROFILE_TAG = "(nlg-eval)"


def nlg_eval_text(text: str) -> str:
    """What nlg-eval feeds the COCO scorers: the text stripped, nothing else."""
    return text.strip()


def _ngrams(tokens: Sequence[str], n: int) -> Counter[tuple[str, ...]]:
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def coco_bleu(candidate: str, references: Sequence[str], max_order: int = _MAX_ORDER) -> list[float]:
    """BLEU-1..``max_order`` of one candidate, as COCO's scorer computes a sentence's score."""
    if not references:
        raise ValueError("BLEU needs at least one reference")
    hyp = candidate.split()
    refs = [reference.split() for reference in references]
    scores = []
    product = 1.0
    for n in range(1, max_order + 1):
        best: Counter[tuple[str, ...]] = Counter()
        for ref in refs:
            best |= _ngrams(ref, n)  # the maximum count of each n-gram over the references
        correct = sum(min(count, best[gram]) for gram, count in _ngrams(hyp, n).items())
        guessed = max(0, len(hyp) - n + 1)
        product *= (correct + TINY) / (guessed + SMALL)
        scores.append(product ** (1.0 / n))
    ref_len = min((abs(len(ref) - len(hyp)), len(ref)) for ref in refs)[1]
    ratio = (len(hyp) + TINY) / (ref_len + SMALL)
    if ratio < 1:
        penalty = math.exp(1 - 1 / ratio)
        scores = [score * penalty for score in scores]
    return scores


def coco_rouge_l(candidate: str, references: Sequence[str], beta: float = ROUGE_L_BETA) -> float:
    """COCO's ROUGE-L F-measure of one candidate against its references."""
    if not references:
        raise ValueError("ROUGE-L needs at least one reference")
    hyp = candidate.split(" ")
    precisions, recalls = [], []
    for reference in references:
        ref = reference.split(" ")
        lcs = lcs_length(ref, hyp)
        precisions.append(lcs / len(hyp))
        recalls.append(lcs / len(ref))
    precision, recall = max(precisions), max(recalls)
    if precision == 0 or recall == 0:
        return 0.0
    return (1 + beta ** 2) * precision * recall / (recall + beta ** 2 * precision)


_COMMON = ("nlg-eval's preprocessing: hypothesis and references stripped, case kept. "
           "Several references: as COCO does.")


def coco_bleu_info(metric_id: str, variant: str | None = None) -> MetricInfo:
    n = int(metric_id[-1])
    return MetricInfo(
        id=metric_id, label=f"BLEU-{n} {PROFILE_TAG}", family="nlg-eval-bleu",
        description=(f"BLEU-{n} as the MS-COCO caption scorer in nlg-eval: whitespace tokens, case-sensitive, "
                     "n-gram precisions (c + 1e-15) / (g + 1e-9) with no other smoothing, brevity penalty "
                     f"against the closest reference length. {_COMMON}"),
    )


def coco_bleu_signature(metric_id: str, variant: str | None = None) -> str:
    n = int(metric_id[-1])
    return "|".join((f"BLEU-{n}", "profile:nlg-eval", "impl:coco-bleu_scorer", "nrefs:var", "case:mixed",
                     "tok:split", "prep:strip", f"smooth:coco({TINY:g},{SMALL:g})", "reflen:closest",
                     f"order:{n}"))


def coco_rouge_info(metric_id: str, variant: str | None = None) -> MetricInfo:
    return MetricInfo(
        id=metric_id, label=f"ROUGE-L {PROFILE_TAG}", family="nlg-eval-rouge",
        description=("ROUGE-L as the MS-COCO caption scorer in nlg-eval: tokens split on single spaces, "
                     "case-sensitive, no stemming, F-measure with beta 1.2 of the best precision and the best "
                     f"recall over the references. {_COMMON}"),
    )


def coco_rouge_signature(metric_id: str, variant: str | None = None) -> str:
    return "|".join(("ROUGE-L", "profile:nlg-eval", "impl:coco-rouge", "nrefs:var", "refs:max-p-max-r",
                     "score:f", f"beta:{ROUGE_L_BETA:g}", "case:mixed", "stem:no", "tok:split-space",
                     "prep:strip"))


class CocoBleuScorer:
    def __init__(self, ids: tuple[str, ...], context: object) -> None:
        self._ids = ids

    def cache_size(self) -> int:
        return 0

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        # nlg-eval has no Chinese mode: COCO splits on whitespace whatever the language.
        scores = coco_bleu(nlg_eval_text(candidate), [nlg_eval_text(r) for r in refs])
        return {metric_id: scores[int(metric_id[-1]) - 1] for metric_id in self._ids}


class CocoRougeScorer:
    def __init__(self, ids: tuple[str, ...], context: object) -> None:
        self._ids = ids

    def cache_size(self) -> int:
        return 0

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        return {COCO_ROUGE_L_ID: coco_rouge_l(nlg_eval_text(candidate), [nlg_eval_text(r) for r in refs])}


register_family(MetricFamily(name="nlg-eval-bleu", order=110, ids=COCO_BLEU_IDS, info=coco_bleu_info,
                             signature=coco_bleu_signature, scorer=CocoBleuScorer, profile=NLG_EVAL))
register_family(MetricFamily(name="nlg-eval-rouge", order=130, ids=(COCO_ROUGE_L_ID,), info=coco_rouge_info,
                             signature=coco_rouge_signature, scorer=CocoRougeScorer, profile=NLG_EVAL))
