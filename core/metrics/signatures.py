"""Signatures of the metrics' parameters and the versions of the libraries behind them.

A number in a table can only be compared with another one computed the same way,
so every run and every exported table records how its metrics were computed, in
sacrebleu's signature style (``key:value`` fields joined by ``|``), e.g.
``BLEU-4|nrefs:var|case:mixed|eff:yes|tok:13a|tok-zh:zh|smooth:exp|version:2.6.0``.

Each metric family signs its own metrics (from :mod:`.params`, the constants the
engine passes to the libraries); this module holds what they share and asks the
registry for the rest. Library versions are read from the installed distributions
without importing them, so this module is cheap to import.
"""

from __future__ import annotations

from .registry import family_of, metric_families, metric_ids
from .signature_parts import NREFS, VERSIONED_DISTRIBUTIONS, distribution_version, library_versions, yes_no

__all__ = ["NREFS", "VERSIONED_DISTRIBUTIONS", "distribution_version", "library_versions", "metric_signature",
           "metric_signatures", "provenance", "signature_for_label", "yes_no"]

def metric_signature(metric_id: str, *, meteor_variant: str | None = None) -> str:
    """The signature of one metric; a family with variants (METEOR) looks its variant up when not given."""
    return family_of(metric_id).signature(metric_id, meteor_variant)


def metric_signatures(ids: tuple[str, ...] | None = None, *,
                      meteor_variant: str | None = None) -> dict[str, str]:
    """Metric id -> signature (every metric when ``ids`` is None), in display order."""
    return {m: metric_signature(m, meteor_variant=meteor_variant) for m in (ids or metric_ids())}


def signature_for_label(label: str) -> str | None:
    """The signature of the metric a table row names (its display label), else None.

    A label tells the variant: "METEOR" with WordNet, "METEOR (exact+stem)" without.
    """
    for family in metric_families():
        for metric_id in family.ids:
            for variant in family.variants:
                if label == family.info(metric_id, variant).label:
                    return family.signature(metric_id, variant)
    return None


def provenance(ids: tuple[str, ...] | None = None, *, meteor_variant: str | None = None) -> dict[str, object]:
    """What runs and exported tables record: library versions and metric signatures."""
    return {"versions": library_versions(),
            "metric_signatures": metric_signatures(ids, meteor_variant=meteor_variant)}
