"""Signatures of the metrics' parameters and the versions of the libraries behind them.

A number in a table can only be compared with another one computed the same way,
so every run and every exported table records how its metrics were computed, in
sacrebleu's signature style (``key:value`` fields joined by ``|``), e.g.
``BLEU-4|nrefs:var|case:mixed|eff:yes|tok:13a|tok-zh:zh|smooth:exp|version:2.6.0``.

The fields come from :mod:`.params`, the constants the engine passes to the
libraries; library versions are read from the installed distributions without
importing them, so this module is cheap to import.
"""

from __future__ import annotations

from importlib import metadata

from .params import (
    BLEU_EFFECTIVE_ORDER,
    BLEU_SMOOTH_METHOD,
    BLEU_TOKENIZER,
    BLEU_TOKENIZER_CHINESE,
    CHRF_BETA,
    CHRF_CHAR_ORDER,
    CHRF_WORD_ORDER,
    METEOR_ALPHA,
    METEOR_BETA,
    METEOR_GAMMA,
)
from .registry import BLEU_IDS, CHRF_ID, METEOR_EXACT_STEM, METEOR_ID, METEOR_WORDNET, METRIC_IDS, ROUGE_IDS

#: The distributions whose versions decide the numbers.
VERSIONED_DISTRIBUTIONS = ("sacrebleu", "rouge-score", "nltk", "llama-cpp-python")

#: Several references: BLEU pools them as sacrebleu does, the other metrics take the best one.
NREFS = "var"


def distribution_version(name: str) -> str:
    """The installed version of a distribution, or 'not installed'."""
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def library_versions() -> dict[str, str]:
    """dialjudge's version and those of the metric and model libraries."""
    from ... import __version__

    return {"dialjudge": __version__, **{name: distribution_version(name) for name in VERSIONED_DISTRIBUTIONS}}


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def bleu_signature(order: int) -> str:
    return "|".join((
        f"BLEU-{order}", f"nrefs:{NREFS}", "case:mixed", f"eff:{_yes_no(BLEU_EFFECTIVE_ORDER)}",
        f"tok:{BLEU_TOKENIZER}", f"tok-zh:{BLEU_TOKENIZER_CHINESE}", f"smooth:{BLEU_SMOOTH_METHOD}",
        f"order:{order}", f"version:{distribution_version('sacrebleu')}",
    ))


_ROUGE_LABELS = {"rouge1": "ROUGE-1", "rouge2": "ROUGE-2", "rougeL": "ROUGE-L"}


def rouge_signature(metric_id: str) -> str:
    return "|".join((
        _ROUGE_LABELS[metric_id], f"nrefs:{NREFS}", "refs:max", "score:f", "case:lc", "stem:porter",
        "tok:rouge-score", "tok-zh:char", f"version:{distribution_version('rouge-score')}",
    ))


def meteor_signature(variant: str) -> str:
    matchers = {METEOR_WORDNET: "exact+stem+wordnet", METEOR_EXACT_STEM: "exact+stem"}
    if variant not in matchers:
        raise ValueError(f"unknown METEOR variant {variant!r}")
    return "|".join((
        "METEOR", f"nrefs:{NREFS}", "refs:max", "case:lc", f"match:{matchers[variant]}",
        f"alpha:{METEOR_ALPHA:g}", f"beta:{METEOR_BETA:g}", f"gamma:{METEOR_GAMMA:g}",
        f"tok:{BLEU_TOKENIZER}", f"tok-zh:{BLEU_TOKENIZER_CHINESE}",
        f"version:{distribution_version('nltk')}",
    ))


def chrf_signature() -> str:
    return "|".join((
        "chrF++", f"nrefs:{NREFS}", "refs:best", "case:mixed", "eff:yes", f"nc:{CHRF_CHAR_ORDER}",
        f"nw:{CHRF_WORD_ORDER}", f"beta:{CHRF_BETA}", "space:no",
        f"version:{distribution_version('sacrebleu')}",
    ))


def metric_signature(metric_id: str, *, meteor_variant: str | None = None) -> str:
    """The signature of one metric; METEOR's variant is looked up when not given."""
    if metric_id in BLEU_IDS:
        return bleu_signature(int(metric_id[4:]))
    if metric_id in ROUGE_IDS:
        return rouge_signature(metric_id)
    if metric_id == CHRF_ID:
        return chrf_signature()
    if metric_id == METEOR_ID:
        if meteor_variant is None:
            from .wordnet import meteor_variant as current_variant

            meteor_variant = current_variant()
        return meteor_signature(meteor_variant)
    raise ValueError(f"unknown metric {metric_id!r}; known metrics: {', '.join(METRIC_IDS)}")


def metric_signatures(metric_ids: tuple[str, ...] = METRIC_IDS, *,
                      meteor_variant: str | None = None) -> dict[str, str]:
    """Metric id -> signature, in display order."""
    return {m: metric_signature(m, meteor_variant=meteor_variant) for m in metric_ids}


def signature_for_label(label: str) -> str | None:
    """The signature of the metric a table row names (its display label), else None.

    METEOR's label tells its variant: "METEOR" with WordNet, "METEOR (exact+stem)" without.
    """
    from .registry import meteor_info

    for variant in (METEOR_WORDNET, METEOR_EXACT_STEM):
        if label == meteor_info(variant).label:
            return meteor_signature(variant)
    for metric_id in METRIC_IDS:
        if metric_id != METEOR_ID and label == metric_info_label(metric_id):
            return metric_signature(metric_id)
    return None


def metric_info_label(metric_id: str) -> str:
    from .registry import metric_info

    return metric_info(metric_id, meteor_variant=METEOR_EXACT_STEM).label


def provenance(metric_ids: tuple[str, ...] = METRIC_IDS, *, meteor_variant: str | None = None) -> dict[str, object]:
    """What runs and exported tables record: library versions and metric signatures."""
    return {"versions": library_versions(),
            "metric_signatures": metric_signatures(metric_ids, meteor_variant=meteor_variant)}
