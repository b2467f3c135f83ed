"""The reviewer's verdict on one item: judge wrong, human label doubtful, or fine; a note; an own rating."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.reactive import reactive
from textual.validation import Function
from textual.widgets import Button, Input, Label

if TYPE_CHECKING:
    from dialjudge.core.api.types import Review

#: The store's verdicts with what the form calls them, in key order (1, 2, 3).
VERDICTS: tuple[tuple[str, str], ...] = (
    ("judge-wrong", "Judge wrong"),
    ("human-doubtful", "Human label doubtful"),
    ("fine", "Fine"),
)
#: The radio buttons' short names (the form is narrow); the keys' descriptions use the long ones.
SHORT_LABELS = {"judge-wrong": "Judge wrong", "human-doubtful": "Human doubtful", "fine": "Fine"}


class VerdictPicker(Horizontal):
    """Three buttons, at most one chosen; unlike a RadioSet it can show "no verdict yet"."""

    verdict: reactive[str | None] = reactive(None)

    @dataclass
    class Picked(Message):
        """A verdict button was pressed."""

        verdict: str

    def compose(self) -> ComposeResult:
        for index, (verdict, _) in enumerate(VERDICTS, start=1):
            yield Button(f"{index} {SHORT_LABELS[verdict]}", id=f"verdict-{verdict}", classes="verdict",
                         compact=True)

    def watch_verdict(self, verdict: str | None) -> None:
        for button in self.query(Button):
            button.set_class(button.id == f"verdict-{verdict}", "-chosen")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id is not None:
            self.post_message(self.Picked(event.button.id.removeprefix("verdict-")))


class ReviewForm(Vertical):
    """Posts :class:`ReviewForm.Submitted` when saved; :meth:`load` shows an item's stored review."""

    @dataclass
    class Submitted(Message):
        """The review was saved from the form (a verdict, a note, maybe an own rating)."""

        verdict: str
        note: str
        own_rating: float | None

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.low: float | None = None
        self.high: float | None = None

    def compose(self) -> ComposeResult:
        yield VerdictPicker(id="review-verdict")
        with Horizontal(classes="review-fields"):
            yield Label("Note", classes="field-label")
            yield Input(placeholder="why (optional)", id="review-note", compact=True)
        with Horizontal(classes="review-fields"):
            yield Label("Own rating", classes="field-label")
            yield Input(placeholder="on the quality's scale", id="review-rating", compact=True,
                        validators=[Function(self._valid_rating, "a number on the quality's scale")])
            yield Button("Save review", id="review-save", variant="primary", compact=True)

    # -- the values --------------------------------------------------------------------------

    def set_scale(self, low: float | None, high: float | None) -> None:
        self.low, self.high = low, high
        rating = self.query_one("#review-rating", Input)
        rating.placeholder = f"{low:g}-{high:g} (optional)" if low is not None and high is not None else "optional"

    def _valid_rating(self, text: str) -> bool:
        try:
            self.parse_rating(text)
        except ValueError:
            return False
        return True

    def parse_rating(self, text: str) -> float | None:
        """The own rating typed in (None when empty); ValueError when it is no number on the scale."""
        if not text.strip():
            return None
        value = float(text)
        if not math.isfinite(value):
            raise ValueError(f"{text.strip()!r} is not a rating")
        if self.low is not None and self.high is not None and not self.low <= value <= self.high:
            raise ValueError(f"{value:g} is outside the scale {self.low:g}-{self.high:g}")
        return value

    @property
    def verdict(self) -> str | None:
        return self.query_one(VerdictPicker).verdict

    def set_verdict(self, verdict: str | None) -> None:
        self.query_one(VerdictPicker).verdict = verdict

    def load(self, review: Review | None) -> None:
        """Show a stored review, or a blank form."""
        self.set_verdict(review.verdict if review is not None else None)
        self.query_one("#review-note", Input).value = review.note if review else ""
        rating = review.own_rating if review else None
        self.query_one("#review-rating", Input).value = "" if rating is None else f"{rating:g}"

    # -- saving ------------------------------------------------------------------------------

    def submit(self, verdict: str | None = None) -> bool:
        """Post the form (with ``verdict`` chosen first, when given); False when it is incomplete."""
        if verdict is not None:
            self.set_verdict(verdict)
        chosen = verdict or self.verdict
        if chosen is None:
            self.app.notify("Choose a verdict first: 1 judge wrong, 2 human label doubtful, 3 fine",
                            severity="warning")
            # Off the text field, so that the digit keys choose rather than type.
            self.query_one(VerdictPicker).query(Button).first().focus()
            return False
        try:
            rating = self.parse_rating(self.query_one("#review-rating", Input).value)
        except ValueError as exc:
            self.app.notify(f"Own rating: {exc}", severity="warning")
            return False
        self.post_message(self.Submitted(chosen, self.query_one("#review-note", Input).value.strip(), rating))
        return True

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "review-save":
            event.stop()
            self.submit()

    def on_verdict_picker_picked(self, event: VerdictPicker.Picked) -> None:
        event.stop()
        self.submit(event.verdict)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()
