"""The engine: data model, loaders, metrics, statistics, judges and the run store.

Usable without the app: it imports neither Textual, Rich, ``dialjudge.tui`` nor
``dialjudge.cli`` (an import-linter contract in pyproject.toml keeps it so).
"""

from .backend_rules import answer_backend_rules_with
from .judges.backends import backend_rules

# The config checks the backends a file names against the backend registry, which sits above it
# (core.backend_rules says why); every module of core is imported after this one, so it is connected
# before any config is read. Cheap: the registry imports the backend modules only when first asked.
answer_backend_rules_with(backend_rules)
