"""core.api decides which reports follow a run, and plans every option of a request itself."""

from __future__ import annotations

import dataclasses

import pytest

from dialjudge.core.api import (
    RunRequest,
    plan_run,
    plan_runs,
    reports_after_run,
)
from dialjudge.core.api.reports import Report
from dialjudge.core.api.types import (
    CONTRADICTS,
    AnswerConstraint,
    ScoringMode,
)
from dialjudge.core.config import Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError
from dialjudge.core.model import Dataset

CONFIG = {"judges": {"fa": {"backend": "fake", "model": "fa"}, "fb": {"backend": "fake", "model": "fb", "seed": 1}}}


@pytest.fixture(scope="module")
def config() -> Config:
    return parse_config(CONFIG)


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", Config(), remember=False)


@pytest.fixture(scope="module")
def incar() -> Dataset:
    return open_dataset("incar-kpi", Config(), remember=False)


def test_a_graded_quality_gets_the_agreement_table_and_the_diagnostics(sample: Dataset, config: Config) -> None:
    one = plan_run(RunRequest("likert-1to5", judges=("fa",), aspect="overall"), sample, config)
    assert reports_after_run(one.config, sample) == (Report.AGREEMENT, Report.LENGTH_AND_CERTAINTY)
    two = plan_run(RunRequest("likert-1to5", judges=("fa", "fb"), aspect="overall", repeats=2), sample, config)
    assert reports_after_run(two.config, sample, runs=3) == (
        Report.AGREEMENT, Report.INTER_JUDGE, Report.LENGTH_AND_CERTAINTY, Report.STABILITY, Report.DRAW_SPREAD)
    # A written file holds the tables only.
    assert reports_after_run(two.config, sample, runs=3, for_file=True) == (Report.AGREEMENT,)


def test_a_binary_quality_is_compared_both_ways_unless_it_means_contradiction(incar: Dataset, config: Config) -> None:
    plan = plan_run(RunRequest("inca-kpi", judges=("fa", "fb"), kpi="harmful-input"), incar, config)
    assert reports_after_run(plan.config, incar) == (Report.AGREEMENT, Report.LABEL_AGREEMENT, Report.LABELS)
    assert reports_after_run(plan.config, incar, for_file=True) == (Report.AGREEMENT, Report.LABELS)
    contradicts = dataclasses.replace(plan.config, quality=CONTRADICTS)
    assert Report.LABELS not in reports_after_run(contradicts, incar)


def test_a_pairwise_run_gets_the_pairwise_report_only(sample: Dataset, config: Config) -> None:
    plan = plan_run(RunRequest("pairwise-plain", judges=("fa",), aspect="overall", pairs="all"), sample, config)
    assert plan.config.pairs is not None
    assert reports_after_run(plan.config, sample) == (Report.PAIRWISE,)


def test_the_constraint_is_planned_not_patched(sample: Dataset, config: Config) -> None:
    plan = plan_run(RunRequest("likert-1to5", judges=("fa",), aspect="overall", constrain="answer"), sample, config)
    # Asking for a constraint without a mode runs generate mode, the mode the constraint holds.
    assert plan.config.constrain is AnswerConstraint.ANSWER and plan.config.mode is ScoringMode.GENERATE
    with pytest.raises(ConfigError, match="constrain must be one of"):
        plan_run(RunRequest("likert-1to5", judges=("fa",), aspect="overall", constrain="tight"), sample, config)


def test_requests_are_refused_before_anything_is_judged(sample: Dataset, config: Config) -> None:
    with pytest.raises(ConfigError, match="holds no items"):
        plan_run(RunRequest("likert-1to5", judges=("fa",), aspect="overall", subset="system:nobody"), sample, config)
    with pytest.raises(ConfigError, match="random:K"):
        plan_runs(RunRequest("likert-1to5", judges=("fa",), aspect="overall", fewshot="bm25-context:2",
                             fewshot_draws=2), sample, config)
    draws = plan_runs(RunRequest("likert-1to5", judges=("fa",), aspect="overall", fewshot="random:2",
                                 fewshot_draws=3), sample, config)
    assert [p.config.fewshot.spec for p in draws] == ["random:2", "random:2@1", "random:2@2"]
