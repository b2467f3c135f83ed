"""How a :class:`~.engine.RunEngine` runs: which run, what it may reuse, its timeouts, pacing and hooks."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ...model import Example
from ..types import BackendResult, JudgeRequest, Judgment
from .failures import BreakerSettings
from .stopping import DEFAULT_ORDER_SEED, StopRule
from .work_plan import PreparedWork, PromptRenderer
from .writer import WRITE_INTERVAL_S

Scorer = Callable[[JudgeRequest, BackendResult, str], Judgment]


@dataclass(frozen=True)
class EngineOptions:
    """Everything about a run beside its configuration, dataset, backends and store; the defaults
    judge a new run or resume the unfinished one of the same configuration."""

    #: Renders a judge's prompt for an item (None: the run's own template, personas and few-shot).
    renderer: PromptRenderer | None = None
    #: Scores a backend's answer (None: the template's scoring, .scoring).
    scorer: Scorer | None = None
    #: The examples few-shot shots are drawn from (None: the dataset's).
    fewshot_pool: Sequence[Example] | None = None
    #: Resume this run (its configuration must match); None: see ``resume``.
    run_id: int | None = None
    #: Resume the unfinished run of the same configuration, if any (False: always a new run).
    resume: bool = True
    #: Answer identical requests from the response cache.
    use_cache: bool = True
    #: On resume, ask again the judgments whose request failed.
    retry_failed: bool = True
    #: Seconds a request may take (None: from the judge's own timeout and retries).
    request_timeout_s: float | None = None
    #: Close the backends when the run ends (else the caller may keep a loaded model for the next run).
    close_backends: bool = False
    #: The run's clock, for its rates and wall time (a test may freeze it).
    clock: Callable[[], float] = time.monotonic
    #: A progress event at least this often (seconds) or every ``progress_every`` judgments.
    progress_interval_s: float = 0.2
    progress_every: int = 50
    #: When a judge's failures pause it (None: the defaults).
    breaker: BreakerSettings | None = None
    #: Contexts are judged in this seed's random order (None: file order); see .stopping.
    context_order_seed: int | None = DEFAULT_ORDER_SEED
    #: Ends the run once it has enough evidence (see .stopping).
    stop_rule: StopRule | None = None
    #: With ``resume``: an identical finished run (same config and name) is shown again, not repeated.
    reuse_finished: bool = False
    #: Scored judgments are committed together at least this often (seconds); see .writer.
    write_interval_s: float = WRITE_INTERVAL_S
    #: The run's work made already, with answers in hand (a batch import): see work_plan.PreparedWork.
    prepared: PreparedWork | None = None
