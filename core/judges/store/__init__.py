"""Stage 3, the record: the SQLite run store, each run's status and its provenance."""
