"""A template's identity for the front ends: its content hash, save-as, overriding a shipped one, reverting."""

from __future__ import annotations

from ..judges.prompts.templates import (
    is_shipped_name,
    overridden_names,
    parse_template,
    renamed_template_text,
    revert_override,
)
from ..judges.run.config import template_text_hash

__all__ = ["is_shipped_name", "overridden_names", "parse_template", "renamed_template_text", "revert_override",
           "template_text_hash"]
