"""What a run records beside its configuration: library versions, metric signatures,
and where each local model ran (threads, GPU layers). None of it enters the run's
fingerprint: it describes the machine, not what was asked."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...metrics.registry import all_metric_ids
from ...metrics.signatures import provenance


def run_environment(backends: Mapping[str, Any]) -> dict[str, Any]:
    """Versions and metric signatures, plus each loaded backend's ``runtime_info()``."""

    judges: dict[str, Any] = {}
    for name, backend in backends.items():
        runtime_info = getattr(backend, "runtime_info", None)
        info = runtime_info() if callable(runtime_info) else None
        if info:
            judges[name] = dict(info)
    # Every profile's signatures: a run's table may show either profile's metrics beside its judges.
    return {**provenance(all_metric_ids()), "judges": judges}
