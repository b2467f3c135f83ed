"""Synthetic datasets with a known truth, to check every interval, p-value and verdict.

``synthetic``: k contexts x m candidates, annotators with set noise, two judges with a
set agreement with the humans and a set true difference (0 included), many datasets
at once as numpy arrays. ``calibration``: coverage and false-verdict rates with their
Monte-Carlo errors. Tests and ``bench/calibration.py`` use both.
"""

from .calibration import Rate, coverage_rate, false_verdict_rate
from .synthetic import SimulatedBatch, SimulationDesign, simulate

__all__ = ["Rate", "SimulatedBatch", "SimulationDesign", "coverage_rate", "false_verdict_rate", "simulate"]
