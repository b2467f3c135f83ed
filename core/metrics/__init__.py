"""Reference-based metrics (BLEU-1..4, ROUGE-1/2/L, METEOR, chrF++) on a 0-1 scale.

Importing this package is cheap; sacrebleu, rouge-score and NLTK load on first use.
"""

from .batch import MetricScores, SkipReason, score_examples, score_pair
from .registry import (
    MetricInfo,
    available_metrics,
    metric_ids,
    metric_info,
    resolve_metric_ids,
)
from .wordnet import meteor_variant

__all__ = [
    "MetricInfo",
    "MetricScores",
    "SkipReason",
    "available_metrics",
    "meteor_variant",
    "metric_ids",
    "metric_info",
    "resolve_metric_ids",
    "score_examples",
    "score_pair",
]
