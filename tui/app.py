"""The dialjudge terminal app: screens as modes, global keys, and the one place worker failures surface."""

from __future__ import annotations

from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType
from textual.worker import Worker, WorkerState

from dialjudge.core.errors import DialjudgeError

from .commands import DialjudgeCommands
from .controller import RUN_GROUP, WorkspaceController
from .navigation import DESTINATIONS, HOME
from .services import Services
from .state import Change


class DialjudgeApp(WorkspaceController, App[int]):
    TITLE = "dialjudge"
    CSS_PATH = [
        "app.tcss",
        "widgets/virtual_table.tcss",
        "widgets/correlation_panel.tcss",
        "widgets/discernment_panel.tcss",
        "widgets/item_view.tcss",
        "widgets/selection_bar.tcss",
        "widgets/run_progress.tcss",
        "widgets/judge_widgets.tcss",
    ]
    BINDINGS: ClassVar[list[BindingType]] = [
        *(d.binding() for d in DESTINATIONS),
        Binding("question_mark", "help", "Help", key_display="?"),
        Binding("f1", "help", "Help", show=False),
        Binding("escape", "cancel_run", "Cancel run"),
        Binding("q", "quit", "Quit"),
    ]
    COMMANDS = App.COMMANDS | {DialjudgeCommands}

    def __init__(self, services: Services, dataset: str) -> None:
        super().__init__()
        self.services = services
        self.initial_dataset = dataset
        self._init_controller()
        for d in DESTINATIONS:
            self.add_mode(d.mode, d.make_screen)

    def on_mount(self) -> None:
        self.switch_mode(HOME)
        self.set_interval(self.services.redraw_interval_s, self.flush_live_updates, name="live redraw")
        self.open_dataset(self.initial_dataset)

    def action_go(self, mode: str) -> None:
        """Show one of the app's screens."""
        self.switch_mode(mode)

    def action_help(self) -> None:
        """List every key."""
        from .screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "cancel_run":
            return self.run_active
        return True

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """The one place a failed background task becomes something the user sees."""
        worker = event.worker
        if event.state is WorkerState.ERROR:
            error = worker.error
            text = str(error) if isinstance(error, DialjudgeError) else f"{type(error).__name__}: {error}"
            self.log.error(f"worker {worker.name!r} failed", error)
            self.notify(text, title=f"{worker.description or worker.name} failed", severity="error", timeout=10)
        if worker.group == RUN_GROUP and worker.is_finished and self.run_state is not None and self.run_state.active:
            # The run ended before the engine could say so (a backend that failed to load).
            self.run_state.status = "failed" if event.state is WorkerState.ERROR else "cancelled"
            self._publish(Change.RUN)


def make_app(dataset: str | None = None, *, services: Services | None = None) -> DialjudgeApp:
    """The app on ``dataset`` (name or path; default: the bundled sample)."""
    from dialjudge.core.registry import DEFAULT_DATASET

    return DialjudgeApp(services if services is not None else Services.default(), dataset or DEFAULT_DATASET)
