"""Sorting and filtering a big table happen on a worker and give the right rows in the right order;
on the Scores screen too, and streamed judgments reach the workspace in order."""

from __future__ import annotations

import threading
from typing import Any

from rich.cells import cell_len
from textual.app import App, ComposeResult
from tui_helpers import SIZE, settle, wait_until

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.base import WorkspaceScreen
from dialjudge.tui.screens.score_cells import HUMAN_COLUMN, ID_COLUMN
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.state import Change, WorkspaceChange
from dialjudge.tui.widgets.virtual_table import Column, TableCell, VirtualTable

N_ROWS = 6_000  # above ASYNC_ORDER_ROWS: ordered on a worker


class ThreadRecordingSource:
    """Scores with ties and missing values; records the threads its sort keys were read on."""

    def __init__(self) -> None:
        self.scores = {i: None if i % 11 == 0 else float(i * 7919 % 500) for i in range(N_ROWS)}
        self.threads: set[int] = set()

    def cell(self, key: Any, column: str) -> TableCell:
        value = self.scores[key] if column == "score" else None
        if column == "name":
            return TableCell.of(f"row {key}")
        return TableCell("–" if value is None else f"{value:.0f}", "", value)

    def sort_key(self, key: Any, column: str) -> Any:
        self.threads.add(threading.get_ident())
        return self.scores[key] if column == "score" else f"row {key}"

    def sort_keys(self, keys: list[Any], column: str) -> list[Any]:
        return [self.sort_key(key, column) for key in keys]

    def widest_text(self, column: str) -> int:
        return cell_len(f"row {N_ROWS}")


class TableApp(App[None]):
    CSS_PATH = "../../tui/widgets/virtual_table.tcss"

    def __init__(self) -> None:
        super().__init__()
        self.messages: list[Any] = []

    def compose(self) -> ComposeResult:
        yield VirtualTable(id="t")

    def on_virtual_table_ordered(self, message: VirtualTable.Ordered) -> None:
        self.messages.append(message)

    def on_virtual_table_sorted(self, message: VirtualTable.Sorted) -> None:
        self.messages.append(message)


def expected_order(source: ThreadRecordingSource, keys: list[int], reverse: bool) -> list[int]:
    present = [k for k in keys if source.scores[k] is not None]
    present.sort(key=lambda k: source.scores[k], reverse=reverse)  # type: ignore[arg-type, return-value]
    return present + [k for k in keys if source.scores[k] is None]


async def test_a_big_table_sorts_and_filters_on_a_worker_and_drops_stale_orders():
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(VirtualTable)
        source = ThreadRecordingSource()
        table.set_columns([Column("name", "name"), Column("score", "score", align="right")])
        table.set_lazy_rows(range(N_ROWS), source)
        await wait_until(pilot, lambda: not table.ordering and table.row_count == N_ROWS, "the rows on show")
        app.messages.clear()

        table.sort_by("score")
        assert table.ordering and table.row_keys == list(range(N_ROWS))  # still the old order: a worker sorts
        await wait_until(pilot, lambda: any(isinstance(m, VirtualTable.Sorted) for m in app.messages), "sorted")
        assert not table.ordering
        assert table.row_keys == expected_order(source, list(range(N_ROWS)), reverse=False)
        assert threading.get_ident() not in source.threads  # the keys were read on the worker only

        # A filter asked for at once after a reverse sort: only the newest order is shown.
        table.sort_by("score", reverse=True)
        table.set_filter(lambda key: key % 3 == 0)
        kept = [k for k in range(N_ROWS) if k % 3 == 0]
        await wait_until(pilot, lambda: any(isinstance(m, VirtualTable.Ordered) and m.row_count == len(kept)
                                            for m in app.messages), "the filtered order announced")
        assert not table.ordering
        assert table.row_keys == expected_order(source, kept, reverse=True)
        assert table.row_count == len(kept) and table.total_count == N_ROWS

        table.move_cursor_to(kept[-1])
        assert table.cursor_key == kept[-1]


async def test_the_scores_table_filters_and_sorts_a_subset_off_the_ui_thread(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ScoresScreen)
        table = screen.table
        table.async_order_rows = 10  # the bundled sample is small: order it the way 100,000 items are
        built = table.built_count
        ws = app.workspace

        app.datasets.choose_view(subset="closed")
        await wait_until(pilot, lambda: not table.ordering and table.row_count == len(ws.selected_examples()),
                         "the subset's rows")
        assert table.row_keys == [ex.id for ex in ws.selected_examples()]
        assert table.built_count <= built + table.row_count  # the rows stayed: no rebuild of every cell
        assert f"{table.row_count} of {len(ws.dataset)} items shown" in str(screen.status_text())

        table.sort_by(HUMAN_COLUMN, reverse=True)
        await wait_until(pilot, lambda: not table.ordering and table.sort_column == HUMAN_COLUMN, "the sort")
        labels = [ws.human_label(ws.dataset.get(key)) for key in table.row_keys]
        present = [v for v in labels if v is not None]
        assert present == sorted(present, reverse=True)
        assert all(v is None for v in labels[len(present):])  # unrated items last

        table.sort_by(ID_COLUMN)
        app.datasets.choose_view(subset="all")
        await wait_until(pilot, lambda: not table.ordering and table.row_count == len(ws.dataset), "every row")
        assert table.row_keys == sorted((ex.id for ex in ws.dataset.examples), key=str.lower)


async def test_streamed_judgments_reach_the_workspace_in_order_in_few_messages(services):
    """The run's thread queues its events; the app is woken once per batch and applies them in order
    (a retry's second judgment of an item replaces the first)."""
    from dialjudge.core.judges.run.events import JudgmentScored, RunProgress, RunStarted
    from dialjudge.core.judges.types import Judgment, ScoringMode

    def judgment(item_id: str, normalized: float) -> Judgment:
        return Judgment(item_id=item_id, judge="fake", mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="",
                        score=1 + 4 * normalized, normalized=normalized)

    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        runs = app.runs
        takes: list[int] = []
        take = runs.take_events

        def counted_take(limit: int = 2_000) -> list[Any]:
            taken = take(min(limit, 20))  # small batches: the test sees several
            takes.append(len(taken))
            return taken

        runs.take_events = counted_take  # type: ignore[method-assign]
        examples = app.workspace.dataset.examples
        events: list[Any] = [RunStarted(run_id=4, total=len(examples) + 1)]
        events += [JudgmentScored(judgment(ex.id, (k % 5) / 4), k + 1, len(examples) + 1)
                   for k, ex in enumerate(examples)]
        events.append(JudgmentScored(judgment(examples[0].id, 1.0), len(examples) + 1, len(examples) + 1))
        events.append(RunProgress(len(examples) + 1, len(examples) + 1, 0, 0, 10.0, 1.0, 0.0))

        def engine() -> None:
            for event in events:
                runs.on_event(event)

        thread = threading.Thread(target=engine)
        thread.start()
        thread.join(timeout=30)  # blocks the app's loop too: every event is queued before the first take
        await wait_until(pilot, lambda: sum(takes) == len(events), "every queued event applied")
        scores = app.workspace.scores_of("fake#4")
        assert len(scores) == len(examples)
        assert scores[examples[0].id] == 1.0  # the later judgment of the item won
        assert scores[examples[1].id] == 0.25
        assert runs.state is not None and runs.state.done == len(examples) + 1
        # One wake-up for the whole queue, taken in chunks (each chunk posts the next wake-up).
        assert takes == [20, 20, 20, len(events) - 60]


async def test_a_big_table_with_no_filter_and_no_sort_shows_its_rows_at_once():
    """A new dataset's first view (every row, in the file's order) needs no worker: the rows are
    there as soon as they are set, and no worker ever reads a sort key."""
    app = TableApp()
    async with app.run_test(size=(60, 12)) as pilot:
        table = app.query_one(VirtualTable)
        table.set_columns([Column("name", "name"), Column("score", "score", align="right")])
        source = ThreadRecordingSource()
        table.set_lazy_rows(range(N_ROWS), source)
        assert not table.ordering
        assert table.row_count == N_ROWS and table.row_keys == list(range(N_ROWS))
        table.set_filter(None)
        assert not table.ordering and table.row_count == N_ROWS
        await pilot.pause()
        assert not source.threads  # nothing was sorted, on any thread
        assert not [w for w in app.workers if w.is_running]


async def test_the_scores_screen_hears_each_workspace_change_once(services):
    """Textual calls every class's on_mount along the MRO: a screen that also called its base's
    on_mount subscribed twice, and drew every change twice (60 ms at 100,000 items)."""
    from dialjudge.tui.screens.tune import TuneScreen

    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        signal = app.datasets.workspace_changed
        assert isinstance(app.screen, ScoresScreen)
        assert len(signal._subscriptions[app.screen]) == 1
        await pilot.press("t")
        await settle(pilot)
        assert isinstance(app.screen, TuneScreen)
        assert len(signal._subscriptions[app.screen]) == 1
        for screen in app.screen_stack:
            assert len(signal._subscriptions.get(screen, [])) <= 1

        class CallsItsBase(WorkspaceScreen):
            def __init__(self) -> None:
                super().__init__()
                self.changes: list[Change] = []

            def on_mount(self) -> None:
                super().on_mount()  # Textual calls WorkspaceScreen.on_mount too

            def workspace_changed(self, change: WorkspaceChange) -> None:
                self.changes.append(change.kind)

        extra = CallsItsBase()
        await app.push_screen(extra)
        await settle(pilot)
        assert len(signal._subscriptions[extra]) == 1
        assert extra.changes == [Change.DATASET]  # drawn once on mounting
        app.datasets.publish(Change.STATS)
        await settle(pilot)
        assert extra.changes == [Change.DATASET, Change.STATS]
