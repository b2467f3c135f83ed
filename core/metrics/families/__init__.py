"""The metric families, one module each: every module here registers its :class:`~..family.MetricFamily`
(core.metrics.family) when it is imported. Nothing else lives here, so the registry
(core.metrics.registry) can import every module of this package without importing itself.
"""

from __future__ import annotations

from pathlib import Path

from ...self_registry import SelfRegistry
from ..family import METRIC_FAMILIES, MetricFamily

#: Imports every module of this package the first time the registry asks.
FAMILY_MODULES: SelfRegistry[MetricFamily] = SelfRegistry(METRIC_FAMILIES, __name__, Path(__file__).parent)
