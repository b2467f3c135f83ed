"""The metric families, one module each: every module here registers its ``MetricFamily``
(core.metrics.family) when it is imported. Nothing else lives here: the registry
(core.metrics.registry) imports every module of this package when first asked, and the
modules that ask it (the engine, batch scoring, signatures) sit outside, so no circle runs
through it.
"""

from __future__ import annotations

from pathlib import Path

from ...self_registry import SelfRegistry
from ..family import METRIC_FAMILIES, MetricFamily

#: Imports every module of this package the first time the registry asks.
FAMILY_MODULES: SelfRegistry[MetricFamily] = SelfRegistry(METRIC_FAMILIES, __name__, Path(__file__).parent)
