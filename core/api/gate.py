"""A CI gate over stored runs: rules on the CI's lower bound, the paired test and the failure share.

``dialjudge check RUN --min spearman=0.3`` and an experiment file's ``[gate]`` call :func:`check_runs`
with a :class:`GateRequest`. The figures are the ones the command line prints after a run: the agreement
table (``reports.run_agreement``: a judge on the items the run judged, a bootstrap over contexts) and the
label table (κ and agreement with the human majority), through :func:`reports.run_reports` with the
request's seed, so the same store, seed and resamples give the same verdict every time. "No worse than
run N" is the paired comparison of ``runs compare`` (:func:`comparison.compare`). Every judge of a run
must pass each rule unless the request names one judge. An unfinished run (running, awaiting a batch,
interrupted, cancelled, failed) is refused with :class:`UnfinishedRun`: a gate on part of a run would
pass or fail by chance of where it stopped. :func:`junit_xml` writes the outcome as JUnit XML.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError, DialjudgeError
from ..evaluation import resolve_quality
from ..format import interval_text, number_text
from ..gate_rules import (
    CORRELATIONS,
    LABEL_STATISTICS,
    STATISTICS,
    SYMBOLS,
    MaxFailuresRule,
    MinRule,
    NoWorseThanRule,
    Rule,
    parse_max_failures,
    parse_min_rule,
    parse_no_worse_than,
    parse_rules,
)
from ..judges.store.run_store import RunRecord, RunStore
from ..judges.store.status import RunStatus
from ..model import Dataset
from ..planning import RunPlan
from ..stats.pair_verdict_test import PairVerdictTest
from ..stats.paired import PairedComparison
from ..stats.small_samples import too_few_contexts
from . import comparison as _comparison
from . import reports as _reports
from .requests import AgreementRequest, CompareRequest
from .session import Session
from .stored import dataset_of_run

__all__ = ["CORRELATIONS", "LABEL_STATISTICS", "STATISTICS", "GateRequest", "GateResult", "MaxFailuresRule",
           "MinRule", "NoWorseThanRule", "Rule", "RuleOutcome", "UnfinishedRun", "check_runs", "check_stored_runs",
           "junit_xml", "parse_max_failures", "parse_min_rule", "parse_no_worse_than", "parse_rules"]


class UnfinishedRun(DialjudgeError):
    """A run the gate cannot judge yet: it has not finished (the message says its status and what to do)."""


@dataclass(frozen=True)
class GateRequest:
    """The rules, and what they are tested on."""

    rules: tuple[Rule, ...]
    #: The human-rated quality the statistics are of; None: each run's own quality.
    quality: str | None = None
    #: Only this judge of each run; None: every judge must pass.
    judge: str | None = None
    #: Bootstrap resamples of contexts for every CI, and their seed (the gate is reproducible).
    n_boot: int = 1000
    seed: int = 0
    #: core.stats.label_agreement.TieRule's value: a tied human majority on a label quality.
    tie_rule: str = "exclude"

    def __post_init__(self) -> None:
        if not self.rules:
            raise ConfigError("the gate has no rule: give --min, --no-worse-than or --max-failures")
        if self.n_boot < 1:
            raise ConfigError(f"--bootstrap must be at least 1 (the rules test a CI's bound), not {self.n_boot}")


@dataclass(frozen=True)
class RuleOutcome:
    """One rule on one judge of one run: whether it holds, the figure it was decided on, and why."""

    rule: str
    run_id: int
    judge: str
    quality: str
    held: bool
    #: The statistic with its CI and n, e.g. "ρ = 0.412 [.31,.50], n = 60".
    figure: str
    #: Why it holds or fails, e.g. "lower bound 0.310 ≥ 0.3".
    reason: str

    @property
    def subject(self) -> str:
        return f"run {self.run_id} {self.judge} · {self.quality}"

    @property
    def line(self) -> str:
        """The outcome in one line: what a CI log shows."""
        return f"{'ok  ' if self.held else 'FAIL'} {self.rule} — {self.subject}: {self.figure}; {self.reason}"


@dataclass(frozen=True)
class GateResult:
    run_ids: tuple[int, ...]
    outcomes: tuple[RuleOutcome, ...]
    n_boot: int
    seed: int

    @property
    def passed(self) -> bool:
        return all(o.held for o in self.outcomes)

    @property
    def failures(self) -> list[RuleOutcome]:
        return [o for o in self.outcomes if not o.held]

    @property
    def exit_code(self) -> int:
        """0: every rule holds; 1: one fails (2, bad input or an unfinished run, is raised, not returned)."""
        return 0 if self.passed else 1

    @property
    def summary(self) -> str:
        held = len(self.outcomes) - len(self.failures)
        return (f"gate {'passed' if self.passed else 'failed'}: {held} of {len(self.outcomes)} checks hold "
                f"(runs {', '.join(map(str, self.run_ids))}; bootstrap {self.n_boot:,} resamples of contexts, "
                f"seed {self.seed})")


def check_stored_runs(store: RunStore, run_ids: Sequence[int], request: GateRequest, app_config: Any = None, *,
                      datasets: Sequence[Dataset] = ()) -> GateResult:
    """Every rule of ``request`` on every (or the named) judge of each run; :class:`UnfinishedRun` when one
    has not finished, :class:`ConfigError` when a rule cannot apply to a run (κ on a numeric quality, say).
    ``datasets``: those already open (a run's dataset is opened again otherwise)."""
    if not run_ids:
        raise ConfigError("name at least one run to check")
    store.locks.mark_dead_runs_interrupted()  # a "running" run whose process is gone says so
    records = [_finished(store, run_id) for run_id in run_ids]
    for rule in request.rules:
        if isinstance(rule, NoWorseThanRule):
            _finished(store, rule.run_id, baseline=True)
    outcomes: list[RuleOutcome] = []
    open_sets = {d.name: d for d in datasets}
    for record in records:
        outcomes += _check_run(store, record, request, app_config, open_sets.get(record.run_config.dataset))
    return GateResult(tuple(run_ids), tuple(outcomes), request.n_boot, request.seed)


def check_runs(session: Session, run_ids: Sequence[int], request: GateRequest, *,
               datasets: Sequence[Dataset] = ()) -> GateResult:
    """:func:`check_stored_runs` on the session's store and configuration."""
    with session.store() as store:
        return check_stored_runs(store, run_ids, request, session.config, datasets=datasets)


def _finished(store: RunStore, run_id: int, *, baseline: bool = False) -> RunRecord:
    record = store.runs.get_run(run_id)
    if record.status != RunStatus.FINISHED.value:
        role = "the baseline run" if baseline else "run"
        hint = {"awaiting": "import its batch answers (dialjudge runs answers)",
                "running": "wait for it to end"}.get(str(record.status), "resume it (the same dialjudge judge or "
                                                                       "eval command) and check again")
        raise UnfinishedRun(f"{role} {run_id} is {record.status}, not finished: a gate tests whole runs; {hint}")
    return record


def _check_run(store: RunStore, record: RunRecord, request: GateRequest, app_config: Any,
               current: Dataset | None) -> list[RuleOutcome]:
    config = record.run_config
    dataset = dataset_of_run(config, app_config, current=current)
    wanted = request.quality or config.quality
    if not wanted:
        raise ConfigError(f"run {record.id} names no human-rated quality; give --quality")
    quality = resolve_quality(dataset, wanted)
    if quality not in dataset.qualities:
        raise ConfigError(f"run {record.id}: {dataset.name} has no quality {wanted!r} "
                          f"(qualities: {', '.join(dataset.qualities)})")
    plan = RunPlan(config, quality, config.subset)
    agreement = AgreementRequest(qualities=(quality,), include_metrics=False, n_boot=request.n_boot,
                                 seed=request.seed, tie_rule=request.tie_rule)
    reports = _reports.run_reports(store, plan, dataset, [record.id], agreement, for_file=True)
    judges = list(reports.judgments)
    if request.judge is not None:
        if request.judge not in judges:
            raise ConfigError(f"run {record.id} has no judge {request.judge!r} (its judges: {', '.join(judges)})")
        judges = [request.judge]
    outcomes: list[RuleOutcome] = []
    for rule in request.rules:
        if isinstance(rule, MinRule):
            outcomes += [_min_outcome(rule, reports, record.id, judge, quality) for judge in judges]
        elif isinstance(rule, MaxFailuresRule):
            outcomes += [_failure_outcome(rule, reports.judgments[judge], record.id, judge, quality)
                         for judge in judges]
        else:
            outcomes += _no_worse_outcomes(store, rule, record, judges, quality, dataset, request, app_config)
    return outcomes


# -- the lower bound of a CI ------------------------------------------------------------------------

def _min_outcome(rule: MinRule, reports: _reports.RunReports, run_id: int, judge: str,
                 quality: str) -> RuleOutcome:
    if _reports.Report.PAIRWISE in reports.reports:
        raise ConfigError(f"run {run_id} judged pairs: --min tests a judge's per-item scores or labels; use "
                          "--no-worse-than or --max-failures on a pairwise run")
    value, low, high, n, why = (_label_figures if rule.on_labels else _correlation_figures)(
        rule, reports, run_id, judge, quality)
    symbol = SYMBOLS[rule.statistic]
    figure = f"{symbol} = {_value_text(rule, value)} {_interval(rule, low, high)}".rstrip() + f", n = {n}"
    if low is None:
        return RuleOutcome(rule.text, run_id, judge, quality, False, figure,
                           f"no lower bound to test ({why or _why_no_ci(reports)})")
    held = low >= rule.threshold - 1e-12
    relation = "≥" if held else "<"
    return RuleOutcome(rule.text, run_id, judge, quality, held, figure,
                       f"lower bound {_value_text(rule, low)} {relation} {rule.threshold_text}")


Figures = tuple[float | None, float | None, float | None, int, str | None]


def _correlation_figures(rule: MinRule, reports: _reports.RunReports, run_id: int, judge: str,
                         quality: str) -> Figures:
    """The judge's row of the agreement table ``dialjudge judge`` prints (the run's subset, its item level)."""
    report = reports.agreement
    if report is None:
        raise ConfigError(f"run {run_id}: {quality} is a categorical quality, compared label against label: "
                          f"use --min kappa=… or --min agreement=…, not {rule.statistic}")
    level = _reports.agreement_levels("turn", reports.dataset)[0]
    subset = reports.plan.subset
    for record in report.records:
        if (record["evaluator"] == judge and record["quality"] == quality and record["level"] == level
                and record["subset"] == subset):
            return (record.get(rule.statistic), record.get(f"{rule.statistic}_lo"),
                    record.get(f"{rule.statistic}_hi"), int(record.get("n") or 0), record.get("reason"))
    raise ConfigError(f"run {run_id}: no agreement of judge {judge!r} with {quality} in the table")


def _label_figures(rule: MinRule, reports: _reports.RunReports, run_id: int, judge: str, quality: str) -> Figures:
    """The judge's row of the label table (κ, agreement with the human majority) the CLI prints."""
    report = reports.labels
    config_quality = reports.plan.config.quality
    if report is None or config_quality != quality:
        raise ConfigError(f"run {run_id}: {rule.statistic} compares a judge's labels with the humans' on a label "
                          f"quality the run judged ({config_quality or 'none'}); {quality} is "
                          + ("another quality" if config_quality != quality else "numeric: use spearman, pearson "
                             "or kendall"))
    if report.reason:
        raise ConfigError(f"run {run_id}: no label comparison: {report.reason}")
    for comparison in report.comparisons:
        if comparison.evaluator == judge:
            estimate = comparison.kappa if rule.statistic == "kappa" else comparison.percent_agreement
            why = "; ".join(comparison.reasons) or None
            return _finite(estimate.value), _finite(estimate.low), _finite(estimate.high), comparison.n, why
    raise ConfigError(f"run {run_id}: no label comparison of judge {judge!r}")


def _why_no_ci(reports: _reports.RunReports) -> str:
    """Why a defined statistic has no CI: too few contexts for a bootstrap over them (else: not computed)."""
    judged = _reports.judged_items(reports.plan.config, reports.dataset)
    return too_few_contexts(len({ex.group_id for ex in judged}), "for a CI") or "no bootstrap CI"


def _value_text(rule: MinRule, value: float | None) -> str:
    if value is not None and rule.statistic == "agreement":
        return f"{100 * value:.1f}%"
    return number_text(value) if value is not None else "–"


def _interval(rule: MinRule, low: float | None, high: float | None) -> str:
    if low is None or high is None:
        return ""
    if rule.statistic == "agreement":
        return f"[{100 * low:.1f}%, {100 * high:.1f}%]"
    return interval_text(low, high)


# -- failures ---------------------------------------------------------------------------------------

def _failure_outcome(rule: MaxFailuresRule, judgments: Mapping[str, Any], run_id: int, judge: str,
                     quality: str) -> RuleOutcome:
    total = len(judgments)
    failed = sum(1 for j in judgments.values() if j.failed)
    share = failed / total if total else 0.0
    held = share <= rule.share + 1e-12
    figure = f"{failed} of {total} judgments without a score ({100 * share:.1f}%)"
    return RuleOutcome(rule.text, run_id, judge, quality, held, figure,
                       f"{100 * share:.1f}% {'≤' if held else '>'} {100 * rule.share:g}%")


# -- no worse than a baseline run -------------------------------------------------------------------

def _no_worse_outcomes(store: RunStore, rule: NoWorseThanRule, record: RunRecord, judges: Sequence[str],
                       quality: str, dataset: Dataset, request: GateRequest, app_config: Any) -> list[RuleOutcome]:
    if rule.run_id == record.id:
        raise ConfigError(f"--no-worse-than {rule.run_id}: the run checked is the baseline itself")
    compared = _comparison.compare(store, CompareRequest(rule.run_id, record.id, qualities=(quality,),
                                                         subsets=(record.run_config.subset,),
                                                         paired_boot=request.n_boot, seed=request.seed),
                                   app_config, current=dataset)
    outcomes = []
    for judge in judges:
        if compared.on_pairs:
            tests = [t for t in compared.pair_verdicts if _judge_of(t.name_x, record.id) in (judge, None)]
            outcomes.append(_pair_outcome(rule, tests, record.id, judge, quality))
        else:
            paired = [p for p in compared.paired if _judge_of(p.name_b, record.id) in (judge, None)]
            outcomes.append(_paired_outcome(rule, paired, record.id, judge, quality))
    return outcomes


def _judge_of(name: str, run_id: int) -> str | None:
    """The judge a comparison names on this run's side ("run 7 fa" -> fa; "run 7" -> None: the one judge)."""
    prefix = f"run {run_id}"
    return name[len(prefix) + 1:] if name.startswith(prefix + " ") else None


def _paired_outcome(rule: NoWorseThanRule, paired: Sequence[PairedComparison], run_id: int, judge: str,
                    quality: str) -> RuleOutcome:
    if not paired:
        return RuleOutcome(rule.text, run_id, judge, quality, False, "no paired comparison",
                           f"run {rule.run_id} has no judge to set against {judge!r} (same name, or one judge each)")
    comparison = paired[0]
    symbol = SYMBOLS[rule.coefficient]
    where = f"{comparison.n_items} items, {comparison.n_groups} contexts"
    if not comparison.defined or rule.coefficient not in comparison.deltas:
        return RuleOutcome(rule.text, run_id, judge, quality, True, f"no Δ{symbol} ({where})",
                           f"not shown worse: {comparison.reason or 'the coefficient is undefined'}")
    delta = comparison.deltas[rule.coefficient]
    figure = (f"Δ{symbol} = {number_text(delta.delta, signed=True)} {interval_text(_finite(delta.ci_low), _finite(delta.ci_high))}"
              .rstrip() + f", p = {_p_text(delta.p_value)} ({number_text(delta.b)} vs {number_text(delta.a)} in "
              f"run {rule.run_id}; {where})")
    worse = comparison.decided(rule.coefficient) and delta.delta < 0
    if worse:
        return RuleOutcome(rule.text, run_id, judge, quality, False, figure,
                           f"significantly worse than run {rule.run_id} (randomization test over contexts, "
                           f"p < {1 - comparison.confidence:.2g})")
    why = comparison.too_few_contexts or ("better than the baseline" if comparison.decided(rule.coefficient)
                                          else "no difference shown")
    return RuleOutcome(rule.text, run_id, judge, quality, True, figure, f"not shown worse: {why}")


def _pair_outcome(rule: NoWorseThanRule, tests: Sequence[PairVerdictTest], run_id: int, judge: str,
                  quality: str) -> RuleOutcome:
    if not tests:
        return RuleOutcome(rule.text, run_id, judge, quality, False, "no paired comparison",
                           f"run {rule.run_id} has no judge to set against {judge!r}")
    test = tests[0]
    figure = test.verdict()
    worse = test.decided and (test.agreement.difference or 0) < 0  # x is this run: negative favours the baseline
    return RuleOutcome(rule.text, run_id, judge, quality, not worse, figure,
                       f"significantly worse than run {rule.run_id} (paired permutation test)" if worse
                       else "not shown worse")


def _finite(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def _p_text(p: float) -> str:
    return "–" if not math.isfinite(p) else f"{p:.3g}"


# -- JUnit XML --------------------------------------------------------------------------------------

#: Characters XML 1.0 cannot hold (a judge name or a reason text is the user's; none may break the file).
_NOT_XML = re.compile("[^\u0009\u000a\u000d\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def junit_xml(result: GateResult, *, suite: str = "dialjudge check") -> str:
    """The outcome as JUnit XML: one testsuite, one testcase per rule × judge × run, a failure element with
    the outcome's line where it fails (tests/data/junit.xsd is the schema it is checked against)."""
    root = ET.Element("testsuites", name=_xml(suite), tests=str(len(result.outcomes)),
                      failures=str(len(result.failures)), errors="0", time="0")
    element = ET.SubElement(root, "testsuite", name=_xml(suite), tests=str(len(result.outcomes)),
                            failures=str(len(result.failures)), errors="0", skipped="0", time="0")
    properties = ET.SubElement(element, "properties")
    for name, value in (("runs", ", ".join(map(str, result.run_ids))), ("bootstrap", str(result.n_boot)),
                        ("seed", str(result.seed))):
        ET.SubElement(properties, "property", name=name, value=value)
    for outcome in result.outcomes:
        case = ET.SubElement(element, "testcase", name=_xml(f"{outcome.rule} — {outcome.subject}"),
                             classname=f"dialjudge.check.run{outcome.run_id}", time="0")
        if not outcome.held:
            failure = ET.SubElement(case, "failure", message=_xml(outcome.line), type="dialjudge.gate")
            failure.text = _xml(f"{outcome.figure}\n{outcome.reason}")
        out = ET.SubElement(case, "system-out")
        out.text = _xml(outcome.line)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _xml(text: str) -> str:
    return _NOT_XML.sub("\ufffd", text)
