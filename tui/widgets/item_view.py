"""One item in full: the dialogue, the fact, the reference(s), the candidate, every rating, its metric scores."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from dialjudge.core.api.preferences import pair_label
from dialjudge.core.model import Level

from ..format import number_text

if TYPE_CHECKING:
    from dialjudge.core.model import Example

#: Colours that tell the speakers of a dialogue apart.
SPEAKER_STYLES = ("bold cyan", "bold magenta", "bold green", "bold yellow")


def metric_note(example: Example) -> str | None:
    """Why reference-based metrics do not apply to this item, or None when they do."""
    if example.level is Level.DIALOG:
        return "dialog-level item: reference-based metrics score single responses"
    if example.is_reference:
        return "this candidate is the reference itself: metrics would compare it with itself"
    if example.candidate is None:
        return "no candidate to score"
    if not any(r.strip() for r in example.references):
        return "no reference to compare with"
    return None


class ItemView(VerticalScroll):
    """Shows one :class:`Example`; metric scores arrive later through :meth:`set_metric_scores`."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.example: Example | None = None
        self.metric_scores: dict[str, float] | None = None

    def compose(self):
        yield Static("Highlight an item to see it here.", id="item-body")

    def show(self, example: Example, metric_scores: Mapping[str, float] | None = None) -> None:
        self.example = example
        self.metric_scores = dict(metric_scores) if metric_scores is not None else None
        self._redraw()
        self.scroll_home(animate=False)

    def set_metric_scores(self, example_id: str, scores: Mapping[str, float]) -> None:
        """The item's metric scores, if it is still the one on show."""
        if self.example is not None and self.example.id == example_id:
            self.metric_scores = dict(scores)
            self._redraw()

    def _redraw(self) -> None:
        if self.example is not None:
            self.query_one("#item-body", Static).update(render_example(self.example, self.metric_scores))


def render_example(example: Example, metric_scores: Mapping[str, float] | None) -> RenderableType:
    parts: list[RenderableType] = [_heading(example)]
    speakers: dict[str, str] = {}
    parts.append(_section("Dialogue"))
    for turn in example.context:
        style = speakers.setdefault(turn.speaker, SPEAKER_STYLES[len(speakers) % len(SPEAKER_STYLES)])
        line = Text()
        if turn.speaker:
            line.append(f"{turn.speaker}: ", style=style)
        line.append(turn.text)
        parts.append(line)
    if example.fact:
        parts += [_section("Fact"), Text(example.fact, style="italic")]
    if example.references:
        parts.append(_section("Reference" if len(example.references) == 1 else "References"))
        parts += [Text(f"• {ref}") for ref in example.references]
    if example.candidate is not None:
        parts += [_section("Candidate"), Text(example.candidate, style="bold")]
    if example.pair is not None:  # a pre-paired item: both replies, then every vote under Ratings
        parts += [_section("Reply A"), Text(example.pair.response_a, style="bold"),
                  _section("Reply B"), Text(example.pair.response_b, style="bold")]
    if example.adversarial is not None:
        p = example.adversarial
        change = Text(f"{p.kind} perturbation of {p.source_id}")
        if p.original_span or p.replacement:
            change.append(f": {p.original_span!r} → {p.replacement!r}")
        parts.append(Text.assemble(("adversarial: ", "bold red"), change))
    parts += [_section("Ratings"), _ratings_table(example)]
    parts.append(_section("Reference-based metrics"))
    note = metric_note(example)
    if note:
        parts.append(Text(note, style="dim"))
    elif metric_scores is None:
        parts.append(Text("scoring…", style="dim"))
    else:
        parts.append(_metrics_table(metric_scores))
    return Group(*parts)


def _heading(example: Example) -> Text:
    text = Text(example.id, style="bold")
    details = [f"context {example.group_id}", example.level.value]
    if example.system:
        details.append(f"system {example.system}")
    if example.tags:
        details.append("tags " + ", ".join(sorted(example.tags)))
    text.append("  " + " · ".join(details), style="dim")
    return text


def _section(title: str) -> Text:
    return Text(f"\n{title}", style="bold underline")


def _ratings_table(example: Example) -> RenderableType:
    if not example.ratings:
        return Text("no human ratings", style="dim")
    annotators: dict[str, None] = {}
    for rating in example.ratings.values():
        names = rating.annotators or tuple(f"#{k + 1}" for k in range(len(rating.scores)))
        annotators.update(dict.fromkeys(names))
    table = Table(box=None, padding=(0, 1), show_edge=False, header_style="bold")
    table.add_column("quality")
    table.add_column("scale", style="dim")
    # Headed by position (r1, r2, …), never by the data's own names: those are often cut-off codes
    # ("sm", "me", "er") or long ids that would squeeze the scores; the legend below names each.
    for position in range(1, len(annotators) + 1):
        table.add_column(f"r{position}", justify="right")
    table.add_column("mean", justify="right", style="bold")
    for quality, rating in example.ratings.items():
        names = rating.annotators or tuple(f"#{k + 1}" for k in range(len(rating.scores)))
        by_name = dict(zip(names, rating.scores, strict=False))
        cells = [_annotator_cell(by_name, a) for a in annotators]
        # A pair's votes: the majority rule of the agreement table (a split vote is a tie, not the first label).
        label = pair_label(example, quality) if example.pair is not None else None
        pooled = label if label is not None else rating.aggregate().value
        scale = rating.scale
        scale_text = (f"{scale.min:g}-{scale.max:g}" if scale.is_numeric and scale.min is not None
                      and scale.max is not None else scale.kind.value)
        table.add_row(quality, scale_text, *cells, _rating_text(pooled))
    legend = _rater_legend(list(annotators))
    return table if legend is None else Group(table, legend)


def _rater_legend(annotators: list[str]) -> Text | None:
    """'raters: r1 = sm · r2 = me …', the data's name of each rater column; None when the data names none."""
    if all(name == f"#{k + 1}" for k, name in enumerate(annotators)):
        return None
    legend = Text("raters: ", style="dim")
    for k, name in enumerate(annotators):
        if k:
            legend.append(" · ", style="dim")
        legend.append(f"r{k + 1}", style="bold")
        legend.append(" = ")
        legend.append(name)  # plain text: a name from data is never markup
    return legend


def _annotator_cell(by_name: Mapping[str, object], annotator: str) -> str:
    """Blank where the annotator did not rate this quality, n/a where they gave no value."""
    if annotator not in by_name:
        return ""
    value = by_name[annotator]
    return "n/a" if value is None else _rating_text(value)


def _rating_text(value: object) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, float):
        return f"{value:.2f}".rstrip("0").rstrip(".")
    return str(value)


def _metrics_table(scores: Mapping[str, float]) -> RenderableType:
    table = Table(box=None, padding=(0, 1), show_edge=False, show_header=False)
    table.add_column("metric")
    table.add_column("score", justify="right")
    for label, value in scores.items():
        table.add_row(label, number_text(value))
    return table
