"""The behaviour every modal form shares: Enter in a field or the confirm button submits it, Esc or
any other button closes it without a result."""

from __future__ import annotations

from typing import ClassVar, TypeVar

from textual.screen import ModalScreen
from textual.widgets import Button, Input

ResultT = TypeVar("ResultT")


class FormDialog(ModalScreen[ResultT]):
    """A modal form; a subclass names its confirm button and says what submitting does."""

    #: The id of the button that submits the form.
    CONFIRM_BUTTON: ClassVar[str] = "confirm"

    def submit(self) -> None:
        raise NotImplementedError

    def action_cancel(self) -> None:
        """Close without a result."""
        self.dismiss(None)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.submit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == self.CONFIRM_BUTTON:
            self.submit()
        else:
            self.action_cancel()
