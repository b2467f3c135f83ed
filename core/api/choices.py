"""The templates and personas a run (or the Prompt lab) may use, read from disk in one go."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import TemplateError
from ..judges.prompts.personas import Persona, load_personas
from ..judges.prompts.templates import Template, load_templates, overridden_names, shipped_template_dir


@dataclass(frozen=True)
class JudgeChoices:
    """Every template and persona a run or the Prompt lab may use."""

    templates: dict[str, Template]
    personas: dict[str, Persona]
    #: Broken user template files, skipped (each names its file, line and column).
    errors: tuple[TemplateError, ...] = ()
    #: Names of the templates read from dialjudge's own folder (not overridden by a user file).
    shipped: frozenset[str] = frozenset()
    #: Names of shipped templates a user's file takes the place of (marked in every picker).
    overridden: frozenset[str] = frozenset()

    def label(self, name: str) -> str:
        """How a picker lists template ``name``: a user's override of a shipped one says so."""
        return f"{name} (your override)" if name in self.overridden else name


def judge_choices(template_dirs: Sequence[Path]) -> JudgeChoices:
    """Templates (shipped, the user's, the config's folders) and personas; a broken template file is
    skipped and reported in ``errors``."""
    errors: list[TemplateError] = []
    templates = load_templates(template_dirs, errors=errors)
    personas = load_personas(template_dirs)
    shipped_dir = str(shipped_template_dir())
    shipped = frozenset(name for name, t in templates.items() if t.source.startswith(shipped_dir))
    return JudgeChoices(templates, personas, tuple(errors), shipped, overridden_names(templates))
