"""What a judge said about one item: its score, the probabilities behind it, its reasoning and raw text."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from ..format import number_text

if TYPE_CHECKING:
    from dialjudge.core.api.types import Judgment

BAR_WIDTH = 30
#: Raw outputs longer than this are cut on screen (the store and exports keep them whole).
RAW_LIMIT = 2000


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def plain(text: str) -> str:
    """Model output as it can be shown: line ends unified, other control characters dropped
    (a carriage return would send the cursor back and overwrite the line on screen)."""
    return _CONTROL.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def distribution_bars(distribution: Mapping[str, float], *, width: int = BAR_WIDTH) -> Table:
    """One row per answer: its probability as a bar and a number, in the scale's order."""
    table = Table(box=None, padding=(0, 1), show_header=False, show_edge=False)
    table.add_column("answer", justify="right", style="bold")
    table.add_column("bar", no_wrap=True)
    table.add_column("p", justify="right")
    top = max(distribution.values(), default=0.0)
    for answer, p in distribution.items():
        filled = round(max(0.0, min(1.0, p)) * width)
        bar = Text("█" * filled, style="bold green" if p == top and p > 0 else "green")
        bar.append("·" * (width - filled), style="dim")
        table.add_row(answer.strip() or repr(answer), bar, f"{p:.3f}")
    return table


def valid_mass_text(judgment: Judgment) -> Text:
    """How much probability the valid answers held at the answer position (before normalising)."""
    assert judgment.valid_mass is not None
    bound = "at least " if judgment.mass_is_lower_bound else ""
    text = f"valid answers held {bound}{100 * judgment.valid_mass:.1f}% of the probability at the answer position"
    if judgment.valid_in_top is not None:
        text += f"; {judgment.valid_in_top} in the top list"
    if judgment.mass_is_lower_bound:
        text += " (a truncated list: valid answers below it cannot be seen)"
    # A warning exactly where the judge's own threshold left it unscored (and the review queue flags it).
    return Text(text, style="yellow" if judgment.failed else "dim")


def render_judgment(judgment: Judgment, *, title: str | None = None, human: float | None = None) -> RenderableType:
    """A judgment as the Prompt lab and the Review screen show it.

    ``human`` is the item's human label on 0-1, shown beside the judge's 0-1 score.
    """
    heading = Text(title or judgment.judge, style="bold")
    heading.append(f"  {judgment.mode.value}", style="dim")
    if judgment.failed:
        heading.append("  not scored", style="bold red")
    else:
        heading.append(f"  score {number_text(judgment.score, 3)}", style="bold")
        heading.append(f"  ({number_text(judgment.normalized, 3)} on 0-1)")
        if human is not None:
            gap = abs((judgment.normalized or 0.0) - human)
            heading.append(f"  human {human:.3f}, gap {gap:.3f}", style="yellow" if gap >= 0.3 else "dim")
    parts: list[RenderableType] = [heading]
    if judgment.error:
        parts.append(Text(f"error: {judgment.error}", style="red"))
    if judgment.distribution:
        parts += [Text("answer probabilities", style="underline"), distribution_bars(judgment.distribution)]
    if judgment.valid_mass is not None:
        parts.append(valid_mass_text(judgment))
    if judgment.reasoning:
        parts += [Text("reasoning", style="underline"), Text(plain(judgment.reasoning))]
    if judgment.relevancy:
        parts += [Text("relevancy", style="underline"), Text(plain(judgment.relevancy))]
    raw = plain(judgment.raw_output)
    parts.append(Text("raw output", style="underline"))
    if raw.strip():
        shown = raw if len(raw) <= RAW_LIMIT else raw[:RAW_LIMIT] + f"… ({len(raw) - RAW_LIMIT} more characters)"
        parts.append(Text(shown, style="italic"))
    else:
        parts.append(Text("(empty)", style="dim"))
    return Group(*parts)


class JudgmentView(VerticalScroll):
    """Every judge's judgment of one item, one after another."""

    def __init__(self, empty_text: str = "No judgment yet.", *, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.empty_text = empty_text

    def compose(self) -> ComposeResult:
        yield Static(Text(self.empty_text, style="dim"), id="judgment-body")

    def show_message(self, text: str | Text) -> None:
        self.query_one("#judgment-body", Static).update(text if isinstance(text, Text) else Text(text, style="dim"))

    def show_judgments(self, judgments: Sequence[Judgment], *, human: float | None = None,
                       header: RenderableType | None = None) -> None:
        parts: list[RenderableType] = [header] if header is not None else []
        for index, judgment in enumerate(judgments):
            if index or header is not None:
                parts.append(Text(""))
            parts.append(render_judgment(judgment, human=human))
        if not judgments:
            parts.append(Text(self.empty_text, style="dim"))
        self.query_one("#judgment-body", Static).update(Group(*parts))
        self.scroll_home(animate=False)
