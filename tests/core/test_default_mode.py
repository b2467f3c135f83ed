"""Runs default to probability scoring where the template supports it, else the template's first mode."""

from __future__ import annotations

from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.planning import preferred_mode


def test_preferred_mode_is_logprob_when_offered() -> None:
    assert preferred_mode((ScoringMode.GENERATE, ScoringMode.LOGPROB)) is ScoringMode.LOGPROB
    assert preferred_mode((ScoringMode.YESNO, ScoringMode.GENERATE)) is ScoringMode.YESNO
    assert preferred_mode(()) is ScoringMode.GENERATE


def test_the_bundled_template_defaults_to_logprob() -> None:
    template = get_template("adv-0to1", [])
    assert ScoringMode.LOGPROB in template.output.modes
    assert preferred_mode(template.output.modes) is ScoringMode.LOGPROB
