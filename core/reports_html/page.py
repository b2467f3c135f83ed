"""The page: its head (policy, viewport, styles), a table of contents, the sections, the data, the script.

The Content Security Policy is ``default-src 'none'`` with only what the page's own inline parts
need: its stylesheet and the charts' style attributes (``style-src 'unsafe-inline'``), its one script
by hash (``script-src 'sha256-…'``, the hash of exactly the text between its tags) and the charts'
embedded PNG cells (``img-src data:``). No address can be fetched, no form sent, no base changed.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from . import escape
from .script import SCRIPT
from .style import STYLE


@dataclass(frozen=True)
class Section:
    """One part of the report: an anchor id, a heading and its HTML (already escaped)."""

    id: str
    title: str
    html: str


def script_hash(script: str) -> str:
    """The CSP source of an inline script: ``'sha256-'`` and the base64 of its UTF-8 text's digest."""
    digest = hashlib.sha256(script.encode("utf-8")).digest()
    return f"'sha256-{base64.b64encode(digest).decode('ascii')}'"


def csp(script: str = SCRIPT) -> str:
    return ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
            f"script-src {script_hash(script)}; base-uri 'none'; form-action 'none'")


def page(title: str, subtitle: str, sections: Sequence[Section], items_json: str | None, *, footer: str) -> str:
    """The whole document. ``items_json`` (escaped for a script block) feeds the item table's script."""
    toc = "".join(f'<a href="#{escape.text(s.id)}">{escape.text(s.title)}</a>' for s in sections)
    body = "\n".join(f'<section class="card" id="{escape.text(s.id)}"><h2>{escape.text(s.title)}</h2>\n{s.html}\n'
                     "</section>" for s in sections)
    data = "" if items_json is None else f'<script type="application/json" id="items-data">{items_json}</script>\n'
    script = "" if items_json is None else f"<script>{SCRIPT}</script>\n"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f'<meta http-equiv="Content-Security-Policy" content="{escape.text(csp())}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        '<meta name="referrer" content="no-referrer">\n'
        f"<title>{escape.text(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n"
        f'<header class="top"><h1>{escape.text(title)}</h1><p>{escape.text(subtitle)}</p></header>\n'
        f'<nav class="toc" aria-label="Sections">{toc}</nav>\n<main>\n{body}\n</main>\n'
        f"<footer>{escape.text(footer)}</footer>\n{data}{script}</body>\n</html>\n"
    )
