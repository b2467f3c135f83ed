"""The engine: data model, loaders, metrics, statistics, judges and the run store.

Usable without the app: it imports neither Textual, Rich, ``dialjudge.tui`` nor
``dialjudge.cli`` (an import-linter contract in pyproject.toml keeps it so).
"""
