"""Text from datasets and models, made safe for the two places a report puts it.

* In HTML (element text and attribute values): ``&``, ``<``, ``>``, ``"`` and ``'`` as entities.
* Inside an inline ``<script type="application/json">`` block: the HTML parser ends a script block at
  ``</script`` and enters its escape states at ``<!--``, whatever JSON says, so every ``<``, ``>``
  and ``&`` is written as a JSON ``\\u`` escape; so are U+2028 and U+2029, which older JavaScript
  parsers take for line ends. ``JSON.parse`` reads all of them back to the same characters.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

_SCRIPT_ESCAPES = str.maketrans({"<": "\\u003c", ">": "\\u003e", "&": "\\u0026",
                                 "\u2028": "\\u2028", "\u2029": "\\u2029"})


def text(value: object) -> str:
    """``value`` as HTML text, safe in an element and in a quoted attribute."""
    return html.escape(str(value), quote=True)


def script_json(data: Any) -> str:
    """``data`` as JSON that can sit inside an inline script element (no ``</script>``, no ``<!--``).
    Non-finite floats must have been made None before (JSON has no NaN)."""
    raw = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return raw.translate(_SCRIPT_ESCAPES)


def finite(value: float | None, digits: int = 4) -> float | None:
    """A number for the item table's JSON: rounded (the table shows 3 decimals), None where undefined."""
    if value is None or not math.isfinite(value):
        return None
    return round(float(value), digits)
