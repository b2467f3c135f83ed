"""Check boxes whose state reads in the glyph, not only in its colour: ``[x]`` when on, ``[ ]`` when off.

Textual draws every toggle as ``▐X▌`` and tells on from off by colour alone,
which a monochrome terminal, a screenshot in print or a colour-blind user
cannot read. These subclasses keep Textual's behaviour and styles and change
only the three characters of the box.
"""

from __future__ import annotations

from textual.strip import Strip
from textual.widgets import Checkbox, SelectionList
from textual.widgets._selection_list import SelectionType  # the list's value type parameter

BOX_LEFT, BOX_RIGHT = "[", "]"
MARK_ON, MARK_OFF = "x", " "


def box(checked: bool) -> tuple[str, str, str]:
    """The box's three characters for a state."""
    return BOX_LEFT, MARK_ON if checked else MARK_OFF, BOX_RIGHT


class StateCheckbox(Checkbox):
    """A check box drawn ``[x]`` or ``[ ]``."""

    BUTTON_LEFT = BOX_LEFT
    BUTTON_RIGHT = BOX_RIGHT

    # Textual reads this class constant when it draws the box; here it follows the value.
    @property
    def BUTTON_INNER(self) -> str:  # type: ignore[override]
        return MARK_ON if self.value else MARK_OFF


class StateSelectionList(SelectionList[SelectionType]):
    """A selection list whose boxes read ``[x]`` or ``[ ]``."""

    def render_line(self, y: int) -> Strip:
        line = super().render_line(y)
        _, scroll_y = self.scroll_offset
        index = scroll_y + y
        if index >= self.option_count:
            return line
        segments = list(line)
        if len(segments) < 3:
            return line
        # The parent drew the box as the first three segments (left side, mark, right side): keep their
        # styles, which carry the colours and the option index a click needs, and change only the text.
        checked = self.get_option_at_index(index).value in self._selected
        for position, text in enumerate(box(checked)):
            segment = segments[position]
            segments[position] = type(segment)(text, segment.style, segment.control)
        return Strip(segments, line.cell_length)
