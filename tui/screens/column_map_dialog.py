"""The open-file dialog's second step: a table whose columns do not say which field each holds.

Shows the file's columns, each with a field to pick (prefilled with what its name or its values
suggest) and, for a rating, the quality it rates; Open reads the file with that mapping, the
mapping the command line takes as ``--map COLUMN=FIELD``.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Input, Label, Select, Static

from dialjudge.core.api import (
    ColumnChoices,
    ColumnMap,
)
from dialjudge.core.api.column_maps import (
    NOT_A_FIELD,
    RATING,
    TEXT_FIELDS,
    column_map_from_fields,
    rating_field,
)
from dialjudge.core.errors import DataError

from .form_dialog import FormDialog

#: What each field means, as the field picker lists it.
FIELD_TITLES = {
    NOT_A_FIELD: "not a field (kept as an extra column)",
    "id": "id: the item's id",
    "group_id": "group_id: items answering one context",
    "context": "context: the dialogue so far",
    "candidate": "candidate: the reply to judge",
    "reference": "reference: a reference reply",
    "fact": "fact: knowledge or persona",
    "system": "system: which system replied",
    "tags": "tags: comma-separated",
    RATING: "rating: one annotator's score",
}
FIELD_OPTIONS = [(FIELD_TITLES[f], f) for f in (NOT_A_FIELD, *TEXT_FIELDS, RATING)]


class ColumnMapDialog(FormDialog[ColumnMap | None]):
    """Asks which field each column of a CSV/TSV or JSON Lines table holds."""

    CSS_PATH = ["dialogs.tcss", "column_map_dialog.tcss"]
    CONFIRM_BUTTON = "open-mapped"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc", tooltip="Close without opening the file"),
        Binding("ctrl+s", "open_mapped", "Open", tooltip="Open the file with these fields"),
    ]

    def __init__(self, choices: ColumnChoices, problem: str) -> None:
        super().__init__()
        self.choices = choices
        self.problem = problem

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            # File and column names are data: shown as text, never read as markup.
            yield Label(Text(f"Which field is each column of {self.choices.path.name}?"), classes="dialog-title")
            yield Static(Text(f"{self.problem[:1].upper()}{self.problem[1:]}. Pick each column's field (prefilled from the names and "
                         "values); a rating also names its quality. Scales are read from the values. "
                         "Command line: --map COLUMN=FIELD."), classes="dialog-text")
            with VerticalScroll(id="column-rows"):
                for index, choice in enumerate(self.choices.choices):
                    with Horizontal(classes="column-row"):
                        # The example also as the name's tooltip: narrow terminals hide the example column.
                        name = Label(Text(choice.column), classes="column-name")
                        name.tooltip = Text(f"{choice.column}: {_one_line(choice.example)}")
                        yield name
                        yield Select(FIELD_OPTIONS, value=choice.field, allow_blank=False, compact=True,
                                     id=f"field-{index}")
                        yield Input(choice.quality, placeholder="quality", compact=True, id=f"quality-{index}",
                                    disabled=choice.field != RATING)
                        yield Label(Text(_one_line(choice.example)), classes="column-example")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Open (ctrl+s)", id="open-mapped", variant="primary", compact=True)
                yield Button("Cancel (Esc)", id="cancel", compact=True)

    def on_mount(self) -> None:
        self.query_one("#field-0", Select).focus()

    def on_select_changed(self, event: Select.Changed) -> None:
        """A rating names its quality; other fields have none."""
        if event.select.id and event.select.id.startswith("field-"):
            index = event.select.id.removeprefix("field-")
            quality = self.query_one(f"#quality-{index}", Input)
            quality.disabled = event.value != RATING
            if event.value == RATING and not quality.value.strip():
                quality.focus()

    def fields(self) -> dict[str, str]:
        """Each column's FIELD (a rating's QUALITY:ANNOTATOR, the annotator named after its column)."""
        out = {}
        for index, choice in enumerate(self.choices.choices):
            field = self.query_one(f"#field-{index}", Select).value
            if field == RATING:
                quality = self.query_one(f"#quality-{index}", Input).value.strip()
                if not quality:
                    raise DataError(f"name the quality the column {choice.column!r} rates")
                annotator = choice.annotator if quality == choice.quality and choice.annotator else choice.column
                out[choice.column] = rating_field(quality, annotator)
            else:
                out[choice.column] = str(field)
        return out

    def submit(self) -> None:
        self.action_open_mapped()

    def action_open_mapped(self) -> None:
        """Open the file with the fields picked."""
        try:
            column_map = column_map_from_fields(self.fields())
        except DataError as exc:
            self.notify(str(exc), severity="warning", timeout=8)
            return
        if "candidate" not in self.fields().values():
            self.notify("Pick the column that holds the candidate (the reply to judge)", severity="warning")
            return
        self.dismiss(column_map)


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return f"e.g. {flat[:24]}…" if len(flat) > 24 else (f"e.g. {flat}" if flat else "")
