"""The running correlations of the judge columns, kept on a thread of their own.

Judgments reach the :class:`~.scores_view_model.Workspace` on the UI thread as a run streams in, but their
running correlations (:class:`~dialjudge.core.stats.running.RunningCorrelations`) are not computed there:
building them for a view walks every rated item (50-60 ms of the UI thread at 100,000 items, as a run's first
judgment arrived), and each look at Spearman's ρ and Kendall's τ applies the ranks queued since the last
(15-20 ms at every redraw of the panel). The UI thread only queues scores and asks; this keeper's one thread
applies them and computes, and says when new numbers are in. Meanwhile the panel shows the last numbers
computed, at most one redraw old. The work still holds the interpreter, but in slices of the interpreter's
switch interval, so the UI thread waits milliseconds for it, not the whole computation.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar, Union

if TYPE_CHECKING:
    from dialjudge.core.api.types import Snapshot
    from dialjudge.core.api.view import RunningCorrelations

    Score = float | None

Build = Callable[[], "RunningCorrelations | None"]
T = TypeVar("T")


@dataclass(frozen=True)
class _Column:
    """Scores of one column added together (:meth:`RunningKeeper.add_column`)."""

    evaluator: str
    scores: Mapping[str, Score]
    in_scope: Collection[str]


#: What the UI thread queues: one score (evaluator, item id, score), or a column of them.
Add = Union[tuple[str, str, "Score"], _Column]


class RunningKeeper:
    """Running correlations fed and read on one thread; every public method is for the UI thread."""

    def __init__(self) -> None:
        self._executor: ThreadPoolExecutor | None = None
        #: Grows with every new view (reset); numbers of an older view are never shown.
        self._generation = 0
        #: Scores added since the view's reset and not yet applied (the UI thread appends, the keeper pops).
        self._adds: deque[Add] = deque()
        #: The numbers last computed, with their view's generation.
        self._latest: tuple[int, dict[str, Snapshot]] = (0, {})
        self._error: BaseException | None = None
        self._asking = threading.Lock()
        self._asked = False
        self._again = False
        #: Called on the keeper's thread when new numbers are in (the app posts itself a message).
        self.computed: Callable[[], None] | None = None
        # The keeper thread's own state.
        self._running: RunningCorrelations | None = None
        self._running_adds: deque[Add] = deque()
        self._running_generation = -1
        self._build_error: Exception | None = None

    # -- the UI thread ---------------------------------------------------------------------------

    def reset(self, build: Build) -> None:
        """A new view: ``build`` (called on the keeper's thread) makes its running correlations, empty or fed
        from copies (the UI thread goes on changing its own); the scores and columns added after this call are
        applied to them, those added before are the older view's and dropped."""
        self._generation += 1
        self._adds = deque()
        self._latest = (self._generation, {})
        self._submit(self._rebuild, self._generation, build, self._adds)

    def add(self, evaluator: str, item_id: str, score: Score) -> None:
        """A score of the current view, applied before the next numbers are computed."""
        self._adds.append((evaluator, item_id, score))

    def add_column(self, evaluator: str, scores: Mapping[str, Score], in_scope: Collection[str]) -> None:
        """Many scores of one column at once, those of items in ``in_scope`` (both read on the keeper's thread:
        pass copies the UI thread will not change). A pool of 100,000 items added score by score kept the UI
        thread about 140 ms as a second judge column arrived."""
        self._adds.append(_Column(evaluator, scores, in_scope))

    def latest(self) -> dict[str, Snapshot]:
        """The numbers last computed for the current view (empty before the first); raises what the keeper
        raised computing them."""
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        generation, snapshots = self._latest
        return snapshots if generation == self._generation else {}

    def ask(self) -> None:
        """Compute numbers with every score added so far, in the background; :attr:`computed` is called when
        they are in. Asked again while computing, it computes once more after."""
        with self._asking:
            if self._asked:
                self._again = True
                return
            self._asked = True
        self._submit(self._compute_latest)

    def now(self, *, ranks: bool = True, ci: bool = False) -> dict[str, Snapshot]:
        """Wait for the numbers with every score added so far (for tests, and for callers that may wait)."""
        return self._submit(self._snapshot, self._generation, ranks, ci).result()

    def _submit(self, work: Callable[..., T], *args: object) -> Future[T]:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="running correlations")
        return self._executor.submit(work, *args)

    # -- the keeper's thread -------------------------------------------------------------------

    def _rebuild(self, generation: int, build: Build, adds: deque[Add]) -> None:
        self._running = None  # an older view's, should the build fail
        self._running_generation = generation
        self._running_adds = adds
        self._build_error = None
        try:
            self._running = build()
        except Exception as error:  # raised by every question about this view (a future's own is never read)
            self._build_error = error

    def _apply(self) -> None:
        adds, running = self._running_adds, self._running
        # Only what was queued when asked: the UI thread goes on adding meanwhile, and a keeper slower than the
        # run must still compute (it did not, and fell further behind at every score).
        for _ in range(len(adds)):
            add = adds.popleft()
            if running is None:
                continue
            if isinstance(add, _Column):
                for item_id, score in add.scores.items():
                    if item_id in add.in_scope:
                        running.add(add.evaluator, item_id, score)
            else:
                running.add(*add)

    def _snapshot(self, generation: int, ranks: bool, ci: bool) -> dict[str, Snapshot]:
        if generation != self._running_generation:
            return {}  # a newer view was set since the question
        if self._build_error is not None:
            raise self._build_error
        self._apply()
        if self._running is None:
            return {}
        snapshots = self._running.snapshot(ranks=ranks, ci=ci)
        assert isinstance(snapshots, dict)
        return snapshots

    def _compute_latest(self) -> None:
        while True:
            generation = self._generation
            try:
                self._latest = (generation, self._snapshot(generation, True, False))
            except Exception as error:  # raised again on the UI thread, by latest()
                self._error = error
            with self._asking:
                again, self._again = self._again, False
                if not again:
                    self._asked = False
            if not again:
                break
        if self.computed is not None:
            self.computed()
