"""One item in full, over the screen it was opened from."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen

from ..host import dialjudge_app
from ..state import Change, WorkspaceChange
from ..widgets.item_view import ItemView, metric_note

if TYPE_CHECKING:
    from dialjudge.core.model import Example


class ItemScreen(ModalScreen[None]):
    CSS_PATH = "item.tcss"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", key_display="Esc"),
    ]

    def __init__(self, example: Example) -> None:
        super().__init__()
        self.example = example

    def compose(self) -> ComposeResult:
        yield ItemView(id="item-view")

    def on_mount(self) -> None:
        datasets = dialjudge_app(self).datasets
        datasets.workspace_changed.subscribe(self, self._on_change)
        view = self.query_one(ItemView)
        view.show(self.example, datasets.item_metrics.get(self.example.id))
        if metric_note(self.example) is None:
            datasets.score_item(self.example)

    def _on_change(self, change: WorkspaceChange) -> None:
        if change.kind is Change.ITEM and self.example.id in change.item_ids:
            metrics = dialjudge_app(self).datasets.item_metrics[self.example.id]
            self.query_one(ItemView).set_metric_scores(self.example.id, metrics)
