"""An experiment file as one use case: plan the matrix, judge it with resume and cache, rank, report, gate.

``dialjudge eval experiment.toml`` calls :func:`read_experiment`, :func:`plan_experiment` (every dataset
opened and every run planned, so a wrong key fails before anything is judged) and :func:`run_experiment`,
which runs each planned run through the ``judge`` use case (``judging.judge``): a finished run of the same
settings and name is shown again, an unfinished one continues where it stopped, and the response cache
answers any request asked before. A Ctrl+C cancels the run in flight the way ``dialjudge judge`` does
(what is stored stays; the rerun resumes it). Then one leaderboard per dataset and quality
(``leaderboards.leaderboard``), the HTML report (``html_report.write_html_report``; a caller may pass its own ``write_report``), and the
gate (``gate.check_stored_runs``) on the experiment's runs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..config import Config
from ..dataset_catalogue import open_dataset
from ..errors import ConfigError, DataError, DialjudgeError
from ..evaluation import resolve_quality
from ..judges.run.events import RunSummary
from ..judges.store.status import RunStatus
from ..model import Dataset
from ..tuning.experiment import Experiment, ExperimentDataset, load_experiment, packaged_experiments
from ..tuning.space import Variant
from . import leaderboards as _leaderboards
from . import runs as _runs
from .display import RunDisplay
from .gate import GateRequest, GateResult, Rule, UnfinishedRun, check_stored_runs
from .html_report import HtmlReportRequest, write_html_report
from .judging import judge
from .leaderboard_types import Leaderboard, LeaderboardRequest
from .requests import RunRequest
from .runs import RunPlan
from .session import Session

#: What writes the HTML report of an experiment's runs to a path (None: the HTML report, one file per dataset).
ReportWriter = Callable[[Session, tuple[int, ...], Path], object]

__all__ = ["DatasetBoard", "Experiment", "ExperimentOutcome", "ExperimentPlan", "PlannedRun", "ReportWriter",
           "experiment_gate", "experiment_runs", "packaged_experiments", "plan_experiment", "read_experiment",
           "run_experiment"]


def read_experiment(path: Path | str) -> Experiment:
    """An experiment file (or a shipped one by name: ``sample``), checked key by key."""
    return load_experiment(path)


@dataclass(frozen=True)
class PlannedRun:
    """One cell of the matrix: a variant on a dataset, planned and validated."""

    index: int
    dataset_index: int
    dataset: Dataset
    #: What opens the dataset again (its catalogue name or file path): the leaderboard's ``dataset``.
    dataset_target: str
    variant: Variant
    plan: RunPlan

    @property
    def label(self) -> str:
        return f"{self.dataset.name} · {self.variant.name}"


@dataclass(frozen=True)
class ExperimentPlan:
    experiment: Experiment
    datasets: tuple[Dataset, ...]
    runs: tuple[PlannedRun, ...]


def plan_experiment(session: Session, experiment: Experiment) -> ExperimentPlan:
    """Open every dataset and plan every run of the matrix (datasets × variants); a :class:`ConfigError`
    names the file, the dataset or variant and the setting at fault, before anything is judged."""
    source, settings = experiment.source, experiment.settings
    config = session.config
    datasets: list[Dataset] = []
    runs: list[PlannedRun] = []
    for index, entry in enumerate(experiment.datasets):
        where = f"{source}: datasets[{index}]"
        dataset = _open(entry, config, where)
        datasets.append(dataset)
        quality = _quality(dataset, entry.quality or settings.quality, where, "quality" if entry.quality
                           else None, source)
        for variant in experiment.variants:
            request = RunRequest(
                template=variant.template, judges=(variant.judge,), mode=variant.mode, top_k=variant.top_k,
                aspect=variant.aspect, quality=quality,
                personas=() if variant.persona == "none" else (variant.persona,), fewshot=variant.fewshot,
                subset=entry.subset or settings.subset, limit=entry.limit or settings.limit,
                name=f"{settings.name}: {variant.name}", extra_judges=experiment.judges)
            try:
                (plan,) = _runs.plan_runs(request, dataset, config)
            except DialjudgeError as exc:
                raise ConfigError(f"{source}: variant {variant.name!r} on datasets[{index}] ({dataset.name}): "
                                  f"{exc}") from None
            runs.append(PlannedRun(len(runs), index, dataset, entry.target, variant, plan))
    return ExperimentPlan(experiment, tuple(datasets), tuple(runs))


def _open(entry: ExperimentDataset, config: Config, where: str) -> Dataset:
    try:
        return open_dataset(entry.target, config, remember=entry.is_path, column_map=entry.column_map)
    except DialjudgeError as exc:
        raise ConfigError(f"{where} ({entry.target}): {exc}") from None


def _quality(dataset: Dataset, wanted: str | None, where: str, key: str | None, source: str) -> str | None:
    if wanted is None:
        return None
    quality = resolve_quality(dataset, wanted)
    if quality not in dataset.qualities:
        said = f"{where}.{key}" if key else f"{source}: experiment.quality"
        raise ConfigError(f"{said}: {dataset.name} has no quality {wanted!r} (qualities: "
                          f"{', '.join(dataset.qualities)})")
    return quality


# -- running it ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class DatasetBoard:
    """The leaderboard of one dataset's runs on one quality, or why there is none (a label quality)."""

    dataset: str
    quality: str
    run_ids: tuple[int, ...]
    board: Leaderboard | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ExperimentOutcome:
    plan: ExperimentPlan
    #: One per planned run that was started, in the plan's order (fewer when one did not finish).
    summaries: tuple[RunSummary, ...]
    boards: tuple[DatasetBoard, ...] = ()
    gate: GateResult | None = None
    #: The HTML report written, or why none was (no ``report`` key: both None).
    report: Path | None = None
    report_note: str | None = None
    notes: tuple[str, ...] = field(default=())

    @property
    def finished(self) -> bool:
        return (len(self.summaries) == len(self.plan.runs)
                and all(s.status == RunStatus.FINISHED for s in self.summaries))

    @property
    def run_ids(self) -> tuple[int, ...]:
        return tuple(s.run_id for s in self.summaries)


def _no_display(_run: PlannedRun) -> AbstractContextManager[RunDisplay | None]:
    @contextmanager
    def nothing() -> Iterator[None]:
        yield None
    return nothing()


def run_experiment(session: Session, plan: ExperimentPlan, *,
                   display: Callable[[PlannedRun], AbstractContextManager[RunDisplay | None]] = _no_display,
                   gate: GateRequest | None = None, write_report: ReportWriter | None = None) -> ExperimentOutcome:
    """Judge every planned run (resuming and reusing stored ones), stopping at the first that does not
    finish; then the leaderboards, the report (``write_report``, when the file asks for one) and ``gate``.

    A Ctrl+C (KeyboardInterrupt) cancels the run in flight, which keeps what it stored, and propagates."""
    summaries: list[RunSummary] = []
    for run in plan.runs:
        outcome = judge(session, [run.plan], run.dataset, display=_shown_as(display, run), reuse_finished=True)
        summaries.append(outcome.summaries[0])
        if not outcome.finished:
            return ExperimentOutcome(plan, tuple(summaries))
    run_ids = tuple(s.run_id for s in summaries)
    boards = _boards(session, plan, run_ids)
    report, report_note = _report(session, plan, run_ids, write_report)
    result = check_stored_runs_of(session, plan, run_ids, gate) if gate is not None and gate.rules else None
    return ExperimentOutcome(plan, tuple(summaries), boards, result, report, report_note)


def _shown_as(display: Callable[[PlannedRun], AbstractContextManager[RunDisplay | None]], run: PlannedRun
              ) -> Callable[[RunPlan], AbstractContextManager[RunDisplay | None]]:
    """The judge use case's display (of a plan) as the experiment's (of a cell of the matrix)."""
    def of_plan(_plan: RunPlan) -> AbstractContextManager[RunDisplay | None]:
        return display(run)
    return of_plan


def _boards(session: Session, plan: ExperimentPlan, run_ids: Sequence[int]) -> tuple[DatasetBoard, ...]:
    """One leaderboard per dataset and quality, of this experiment's runs only."""
    settings = plan.experiment.settings
    groups: dict[tuple[int, str], list[int]] = {}
    targets: dict[int, str] = {}
    for run, run_id in zip(plan.runs, run_ids):
        quality = run.plan.quality or ""
        groups.setdefault((run.dataset_index, quality), []).append(run_id)
        targets[run.dataset_index] = run.dataset_target
    boards = []
    for (index, quality), ids in groups.items():
        name = plan.datasets[index].name
        if not quality:
            boards.append(DatasetBoard(name, quality, tuple(ids), reason="the runs name no human-rated quality"))
            continue
        request = LeaderboardRequest(targets[index], quality, tuple(ids), level=settings.level,
                                     metrics=settings.metrics, n_boot=settings.n_boot, seed=settings.seed)
        try:
            with session.store() as store:
                board = _leaderboards.leaderboard(store, request, session.config)
        except DataError as exc:  # a label quality, or a level the data cannot have: say so, keep going
            boards.append(DatasetBoard(name, quality, tuple(ids), reason=str(exc)))
            continue
        boards.append(DatasetBoard(name, quality, tuple(ids), board))
    return tuple(boards)


def _report(session: Session, plan: ExperimentPlan, run_ids: tuple[int, ...],
            write_report: ReportWriter | None) -> tuple[Path | None, str | None]:
    path = plan.experiment.settings.report
    if path is None:
        return None, None
    path.parent.mkdir(parents=True, exist_ok=True)
    if write_report is not None:
        write_report(session, run_ids, path)
        return path, None
    groups: dict[int, list[int]] = {}
    for run, run_id in zip(plan.runs, run_ids):
        groups.setdefault(run.dataset_index, []).append(run_id)
    if len(groups) == 1:
        html_report_of_runs(session, run_ids, path)
        return path, None
    # A report covers the runs of one dataset: with several datasets, one file each, named after its dataset.
    written = []
    for index, ids in groups.items():
        name = "".join(c if c.isalnum() or c in "-_" else "-" for c in plan.datasets[index].name)
        target = path.with_name(f"{path.stem}-{name}{path.suffix}")
        html_report_of_runs(session, tuple(ids), target)
        written.append(str(target))
    return None, f"wrote one report per dataset: {', '.join(written)}"


def html_report_of_runs(session: Session, run_ids: tuple[int, ...], path: Path) -> object:
    """The experiment's report step: the HTML report of these runs (one dataset) written to ``path``."""
    return write_html_report(session, HtmlReportRequest(run_ids, output=path))


def experiment_gate(experiment: Experiment, extra_rules: Sequence[Rule] = (), *, judge: str | None = None,
                    quality: str | None = None, n_boot: int | None = None, seed: int | None = None,
                    tie_rule: str = "exclude") -> GateRequest | None:
    """The file's ``[gate]`` with any rules of the command line after them (None: no rule at all)."""
    rules = tuple(experiment.gate.rules) + tuple(extra_rules)
    if not rules:
        return None
    settings = experiment.settings
    return GateRequest(rules, quality=quality or experiment.gate.quality, judge=judge or experiment.gate.judge,
                       n_boot=settings.n_boot if n_boot is None else n_boot,
                       seed=settings.seed if seed is None else seed, tie_rule=tie_rule)


def check_stored_runs_of(session: Session, plan: ExperimentPlan, run_ids: Sequence[int],
                         gate: GateRequest) -> GateResult:
    """The gate on the experiment's runs (``run_ids``, in the plan's order); a gate that names a judge tests
    the runs of that judge."""
    if gate.judge is not None:
        run_ids = [run_id for run, run_id in zip(plan.runs, run_ids)
                   if gate.judge in {spec.name for spec in run.plan.config.judges}]
        if not run_ids:
            judges = sorted({spec.name for run in plan.runs for spec in run.plan.config.judges})
            raise ConfigError(f"{plan.experiment.source}: the gate's judge {gate.judge!r} judges no run of the "
                              f"experiment (its judges: {', '.join(judges)})")
    with session.store() as store:
        return check_stored_runs(store, run_ids, gate, session.config, datasets=plan.datasets)


def experiment_runs(session: Session, plan: ExperimentPlan) -> tuple[int, ...]:
    """The stored runs of a planned experiment (``dialjudge check experiment.toml``): each run's finished
    run of the same settings and name; :class:`UnfinishedRun` names the first that has none."""
    found = []
    source = plan.experiment.source
    with session.store() as store:
        store.locks.mark_dead_runs_interrupted()
        for run in plan.runs:
            finished = _runs.find_finished(store, run.plan)
            if finished is not None:
                found.append(int(finished.id))
                continue
            unfinished = _runs.find_resumable(store, run.plan)
            state = (f"its run {unfinished.id} is {unfinished.status}" if unfinished is not None
                     else "it has not been run")
            raise UnfinishedRun(f"{source}: {run.label}: {state}; run `dialjudge eval {source}` first (it resumes)")
    return tuple(found)
