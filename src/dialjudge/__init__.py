"""dialjudge: build and check judges of dialogue responses against human ratings.

The code lives in the checkout's top-level folders (``core/``, ``tui/``,
``cli/``, ``prompts/``, ``datasets/``); ``src/dialjudge/`` links them under
one import name so that installs, type checkers and editors all see
``dialjudge.*``. Importing this package loads nothing else.
"""

from __future__ import annotations

__version__ = "0.2.0"

__all__ = ["__version__"]
