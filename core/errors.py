"""Errors that reach the user. Each says where the problem is, never a traceback."""

from __future__ import annotations


class DialjudgeError(Exception):
    """Base for every error that the CLI and the TUI show as a plain message."""


class DataError(DialjudgeError):
    """Bad input data: names the file, the line or record, and the field.

    ``record`` is a 1-based record number (or a name); ``record_id`` the record's own id, shown
    beside its number ("record 8 (id 'c7')", or "line 9 (id 'c7')" without a record number) so
    either finds it."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None,
                 record: str | int | None = None, field: str | None = None,
                 record_id: object = None) -> None:
        self.path = path
        self.line = line
        self.record = record
        self.record_id = record_id
        self.field = field
        self.reason = message
        where = []
        if path:
            where.append(str(path))
        named = f" (id {record_id!r})" if record_id is not None else ""
        if line is not None:
            where.append(f"line {line}" + (named if record is None else ""))
        if record is not None:
            where.append(f"record {record}{named}")
        if field:
            where.append(f"field {field!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class ConfigError(DialjudgeError):
    """A configuration file that is missing a value or has a wrong one."""


class TemplateError(DialjudgeError):
    """A judge template that cannot be parsed or rendered; carries the position."""

    def __init__(self, message: str, *, source: str | None = None, line: int | None = None,
                 column: int | None = None) -> None:
        self.source = source
        self.line = line
        self.column = column
        self.reason = message
        where = []
        if source:
            where.append(source)
        if line is not None:
            where.append(f"line {line}" + (f", column {column}" if column is not None else ""))
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


class BackendError(DialjudgeError):
    """A judge backend that cannot do what was asked (no log-probs, no model file, ...)."""


class RequestInterrupted(BackendError):
    """A request stopped midway because its run was cancelled (a local model's evaluation aborted).

    Not the judge failing: the run engine drops the request (it stays pending for a resume) and
    never stores it as a failed judgment."""


class ColumnMappingNeeded(DataError):
    """A table (CSV/TSV, JSON Lines of flat records) whose columns say too little to read it: it says
    how to give a column mapping and carries the file's columns, so the app can ask for one."""

    def __init__(self, message: str, columns: list[str], *, path: str | None = None,
                 line: int | None = None) -> None:
        self.columns = list(columns)
        #: What is wrong, without the advice (the app's dialog shows it above the columns).
        self.problem = message
        super().__init__(
            f"{message}; give a column mapping: --map COLUMN=FIELD on the command line (e.g. --map "
            "reply=candidate --map rater1=Overall:a1), or pick the fields in the app's column dialog "
            f"(the file's columns: {', '.join(self.columns) or 'none'})", path=path, line=line)
