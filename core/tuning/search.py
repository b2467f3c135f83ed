"""Run a tuning search: every variant is an ordinary run of the engine (stored, cached,
resumable), on the tuning samples successive halving asks for, then the finalists on the
held-out part.

Each (variant, round) is one run whose items are that round's sample; the few-shot pool is
the tuning part. Samples are nested, so a survivor's next round finds its earlier judgments
in the response cache; a rerun finds every run in the store; a rerun after adding a variant
sends requests for the new variant only (unless it changes which variants survive).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..config import Config, user_data_dir
from ..errors import ConfigError, DialjudgeError
from ..evaluation import compared_items, resolve_quality
from ..judges.backends import make_backend
from ..judges.prompts.templates import parse_template
from ..judges.run.engine import RunEngine
from ..judges.run.events import RunProgress, RunStatus
from ..judges.run.options import EngineOptions
from ..model import Aggregation, Dataset, Example, is_label_quality
from ..planning import plan_run
from ..stats.ceiling import HumanCeiling, human_ceiling
from ..stats.correlation import CorrelationResult, correlate
from ..stats.human import human_labels
from ..stats.paired import paired_comparison
from .halving import Round, SuccessiveHalving, planned_tuning_cost
from .report import HeldoutResult, TuningReport
from .space import SearchSpace, Variant
from .split import ContextSplit, split_by_context
from .winner import variant_template


class SearchCancelled(DialjudgeError):
    """The user stopped the search; every judgment made so far is stored and reused by a rerun."""


# -- events (what the CLI and the app show while a search runs) ---------------------------------

@dataclass(frozen=True)
class SearchStarted:
    n_variants: int
    tuning_contexts: int
    heldout_contexts: int
    budget: int
    #: The judgments the search plans: its tuning rounds and, at most, its held-out part (what an ETA
    #: counts down; fewer where earlier runs are reused, or where the baseline is a finalist).
    planned: int = 0


@dataclass(frozen=True)
class RoundStarted:
    round: Round


@dataclass(frozen=True)
class JudgingProgressed:
    """A variant's run moved on: ``done`` of ``total`` judgments; ``spent`` is the search's total."""

    variant: str
    stage: str
    done: int
    total: int
    spent: int
    model_calls: int


@dataclass(frozen=True)
class VariantScored:
    variant: str
    #: "round N" or "held-out".
    stage: str
    score: float | None
    n_items: int
    spent: int
    model_calls: int


@dataclass(frozen=True)
class SearchFinished:
    report: TuningReport


SearchEvent = SearchStarted | RoundStarted | JudgingProgressed | VariantScored | SearchFinished
BackendFactory = Callable[[Any], Any]


@dataclass(frozen=True)
class PlannedVariant:
    variant: Variant
    template_name: str
    template_text: str


class TuningSearch:
    """``await TuningSearch(space, dataset, config, store).run()`` -> :class:`TuningReport`."""

    def __init__(self, space: SearchSpace, dataset: Dataset, config: Config, store: Any, *,
                 make_backend: BackendFactory | None = None,
                 on_event: Callable[[SearchEvent], None] | None = None,
                 split: ContextSplit | None = None,
                 fewshot_pool: Sequence[Example] | None = None,
                 tuning_labels: Mapping[str, float] | None = None,
                 template_of: Callable[[Variant], tuple[str, str]] | None = None,
                 baseline_competes: bool = True, close_backends: bool = True) -> None:
        """The defaults search as `dialjudge tune` does. ``dialjudge align`` gives its own ``split`` (the
        corrected contexts to tune on, the untouched ones held out), the few-shot ``fewshot_pool`` (the
        corrections), ``tuning_labels`` (the reference on tuning: only these items are judged there) and
        ``template_of`` (each variant's template name and text); with ``baseline_competes`` False the
        winner is the best variant other than the baseline, so the held-out comparison always happens.
        ``close_backends`` False: the judges are the caller's to close (a judge process keeps its own open)."""
        self.space = space
        self.dataset = dataset
        self.config = config
        self.store = store
        self._make_backend = make_backend
        self._on_event = on_event
        #: False where the backends are someone else's to close (a judge process keeps its judges open).
        self._close_backends = close_backends
        self.settings = space.settings
        self.quality = _quality(dataset, self.settings.quality)
        self.split = split if split is not None else split_by_context(
            _rated(dataset, self.quality), heldout_fraction=self.settings.heldout_fraction, seed=self.settings.seed)
        self.tuning_pool: list[Example] = (list(fewshot_pool) if fewshot_pool is not None
                                           else self.split.tuning_items(dataset))
        self._tuning_labels = dict(tuning_labels) if tuning_labels is not None else None
        self._template_of = template_of
        self._baseline_competes = baseline_competes
        self._human = {k: (None if v is None else float(v))
                       for k, v in human_labels(dataset.examples, self.quality, Aggregation.MEAN).values.items()}
        self._groups = {ex.id: ex.group_id for ex in dataset.examples}
        self._backends: dict[str, Any] = {}
        self._engine: Any = None
        self._cancelled = False
        self.spent = 0
        self.model_calls = 0
        self.run_ids: dict[str, list[int]] = {}
        self.planned = {v.name: self._plan_variant(v) for v in space.variants}

    # -- control -------------------------------------------------------------------------------

    def cancel(self) -> None:
        """Stop after the judgment in flight; safe from another thread."""
        self._cancelled = True
        if self._engine is not None:
            self._engine.cancel()

    def _emit(self, event: SearchEvent) -> None:
        if self._on_event is not None:
            self._on_event(event)

    # -- planning ------------------------------------------------------------------------------

    def _plan_variant(self, variant: Variant) -> PlannedVariant:
        """Check a variant against the dataset and config before anything is judged."""

        try:
            name, text = (self._template_of(variant) if self._template_of is not None
                          else variant_template(variant, self.config))
            planned = PlannedVariant(variant, name, text)
            self._run_config(planned, ())
            return planned
        except DialjudgeError as exc:
            raise ConfigError(f"variant {variant.name!r}: {exc}") from None

    def _run_config(self, planned: PlannedVariant, item_ids: Sequence[str], name: str = "") -> Any:

        v = planned.variant
        plan = plan_run(self.dataset, self.config, template=v.template, judges=[v.judge], mode=v.mode,
                        aspect=v.aspect, quality=self.quality,
                        personas=[] if v.persona == "none" else [v.persona], fewshot=v.fewshot,
                        top_k=v.top_k, item_ids=tuple(item_ids), name=name)
        config = plan.config
        if planned.template_name != config.template or planned.template_text != config.template_text:

            tpl = parse_template(planned.template_text, planned.template_name)
            if config.mode not in tpl.output.modes:
                raise ConfigError(f"template {tpl.name!r} does not support mode {config.mode.value!r}")
            config = dataclasses.replace(config, template=planned.template_name,
                                         template_text=planned.template_text, template_source="")
        return config

    # -- the search ----------------------------------------------------------------------------

    async def run(self) -> TuningReport:
        try:
            return await self._search()
        finally:
            if self._close_backends:
                for backend in self._backends.values():
                    await backend.close()

    async def _search(self) -> TuningReport:
        s = self.settings
        heldout_items = self.split.heldout_items(self.dataset)
        n_heldout_variants = min(s.finalists + 1, len(self.space.variants))
        reserve = n_heldout_variants * len(heldout_items)
        if s.budget and reserve >= s.budget:
            raise ConfigError(f"a budget of {s.budget} judgments leaves nothing for tuning: the held-out part "
                              f"needs up to {reserve} ({n_heldout_variants} variants × {len(heldout_items)} items)")
        tuning_items = self._tuning_items(len(self.split.tuning))
        sizes = [sum(1 for ex in tuning_items if ex.group_id == c) for c in self.split.tuning]
        names = [v.name for v in self.space.variants]
        tuning_budget = (s.budget - reserve) if s.budget else 0
        halving = SuccessiveHalving(names, sizes, first_sample=s.first_sample, eta=s.eta, budget=tuning_budget)
        planned = planned_tuning_cost(names, sizes, first_sample=s.first_sample, eta=s.eta,
                                      budget=tuning_budget) + reserve
        self._emit(SearchStarted(len(self.space.variants), len(self.split.tuning), len(self.split.heldout), s.budget,
                                 planned))
        while (round_ := halving.next_round()) is not None:
            self._emit(RoundStarted(round_))
            items = [ex.id for ex in self._tuning_items(round_.n_contexts)]
            new_items = round_.cost // len(round_.variants)  # the items this sample added
            scores = {}
            for name in round_.variants:
                stage = f"round {round_.index + 1}"
                column, _run_id = await self._judge(name, items, stage, new_items)
                scores[name] = self._agreement(column, items, n_boot=0,
                                               reference=self._tuning_labels).coefficient(s.coefficient).value
                self._emit(VariantScored(name, stage, _none_if_nan(scores[name]), len(items), self.spent,
                                         self.model_calls))
            halving.record(scores)
        leaderboard = halving.leaderboard()
        baseline = self.space.baseline.name
        contenders = [st for st in leaderboard if self._baseline_competes or st.variant != baseline] or leaderboard
        winner = contenders[0].variant
        finalists = [st.variant for st in contenders[: s.finalists]]
        if baseline not in finalists:
            finalists.append(baseline)
        heldout_ids = [ex.id for ex in heldout_items]
        tuning_score = {st.variant: st.score for st in leaderboard}
        heldout: list[HeldoutResult] = []
        columns: dict[str, dict[str, float | None]] = {}
        for name in finalists:
            column, run_id = await self._judge(name, heldout_ids, "held-out", len(heldout_ids))
            columns[name] = column
            result = self._agreement(column, heldout_ids, n_boot=s.n_boot)
            heldout.append(HeldoutResult(name, tuning_score.get(name), result, s.coefficient, run_id))
            self._emit(VariantScored(name, "held-out", _none_if_nan(result.coefficient(s.coefficient).value),
                                     len(heldout_ids), self.spent, self.model_calls))
        paired = None
        if winner != baseline:

            human = {i: self._human.get(i) for i in heldout_ids}
            paired = paired_comparison(columns[baseline], columns[winner], human, self._groups,
                                       name_a=baseline, name_b=winner, quality=self.quality,
                                       n_boot=s.n_boot, seed=s.seed)
        report = TuningReport(
            dataset=self.dataset.name, quality=self.quality, coefficient=s.coefficient,
            variants=self.space.variants, split=self.split, rounds=tuple(halving.rounds),
            round_scores=tuple(halving.scores), leaderboard=tuple(leaderboard), heldout=tuple(heldout),
            winner=winner, baseline=baseline, paired=paired, spent=self.spent, budget=s.budget,
            model_calls=self.model_calls, stop_reason=halving.stop_reason, heldout_items=len(heldout_ids),
            run_ids=dict(self.run_ids), ceiling=self._ceiling(heldout_items, columns))
        self._emit(SearchFinished(report))
        return report

    async def _judge(self, name: str, item_ids: Sequence[str], stage: str, new_items: int
                     ) -> tuple[dict[str, float | None], int]:
        """Run one variant on ``item_ids`` through the engine; its scores by item, and the run id.
        ``new_items`` of them count against the budget (the rest were judged in an earlier round)."""

        if self._cancelled:
            raise SearchCancelled("the tuning search was cancelled")
        planned = self.planned[name]
        config = self._run_config(planned, item_ids, name=f"tune {name} ({stage})")
        backends = {spec.name: self._backend(spec) for spec in config.judges}
        spent_before, reused = self.spent, len(item_ids) - new_items

        def forward(event: Any) -> None:
            if isinstance(event, RunProgress):
                spent = spent_before + min(new_items, max(0, event.done - reused))
                self._emit(JudgingProgressed(name, stage, event.done, event.total, spent,
                                             self.model_calls + engine.counters.backend_calls))

        # A finished run of the same configuration is the engine's to extend, not to repeat: the
        # engine resumes only unfinished runs by itself, and a rerun should add no duplicate runs.
        earlier = _latest_run(self.store, config.fingerprint)
        engine = RunEngine(config, self.dataset, backends, self.store,
                           EngineOptions(fewshot_pool=self.tuning_pool, run_id=earlier))
        engine.subscribe(forward)
        self._engine = engine
        try:
            summary = await engine.run()
        finally:
            self._engine = None
        self.model_calls += summary.backend_calls
        self.spent += new_items
        self.run_ids.setdefault(name, []).append(summary.run_id)
        if self._cancelled or summary.status is not RunStatus.FINISHED:
            raise SearchCancelled(f"the tuning search stopped while judging {name!r} ({summary.status})")
        table = self.store.judgments.load_judgments(summary.run_id)
        judgments: Mapping[str, Any] = next(iter(table.values()), {})
        return {item: j.normalized for item, j in judgments.items()}, summary.run_id

    def _backend(self, spec: Any) -> Any:
        if spec.name not in self._backends:
            if self._make_backend is None:

                self._backends[spec.name] = make_backend(spec.config)
            else:
                self._backends[spec.name] = self._make_backend(spec.config)
        return self._backends[spec.name]

    def _ceiling(self, items: Sequence[Example], columns: Mapping[str, Mapping[str, float | None]]
                 ) -> HumanCeiling:
        """The humans' agreement on the held-out items the finalists are compared on (the one
        ceiling rule: core.evaluation.compared_items)."""
        compared = compared_items(items, columns)
        return human_ceiling([ex for ex in items if compared is None or ex.id in compared], self.quality)

    def _tuning_items(self, n_contexts: int) -> list[Example]:
        """The items of the first ``n_contexts`` tuning contexts (with tuning labels: only the labelled ones)."""
        items = self.split.sample_items(self.dataset, n_contexts)
        if self._tuning_labels is None:
            return items
        return [ex for ex in items if ex.id in self._tuning_labels]

    def _agreement(self, column: Mapping[str, float | None], item_ids: Sequence[str], *,
                   n_boot: int, reference: Mapping[str, float] | None = None) -> CorrelationResult:
        human: Mapping[str, float | None] = self._human if reference is None else reference
        return correlate([column.get(i) for i in item_ids], [human.get(i) for i in item_ids],
                         [self._groups[i] for i in item_ids], n_boot=n_boot, seed=self.settings.seed)


def _latest_run(store: Any, fingerprint: str) -> int | None:
    """The newest stored run made from this exact configuration (any status), if any."""
    ids = [r.id for r in store.runs.list_runs() if r.fingerprint == fingerprint]
    return max(ids) if ids else None


def search_record_path(report: TuningReport, folder: Path) -> Path:
    return folder / f"{report.dataset}-{report.quality}-seed{report.split.seed}.json".replace(" ", "_")


def save_search_record(report: TuningReport, folder: Path | None = None) -> Path:
    """Store the search (split, rounds, results, run ids) as JSON in the user's data folder."""

    folder = folder or user_data_dir() / "searches"
    folder.mkdir(parents=True, exist_ok=True)
    path = search_record_path(report, folder)
    path.write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
    return path


def stored_split(path: Path) -> ContextSplit:
    """The split a stored search used."""
    return ContextSplit.from_dict(json.loads(path.read_text(encoding="utf-8"))["split"])


def _quality(dataset: Dataset, wanted: str | None) -> str:

    if wanted is None:
        if "overall" in {q.lower() for q in dataset.qualities}:
            wanted = "overall"
        else:
            wanted = next(iter(dataset.qualities), None)
    if wanted is None:
        raise ConfigError(f"{dataset.name} has no human-rated quality to tune against")
    quality = resolve_quality(dataset, wanted)
    if quality not in dataset.qualities:
        raise ConfigError(f"search.quality: {dataset.name} has no quality {wanted!r} "
                          f"(qualities: {', '.join(dataset.qualities)})")
    if is_label_quality(dataset.qualities[quality]):
        raise ConfigError(f"search.quality: {quality!r} is a label quality; the search ranks by correlation, "
                          "so choose a rated (ordinal or numeric) quality")
    return quality


def _rated(dataset: Dataset, quality: str) -> list[Example]:
    return [ex for ex in dataset.examples if quality in ex.ratings]


def _none_if_nan(value: float) -> float | None:
    return None if value != value else float(value)
