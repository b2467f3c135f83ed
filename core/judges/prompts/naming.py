"""Names of saved templates and personas (they become file names), and TOML strings written for them.

Shared by :mod:`.templates` (save as) and :mod:`.personas` (saving), without one importing the other.
"""

from __future__ import annotations

import re

from ...errors import TemplateError

__all__ = ["_check_name", "check_name", "toml_string"]

_NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*\Z")


def toml_string(value: str) -> str:
    """A TOML basic string holding ``value`` exactly."""
    out = ['"']
    for ch in value:
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append("\\t")
        elif ch == "\r":
            out.append("\\r")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _check_name(name: str, what: str, source: str | None = None) -> None:
    if not _NAME_RE.match(name):
        raise TemplateError(f"{what} name {name!r}: use lowercase letters, digits, '-' and '_' "
                            "(it becomes a file name)", source=source)


check_name = _check_name
