"""The options every command that opens a dataset shares: ``--map COLUMN=FIELD`` (repeatable) reads a
CSV/TSV or JSON Lines table whose columns have other names than the standard ones."""

from __future__ import annotations

import argparse

from dialjudge.core.api import (
    ColumnMap,
    Config,
    open_dataset,
    parse_column_map,
)
from dialjudge.core.model import Dataset

MAP_HELP = ("a CSV/TSV or JSON Lines dataset's column COLUMN holds FIELD: id, group_id, context, candidate, "
            "reference, fact, system, tags, QUALITY:ANNOTATOR (a rating, e.g. Overall:a1) or - (not a field); "
            "repeatable; other columns are read by their standard names. The file remembers it.")


def add_column_map_option(parser: argparse.ArgumentParser) -> None:
    """``--map COLUMN=FIELD``, repeatable, on a command that opens a dataset."""
    parser.add_argument("--map", action="append", dest="column_map", metavar="COLUMN=FIELD", help=MAP_HELP)


def column_map_of(args: argparse.Namespace) -> ColumnMap | None:
    """The ``--map`` items as a checked ColumnMap; None when none was given."""
    items = getattr(args, "column_map", None)
    return parse_column_map(items) if items else None


def open_dataset_of(args: argparse.Namespace, name_or_path: str, config: Config | None = None, *,
                    remember: bool = True) -> Dataset:
    """Open the dataset a command names, with its ``--map`` items (on the command's session's configuration)."""
    config = config if config is not None else args.session.config
    return open_dataset(name_or_path, config, remember=remember, column_map=column_map_of(args))
