"""What every figure shares: a result row, the table, data paths, timing."""

from __future__ import annotations

import math
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

REPO_ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Context:
    """Options every figure sees."""

    quick: bool
    data_dir: Path

    def log(self, text: str) -> None:
        print(text, file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Row:
    """One line of the table. ``ratio`` is value / baseline (or baseline / value for times, so
    that bigger is always better); ``passed`` is None for a figure without a target."""

    figure: str
    baseline: float | None
    value: float | None
    ratio: float | None
    target: str
    passed: bool | None

    def to_dict(self) -> dict[str, Any]:
        def clean(v: float | None) -> float | None:
            return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else v

        return {"figure": self.figure, "baseline": clean(self.baseline), "value": clean(self.value),
                "ratio": clean(self.ratio), "target": self.target, "passed": self.passed}


def speedup(figure: str, baseline: float, value: float, at_least: float | None) -> Row:
    """A rate (bigger is better) against a baseline rate; target: ratio >= at_least."""
    ratio = value / baseline if baseline > 0 else math.inf
    return Row(figure, baseline, value, ratio, f">= {at_least:g}x" if at_least else "",
               None if at_least is None else ratio >= at_least)


def at_most(figure: str, value: float, limit: float | None, unit: str, baseline: float | None = None,
            *, with_ratio: bool = True) -> Row:
    """A cost (smaller is better), optionally against a baseline cost; target: value <= limit."""
    ratio = baseline / value if with_ratio and baseline is not None and value > 0 else None
    return Row(figure, baseline, value, ratio, f"<= {format_number(limit)} {unit}".strip() if limit is not None else "",
               None if limit is None else value <= limit)


def at_least(figure: str, value: float, limit: float | None, unit: str, baseline: float | None = None) -> Row:
    ratio = value / baseline if baseline else None
    return Row(figure, baseline, value, ratio, f">= {format_number(limit)} {unit}".strip() if limit is not None else "",
               None if limit is None else value >= limit)


def equals(figure: str, value: float, expected: float, baseline: float | None = None) -> Row:
    return Row(figure, baseline, value, None, f"= {format_number(expected)}", value == expected)


def failed(figure: str, why: str) -> Row:
    return Row(f"{figure}: {why}", None, None, None, "runs", False)


def default_data_dir() -> Path:
    env = os.environ.get("DIALJUDGE_SHARED_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


def best_time(run: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The fastest of ``repeat`` runs (seconds) and the last result."""
    best, result = math.inf, None
    for _ in range(max(1, repeat)):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


def format_number(value: float | None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "–"
    if value == 0:
        return "0"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


def render_table(rows: list[Row]) -> str:
    headers = ("figure", "baseline", "value", "ratio", "target", "pass/fail")
    cells = [(r.figure, format_number(r.baseline), format_number(r.value),
              "–" if r.ratio is None else f"{format_number(r.ratio)}x", r.target or "–",
              "–" if r.passed is None else ("pass" if r.passed else "FAIL")) for r in rows]
    widths = [max(len(h), *(len(c[i]) for c in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(headers, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for c in cells:
        lines.append("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(c, widths))))
    return "\n".join(lines)
