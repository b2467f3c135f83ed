"""The "make adversarial set" dialog: source, perturbation kinds, sizes, seed, held-out reference, output file."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Checkbox, Input, Label, Select

from dialjudge.core.api.datasets import ADVERSARIAL_KINDS

from ..controllers.adversarial import CURRENT_SOURCE, AdversarialRequest, default_output
from ..widgets.path_suggester import PathSuggester
from ..widgets.toggles import StateCheckbox
from .form_dialog import FormDialog

DEFAULT_PER_ITEM = 3
DEFAULT_N = 100
DEFAULT_SEED = 1


class AdversarialDialog(FormDialog[AdversarialRequest | None]):
    """Ask how to build an adversarial set; dismissed with the request, or None."""

    CSS_PATH = ["dialogs.tcss", "adversarial_dialog.tcss"]
    CONFIRM_BUTTON = "make"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", key_display="Esc"),
        Binding("ctrl+s", "make", "Make the set"),
    ]

    def __init__(self, current_name: str | None, systems: Sequence[str], kdconv: Sequence[str]) -> None:
        """``current_name``: the open dataset (None: none); ``systems``: its systems;
        ``kdconv``: the KdConv sources found in the data folders."""
        super().__init__()
        self.current_name = current_name
        self.systems = list(systems)
        self.sources: list[tuple[str, str]] = (
            [(f"{current_name} (the open dataset)", CURRENT_SOURCE)] if current_name else []
        ) + [(name, name) for name in kdconv]
        self._default_out = self._default_path()

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog adversarial-dialog"):
            yield Label("Make an adversarial set", classes="dialog-title")
            yield Label("Perturb each item's reference into fluent replies that contradict the facts.",
                        classes="dialog-text")
            yield Label("Source", classes="dialog-text")
            yield Select(self.sources, allow_blank=False, id="adv-source",
                         value=self.sources[0][1] if self.sources else Select.BLANK)
            yield Label("Perturbations", classes="dialog-text")
            with Horizontal(id="adv-kinds"):
                for kind in ADVERSARIAL_KINDS:
                    yield StateCheckbox(kind, True, id=f"adv-kind-{kind}", compact=True)
            with Horizontal(id="adv-numbers"):
                for key, label, value in (("per-item", "per item", DEFAULT_PER_ITEM), ("n", "items (n)", DEFAULT_N),
                                          ("seed", "seed", DEFAULT_SEED)):
                    with Vertical(classes="adv-number"):
                        yield Label(label, classes="dialog-text")
                        yield Input(str(value), type="integer", id=f"adv-{key}")
            # A second reference lets the metrics score the original too (DSTC7-ADV, USR's human rewrite).
            yield Label("Held-out reference (a system whose replies become second references)",
                        classes="dialog-text")
            yield Select([(s, s) for s in self.systems], prompt="none", id="adv-held-out")
            yield Label("Write to (.jsonl; → completes the path)", classes="dialog-text")
            yield Input(str(self._default_out), id="adv-out", suggester=PathSuggester())
            with Horizontal(classes="dialog-buttons"):
                yield Button("Make (ctrl+s)", id="make", variant="primary")
                yield Button("Cancel (Esc)", id="cancel")

    def on_mount(self) -> None:
        self._sync_held_out()
        self.query_one("#adv-source", Select).focus()

    # -- what the fields say -------------------------------------------------------------

    def _source(self) -> str | None:
        select = self.query_one("#adv-source", Select)
        return None if select.is_blank() else str(select.value)

    def _seed(self) -> int | None:
        return _integer(self.query_one("#adv-seed", Input).value)

    def _default_path(self) -> Path:
        source = self._source() if self.is_mounted else (self.sources[0][1] if self.sources else None)
        name = self.current_name if source == CURRENT_SOURCE else source
        seed = self._seed() if self.is_mounted else DEFAULT_SEED
        return default_output(name or "dataset", DEFAULT_SEED if seed is None else seed)

    def _sync_held_out(self) -> None:
        """Held-out references come from the open dataset's systems; a KdConv source has none."""
        select = self.query_one("#adv-held-out", Select)
        select.disabled = self._source() != CURRENT_SOURCE or not self.systems
        if select.disabled:
            select.clear()

    def on_select_changed(self, event: Select.Changed) -> None:
        if event.select.id == "adv-source":
            self._sync_held_out()
            self._follow_default_path()

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id == "adv-seed":
            self._follow_default_path()

    def _follow_default_path(self) -> None:
        """The output path follows source and seed until the user types one of their own."""
        out = self.query_one("#adv-out", Input)
        if Path(out.value.strip()).expanduser() == self._default_out:
            self._default_out = self._default_path()
            out.value = str(self._default_out)

    # -- answers ---------------------------------------------------------------------------

    def request(self) -> AdversarialRequest | str:
        """The request the fields describe, or what is wrong with them."""
        source = self._source()
        if source is None:
            return "No source: open a dataset, or add KdConv to a data folder"
        kinds = tuple(k for k in ADVERSARIAL_KINDS if self.query_one(f"#adv-kind-{k}", Checkbox).value)
        if not kinds:
            return "Tick at least one perturbation"
        numbers = {}
        for key, low in (("per-item", 1), ("n", 1), ("seed", None)):
            value = _integer(self.query_one(f"#adv-{key}", Input).value)
            if value is None or (low is not None and value < low):
                return f"{key} must be a whole number" + (f" of at least {low}" if low is not None else "")
            numbers[key] = value
        out = self.query_one("#adv-out", Input).value.strip()
        if not out.endswith(".jsonl"):
            return "The set is written as native JSONL: give a path ending in .jsonl"
        held_out = self.query_one("#adv-held-out", Select)
        return AdversarialRequest(
            source=source, kinds=kinds, per_item=numbers["per-item"], n=numbers["n"], seed=numbers["seed"],
            out=Path(out).expanduser(), held_out_system=None if held_out.is_blank() else str(held_out.value))

    def submit(self) -> None:
        self.action_make()

    def action_make(self) -> None:
        """Build the set with these settings."""
        request = self.request()
        if isinstance(request, str):
            self.notify(request, severity="warning")
            return
        self.dismiss(request)





def _integer(text: str) -> int | None:
    try:
        return int(text.strip())
    except ValueError:
        return None
