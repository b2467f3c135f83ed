"""A variant's template text (with its own aspect definition), and saving the winner as a template.

A run snapshots its template's TOML text, so a variant that redefines an aspect runs on a
copy of the template whose ``[aspects]`` entry is replaced. The saved winner is that text
under a new name, with a header comment recording the rest of the variant (persona, few-shot,
mode, judge), which a template cannot hold, and where it came from.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Mapping

from ..errors import ConfigError
from ..judges.prompts.templates import Template, get_template, parse_template, user_template_dir
from .space import Variant

_NAME_LINE = re.compile(r'^name\s*=\s*(".*"|\'.*\')\s*$', re.M)
_TABLE_HEADER = re.compile(r"^\s*\[")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def variant_template(variant: Variant, config: Any) -> tuple[str, str]:
    """The name and TOML text of the template ``variant`` runs on (``config``: a core Config):
    the named template, or a copy named ``<template>.<variant>`` with the variant's definition."""

    template = get_template(variant.template, config.template_dirs)
    if not variant.aspect_definition:
        return template.name, template.text
    name = f"{template.name}.{_slug(variant.name)}"
    return name, renamed(with_aspect_definition(template, variant.aspect or "", variant.aspect_definition), name)


def with_aspect_definition(template: Template, aspect: str, definition: str) -> str:
    """The template's TOML text with ``[aspects].<aspect>`` set to ``definition``."""
    key = template.resolve_aspect(aspect) or aspect
    lines = template.text.splitlines()
    entry = f"{_toml_key(key)} = {json.dumps(definition, ensure_ascii=False)}"
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "[aspects]")
    except StopIteration:
        raise ConfigError(f"template {template.name!r} has no [aspects] table, so aspect_definition cannot "
                          "replace a definition in it") from None
    end = next((i for i in range(start + 1, len(lines)) if _TABLE_HEADER.match(lines[i])), len(lines))
    pattern = re.compile(rf"^\s*(\"{re.escape(key)}\"|{re.escape(key)})\s*=")
    for i in range(start + 1, end):
        if pattern.match(lines[i]):
            if lines[i].rstrip().endswith(("'''", '"""')) and lines[i].count("'''") + lines[i].count('"""') == 1:
                raise ConfigError(f"template {template.name!r}: the definition of {key!r} spans several lines; "
                                  "aspect_definition replaces one-line definitions only")
            lines[i] = entry
            break
    else:
        lines.insert(start + 1, entry)
    return "\n".join(lines) + "\n"


def renamed(text: str, name: str) -> str:
    """Template text with its top-level ``name`` replaced."""
    if not _NAME_LINE.search(text):
        raise ConfigError("the template text has no top-level name = \"...\" line to rename")
    return _NAME_LINE.sub(lambda _m: f"name = {json.dumps(name)}", text, count=1)


def save_winner(template_text: str, variant: Variant, name: str, *, provenance: Mapping[str, Any],
                folder: Path | None = None, overwrite: bool = False) -> Path:
    """Write the winning variant's template as ``<folder>/<name>.toml`` (default: the user's
    templates folder) and return the path; the text is validated before it is written."""
    if not _SAFE_NAME.match(name):
        raise ConfigError(f"template name {name!r}: use letters, digits, '.', '_' and '-' only")
    folder = folder or user_template_dir()
    path = folder / f"{name}.toml"
    if path.exists() and not overwrite:
        raise ConfigError(f"{path} already exists; choose another name")
    header = [f"# Saved by `dialjudge tune`: the winning variant {variant.name!r} of a tuning search."]
    header += [f"# {key}: {value}" for key, value in provenance.items()]
    header += [
        "# A template holds the prompt only; run it with the rest of the variant:",
        f"#   persona = {variant.persona}, fewshot = {variant.fewshot}, mode = {variant.mode or 'default'}, "
        f"top_k = {variant.top_k}, judge = {variant.judge}, aspect = {variant.aspect or '–'}",
        "",
    ]
    text = "\n".join(header) + renamed(template_text, name)
    parse_template(text, str(path))  # never write a template that would not load
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "variant"


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)
