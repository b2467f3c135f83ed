"""Choose a dataset, see what it holds, and read its items."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.validation import Function
from textual.widgets import Header, Input, Label, OptionList, Select, Static, TabbedContent, TabPane
from textual.widgets.option_list import Option, OptionDoesNotExist

from ..controllers.adversarial import AdversarialRequest, kdconv_sources
from ..format import number_text
from ..state import Change, WorkspaceChange
from ..widgets.app_footer import AppFooter
from ..widgets.dataset_summary import render_summary
from ..widgets.item_view import ItemView, metric_note
from ..widgets.path_suggester import PathSuggester
from ..widgets.virtual_table import Column, TableCell, VirtualTable
from .adversarial_dialog import AdversarialDialog
from .base import WorkspaceScreen, no_dataset_text

if TYPE_CHECKING:
    from dialjudge.core.api import DatasetEntry
    from dialjudge.core.model import Dataset, Example

ORIGIN_TITLES = {"bundled": "Bundled", "data-folder": "In your data folders", "recent": "Recently opened"}
_RANGE = re.compile(r"^\s*(?:(?P<op>>=|<=|>|<)\s*(?P<bound>-?\d+(?:\.\d+)?)|"
                    r"(?P<low>-?\d+(?:\.\d+)?)\s*(?:(?:-|\.\.|–)\s*(?P<high>-?\d+(?:\.\d+)?))?)\s*$")


def parse_range(text: str) -> tuple[float, float] | None:
    """'3-5', '3..5', '4', '>=4', '<2' as inclusive (low, high); None for an empty text.
    Raises ValueError for anything else."""
    if not text.strip():
        return None
    match = _RANGE.match(text)
    if match is None:
        raise ValueError(f"not a range: {text!r} (try 3-5, 4, >=4 or <2)")
    if match["op"]:
        bound = float(match["bound"])
        epsilon = 1e-9
        return {">=": (bound, float("inf")), ">": (bound + epsilon, float("inf")),
                "<=": (float("-inf"), bound), "<": (float("-inf"), bound - epsilon)}[match["op"]]
    low = float(match["low"])
    high = float(match["high"]) if match["high"] is not None else low
    return (min(low, high), max(low, high))


def _valid_range(text: str) -> bool:
    try:
        parse_range(text)
    except ValueError:
        return False
    return True


class DatasetsScreen(WorkspaceScreen):
    CSS_PATH = "datasets.tcss"
    AUTO_FOCUS = "#dataset-list"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "open_file", "Open file…"),
        Binding("slash", "search", "Search items", key_display="/"),
        Binding("m", "show_tab('summary-tab')", "Summary"),
        Binding("i", "show_tab('items-tab')", "Items"),
        Binding("a", "make_adversarial", "Make adversarial set…", show=False,
                tooltip="Perturb references into replies that contradict the facts; the new set is opened"),
    ]

    def __init__(self) -> None:
        super().__init__()
        #: Each item's searchable text, lower-cased once per dataset.
        self._haystack: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="datasets-body"):
            with Vertical(id="sources"):
                yield Label("Datasets", classes="pane-title")
                yield OptionList(id="dataset-list")
                yield Label("Open a file  (→ completes the path)", id="open-file-label")
                yield Input(placeholder="path to .jsonl / .json / .csv", id="open-file", suggester=PathSuggester())
            with TabbedContent(id="dataset-tabs", initial="summary-tab"):
                with TabPane("Summary", id="summary-tab"), VerticalScroll(id="summary-scroll"):
                    yield Static("Opening the dataset…", id="dataset-summary")
                with TabPane("Items", id="items-tab"):
                    with Horizontal(id="item-filters"):
                        yield Input(placeholder="search text", id="item-search")
                        yield Select[str]([], prompt="any tag", id="tag-filter")
                        yield Select[str]([], prompt="any system", id="system-filter")
                        yield Select[str]([], prompt="quality", id="range-quality")
                        yield Input(placeholder="range e.g. 3-5", id="quality-range",
                                    validators=[Function(_valid_range, "a range like 3-5, 4, >=4 or <2")])
                    with Vertical(id="items-body"):
                        yield VirtualTable(id="item-table", empty_text="No item matches the filters")
                        yield ItemView(id="dataset-item-view")
        yield AppFooter()

    # -- actions ---------------------------------------------------------------------------

    def action_open_file(self) -> None:
        """Type a path to open (→ accepts a completion)."""
        self.query_one("#open-file", Input).focus()

    def action_search(self) -> None:
        """Search the items' text."""
        self.action_show_tab("items-tab")
        self.query_one("#item-search", Input).focus()

    def action_make_adversarial(self) -> None:
        """Ask how to build an adversarial set, then build, save and open it in the background."""
        dataset = self.dj.workspace.dataset
        dialog = AdversarialDialog(dataset.name if dataset is not None else None,
                                   dataset.systems if dataset is not None else [],
                                   kdconv_sources(self.dj.services))

        def build(request: AdversarialRequest | None) -> None:
            if request is not None:
                self.dj.adversarial.make_set(request)
                self.notify("Making the adversarial set…", timeout=3)

        self.app.push_screen(dialog, build)

    def action_show_tab(self, tab: str) -> None:
        """Show the summary or the items."""
        self.query_one("#dataset-tabs", TabbedContent).active = tab

    # -- following the workspace -----------------------------------------------------------

    def workspace_changed(self, change: WorkspaceChange) -> None:
        if change.kind is Change.DATASET:
            self._fill_dataset_list()
            self._show_dataset()
        elif change.kind is Change.SUMMARY:
            self._show_summary()
        elif change.kind is Change.ITEM:
            view = self.query_one(ItemView)
            if view.example is not None and view.example.id in change.item_ids:
                view.set_metric_scores(view.example.id, self.dj.datasets.item_metrics[view.example.id])

    def _fill_dataset_list(self) -> None:
        option_list = self.query_one("#dataset-list", OptionList)
        entries = self.dj.services.list_datasets()
        current = self.dj.workspace.dataset
        # The list is rebuilt on every open (a new recent entry may shift the rows): the cursor stays on
        # the dataset just opened, or failing that on the row it was on, instead of jumping to the top.
        highlighted = option_list.highlighted_option
        keep_id = highlighted.id if highlighted is not None else None
        options: list[Option | None] = []
        origin = None
        open_id = None
        for entry in entries:
            if entry.origin != origin:
                if origin is not None:
                    options.append(None)
                origin = entry.origin
                options.append(Option(Text(ORIGIN_TITLES.get(origin, origin), style="bold"), disabled=True))
            is_open = current is not None and _is_open(entry, current)
            option = _entry_option(entry, is_open=is_open)
            if is_open and open_id is None:
                open_id = option.id
            options.append(option)
        option_list.clear_options()
        option_list.add_options(options)
        _highlight_first_of(option_list, (open_id, keep_id))

    def _show_dataset(self) -> None:
        dj = self.dj
        dataset = dj.workspace.dataset
        self._show_summary()
        if dataset is None:
            return
        self._haystack = {ex.id: _searchable(ex) for ex in dataset.examples}
        with self.prevent(Select.Changed, Input.Changed):
            self.query_one("#tag-filter", Select).set_options([(t, t) for t in dataset.tags])
            self.query_one("#system-filter", Select).set_options([(s, s) for s in dataset.systems])
            qualities = dj.workspace.qualities()
            quality_select = self.query_one("#range-quality", Select)
            quality_select.set_options([(q, q) for q in qualities])
            if dj.workspace.quality is not None:
                quality_select.value = dj.workspace.quality
            self.query_one("#item-search", Input).value = ""
            self.query_one("#quality-range", Input).value = ""
        self._fill_item_table(dataset)

    def _show_summary(self) -> None:
        """The summary follows the dataset (DatasetDescribed): it takes seconds at 100,000 items."""
        dj = self.dj
        summary_widget = self.query_one("#dataset-summary", Static)
        if dj.workspace.dataset is None:
            summary_widget.update(no_dataset_text(dj, on_datasets_screen=True))
        elif dj.datasets.dataset_summary is None:
            summary_widget.update("Describing the dataset…")
        else:
            summary_widget.update(render_summary(dj.datasets.dataset_summary, dj.datasets.dataset_ceilings))

    def _range_quality(self) -> str | None:
        select = self.query_one("#range-quality", Select)
        return None if select.is_blank() else str(select.value)

    def _fill_item_table(self, dataset: Dataset) -> None:
        quality = self._range_quality()
        table = self.query_one("#item-table", VirtualTable)
        table.set_columns([
            Column("id", "item", max_width=24),
            Column("system", "system", max_width=16, names=tuple(dataset.systems)),
            Column("tags", "tags", max_width=22),
            Column("human", quality or "human", align="right", max_width=12),
            Column("candidate", "candidate", max_width=60),
        ])
        table.set_rows((ex.id, _item_cells(ex, quality)) for ex in dataset.examples)
        self._apply_filters()

    # -- filters ---------------------------------------------------------------------------

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id in ("item-search", "quality-range"):
            self._apply_filters()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "range-quality":
            dataset = self.dj.workspace.dataset
            if dataset is not None:
                self._fill_item_table(dataset)
        elif event.select.id in ("tag-filter", "system-filter"):
            self._apply_filters()

    def _apply_filters(self) -> None:
        dataset = self.dj.workspace.dataset
        table = self.query_one("#item-table", VirtualTable)
        if dataset is None:
            return
        text = self.query_one("#item-search", Input).value.strip().lower()
        tag_select = self.query_one("#tag-filter", Select)
        system_select = self.query_one("#system-filter", Select)
        tag, system = tag_select.value, system_select.value
        quality = self._range_quality()
        try:
            bounds = parse_range(self.query_one("#quality-range", Input).value)
        except ValueError:
            bounds = None  # the input shows itself invalid; filter as if it were empty
        checks = []
        if not tag_select.is_blank():
            checks.append(lambda ex: tag in ex.tags)
        if not system_select.is_blank():
            checks.append(lambda ex: ex.system == system)
        if bounds is not None and quality is not None:
            low, high = bounds
            checks.append(lambda ex: _within(ex, quality, low, high))
        if text:
            haystack = self._haystack
            checks.append(lambda ex: text in haystack[ex.id])
        if not checks:
            table.set_filter(None)
            return
        keep = {ex.id for ex in dataset.examples if all(check(ex) for check in checks)}
        table.set_filter(keep.__contains__)

    # -- choosing ----------------------------------------------------------------------------

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        if event.option.id is not None:
            self.dj.datasets.open(event.option.id)
            self.notify(f"Opening {event.option.id}…", timeout=2)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id == "open-file" and event.value.strip():
            self.dj.datasets.open(event.value.strip())

    def on_virtual_table_row_highlighted(self, event: VirtualTable.RowHighlighted) -> None:
        dataset = self.dj.workspace.dataset
        if event.table.id != "item-table" or dataset is None or event.key is None:
            return
        example = dataset.get(str(event.key))
        view = self.query_one(ItemView)
        if view.example is not None and view.example.id == example.id:
            return
        view.show(example, self.dj.datasets.item_metrics.get(example.id))
        if metric_note(example) is None and example.id not in self.dj.datasets.item_metrics:
            self.dj.datasets.score_item(example)


def _highlight_first_of(option_list: OptionList, option_ids: tuple[str | None, ...]) -> None:
    """Put the cursor on the first of ``option_ids`` that the list holds (none there: leave it)."""
    for option_id in option_ids:
        if option_id is None:
            continue
        try:
            option_list.highlighted = option_list.get_option_index(option_id)
        except OptionDoesNotExist:
            continue
        return


#: Room for a dataset's description under its name in the list.
DESCRIPTION_WIDTH = 33


def _entry_option(entry: DatasetEntry, *, is_open: bool) -> Option:
    label = Text("● " if is_open else "  ", style="bold green")
    label.append(entry.name, style="bold" if entry.available else "dim")
    if not entry.available:
        label.append("  not found", style="dim italic")
    if entry.description:
        description = entry.description
        if len(description) > DESCRIPTION_WIDTH:
            description = description[: DESCRIPTION_WIDTH - 1].rstrip() + "…"
        label.append(f"\n  {description}", style="dim")
    key = entry.name if entry.origin != "recent" else str(entry.path)
    return Option(label, id=key, disabled=not entry.available)


def _is_open(entry: DatasetEntry, dataset: Dataset) -> bool:
    if entry.origin == "recent":
        return entry.path is not None and str(entry.path) == dataset.source
    return entry.name == dataset.name


def _item_cells(example: Example, quality: str | None) -> list[TableCell]:
    human = example.human(quality) if quality else None
    number = float(human) if isinstance(human, (int, float)) else None
    candidate = (example.candidate or _pair_text(example)).replace("\n", " ")
    return [
        TableCell.of(example.id),
        TableCell.of(example.system or ""),
        TableCell.of(", ".join(sorted(example.tags))),
        TableCell(number_text(number, 2), "bold", number),
        TableCell.of(candidate),
    ]


def _pair_text(example: Example) -> str:
    """A pre-paired item's two replies, side by side in one cell."""
    return "" if example.pair is None else f"A: {example.pair.response_a} │ B: {example.pair.response_b}"


def _within(example: Example, quality: str, low: float, high: float) -> bool:
    value = example.human(quality)
    return isinstance(value, (int, float)) and low <= float(value) <= high


def _searchable(example: Example) -> str:
    parts = [example.id, example.system or "", example.candidate or _pair_text(example), example.fact or "",
             *example.references, *(t.text for t in example.context)]
    return "\n".join(parts).lower()
