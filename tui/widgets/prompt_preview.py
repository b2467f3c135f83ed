"""The exact prompt a judge receives for one item, or why the template cannot render it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

if TYPE_CHECKING:
    from dialjudge.core.api.types import RenderedPrompt

ROLE_STYLES = {"system": "bold magenta", "user": "bold cyan", "assistant": "bold green"}


def render_prompt_text(prompt: RenderedPrompt, *, item_id: str, shots: Sequence[str] = (),
                       quality: str | None = None) -> RenderableType:
    output = prompt.output
    head = Text(f"{prompt.template_name} on {item_id}", style="bold")
    details = [f"{output.kind.value} {output.min:g}-{output.max:g}"]
    if output.choices:
        details.append("answers " + " ".join(output.choices))
    if quality:
        details.append(f"compared with {quality}")
    details.append(f"{len(shots)} few-shot example{'s' if len(shots) != 1 else ''}")
    head.append("  " + " · ".join(details), style="dim")
    parts: list[RenderableType] = [head]
    if shots:
        parts.append(Text("examples: " + ", ".join(shots), style="dim"))
    for message in prompt.messages:
        parts.append(Text(f"\n[{message.role}]", style=ROLE_STYLES.get(message.role, "bold")))
        parts.append(Text(message.content))
    if output.answer_prefix:
        parts.append(Text(f"\n[assistant, probability modes] {output.answer_prefix}", style="bold green"))
    return Group(*parts)


def render_pair_text(first: RenderedPrompt, swapped: RenderedPrompt, *, item_id: str,
                     quality: str | None = None) -> RenderableType:
    """A pairwise template's two prompts for one pair: as asked, then with the replies swapped."""
    return Group(Text(f"Order 1 of 2: {item_id} shown first (A)", style="bold reverse"),
                 render_prompt_text(first, item_id=item_id, quality=quality),
                 Text(f"\nOrder 2 of 2: the same replies swapped ({item_id} shown second, B)", style="bold reverse"),
                 render_prompt_text(swapped, item_id=item_id, quality=quality))


def render_template_error(error: Exception, text: str) -> Text:
    """Where the error is, the offending line with a caret under the column, then what is wrong."""
    line = getattr(error, "line", None)
    column = getattr(error, "column", None)
    reason = getattr(error, "reason", None) or str(error)
    out = Text("✗ ", style="bold red")
    if line is not None:
        out.append(f"line {line}" + (f", column {column}" if column is not None else ""), style="bold red")
        lines = text.split("\n")
        if 1 <= line <= len(lines):
            gutter = f"{line:>4} │ "
            out.append(f"\n{gutter}", style="dim")
            out.append(lines[line - 1])
            if column is not None:
                out.append("\n" + " " * (len(gutter) - 2) + "│ ", style="dim")
                out.append(" " * max(column - 1, 0) + "^", style="bold red")
        out.append("\n")
    out.append(str(reason), style="red")
    return out


class PromptPreview(VerticalScroll):
    """Shows a rendered prompt; keeps its scroll position while the text changes under it."""

    def compose(self) -> ComposeResult:
        yield Static(Text("Rendering…", style="dim"), id="prompt-body")

    def show_prompt(self, prompt: RenderedPrompt, *, item_id: str, shots: Sequence[str] = (),
                    quality: str | None = None, swapped: RenderedPrompt | None = None) -> None:
        self.remove_class("stale")
        self.query_one("#prompt-body", Static).update(
            render_prompt_text(prompt, item_id=item_id, shots=shots, quality=quality) if swapped is None
            else render_pair_text(prompt, swapped, item_id=item_id, quality=quality))

    def mark_stale(self) -> None:
        """The text on show no longer matches the template (it has an error)."""
        self.add_class("stale")

    def show_text(self, text: str | Text) -> None:
        self.query_one("#prompt-body", Static).update(text if isinstance(text, Text) else Text(text, style="dim"))
