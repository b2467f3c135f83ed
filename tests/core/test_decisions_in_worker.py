"""The paired comparison, discernment and a stored run's label estimates computed in the compute process
(core/api/decisions_in_worker.py) equal the same core functions computed in this process on the same
inputs, as the command line computes them; an error there reaches the caller as itself."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from dialjudge.core.adversarial import discernment_table
from dialjudge.core.api import (
    EngineOptions,
    RunRequest,
    Session,
    alt_test_for_run,
    compare_columns,
    estimate_for_run,
    label_next,
    make_adversarial,
    plan_run,
    save_review,
)
from dialjudge.core.api.compute_worker import close_compute_worker
from dialjudge.core.api.decisions_in_worker import (
    compare_columns_in_worker,
    discernment_in_worker,
    label_estimates_in_worker,
    label_next_in_worker,
)
from dialjudge.core.api.runs import build_backends, execute_run
from dialjudge.core.config import Config, JudgeConfig
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.model import Aggregation, Dataset
from dialjudge.core.stats.baselines import LENGTH_EVALUATOR

QUALITY = "overall"


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", Config())


@pytest.fixture
def session(tmp_path: Path) -> Iterator[Session]:
    opened = Session(Config(judges={"sim": JudgeConfig("sim", "fake", model="sim")}),
                     store_path=tmp_path / "runs.sqlite3")
    yield opened
    close_compute_worker(opened)


def noisy_judge(dataset: Dataset, noise: float, seed: int) -> dict[str, float | None]:
    """The pooled human label of each item plus Gaussian noise (a share of the 1-5 scale), one item unscored."""
    rng = np.random.default_rng(seed)
    scores: dict[str, float | None] = {}
    for ex in dataset.examples:
        human = ex.human(QUALITY, Aggregation.MEAN)
        scores[ex.id] = None if human is None else float(human) + rng.normal(0, 4 * noise)
    scores[dataset.examples[0].id] = None
    return scores


def stored_run(session: Session, dataset: Dataset, noise: float = 0.1) -> int:
    """A stored run whose judge knows the pooled human label up to noise (the CLI's way: in this process)."""
    plan = plan_run(RunRequest(template="likert-1to5", judges=("sim",), mode="logprob", quality=QUALITY,
                               aspect="overall"), dataset, session.config)
    scale = dataset.qualities[QUALITY]
    rng = np.random.default_rng(3)
    noises = {ex.id: rng.normal(0, noise) for ex in dataset.examples}

    def score(item_id: str, prompt: str) -> float:
        unit = scale.normalize(float(dataset.get(item_id).human(QUALITY, Aggregation.MEAN)))  # type: ignore[arg-type]
        return float(np.clip(1 + 4 * (unit + noises[item_id]), 1, 5))

    backends = build_backends(plan.config, make=lambda jc: FakeBackend(name=jc.name, score_fn=score))
    with session.store() as store:
        return execute_run(plan.config, dataset, store, backends, options=EngineOptions(resume=False)).run_id


def test_two_columns_compared_there_equal_the_comparison_here(session: Session, sample: Dataset) -> None:
    columns = {"good": noisy_judge(sample, 0.05, 1), "poor": noisy_judge(sample, 0.4, 2), LENGTH_EVALUATOR: None}
    for name_a, name_b, subset in (("poor", "good", "all"), (LENGTH_EVALUATOR, "good", "all"),
                                   ("good", "poor", "open")):
        pair = {name_a: columns[name_a], name_b: columns[name_b]}
        there = compare_columns_in_worker(session, sample, QUALITY, subset, pair, name_a, name_b, n_boot=300, seed=4)
        here = compare_columns(sample, QUALITY, subset, pair, name_a, name_b, n_boot=300, seed=4)
        assert repr(there) == repr(here)  # repr: NaN equals NaN
        assert (there.name_a, there.name_b) == (name_a, name_b)
    good_over_poor = compare_columns_in_worker(session, sample, QUALITY, "all", columns, "poor", "good", n_boot=300,
                                               seed=4)
    spearman = good_over_poor.deltas["spearman"]
    assert spearman.b > spearman.a  # the less noisy judge is the better one


def test_discernment_there_equals_the_table_here(session: Session, sample: Dataset, tmp_path: Path) -> None:
    adversarial = make_adversarial(sample, tmp_path / "adv.jsonl", per_item=2, n=20, seed=1).dataset
    rng = np.random.default_rng(5)
    # A judge that scores originals above their perturbations, and a metric that never scores an original.
    judge = {ex.id: float(rng.uniform(0, 0.6) if ex.is_adversarial else rng.uniform(0.4, 1.0))
             for ex in adversarial.examples}
    metric = {ex.id: float(rng.uniform(0, 1)) for ex in adversarial.examples if ex.is_adversarial}
    scores = {"judge": judge, "metric": metric, "empty": {}}
    there = discernment_in_worker(session, adversarial, scores)
    here = discernment_table(adversarial, scores)
    assert repr(there) == repr(here)
    assert [row.evaluator for row in there] == ["judge", "metric", "empty"]
    assert type(there) is type(here)


def test_a_runs_label_estimates_there_equal_the_command_lines(session: Session, sample: Dataset) -> None:
    run_id = stored_run(session, sample)
    alt_tests = alt_test_for_run(session, run_id, dataset=sample, app_config=session.config)
    estimates = estimate_for_run(session, run_id, labelled=20, seed=7, dataset=sample, app_config=session.config)
    assert alt_tests and estimates
    # With the open dataset (already in the process), and with none: the process opens the run's own.
    for current in (sample, None):
        found = label_estimates_in_worker(session, run_id, labelled=20, seed=7, current=current)
        assert found.alt_test_problem is None and found.estimate_problem is None
        assert repr(found.alt_tests) == repr(alt_tests)
        assert repr(found.estimates) == repr(estimates)
    # A part that does not apply says why, in the command line's words; the other part still comes.
    found = label_estimates_in_worker(session, run_id, labelled=500, seed=7, current=sample)
    with pytest.raises(DialjudgeError) as refused:
        estimate_for_run(session, run_id, labelled=500, seed=7, dataset=sample, app_config=session.config)
    assert found.estimate_problem == str(refused.value) and not found.estimates
    assert repr(found.alt_tests) == repr(alt_tests)


def test_a_runs_label_next_plan_there_equals_the_command_lines(session: Session, sample: Dataset) -> None:
    run_id = stored_run(session, sample)
    plan_here = label_next(session, run_id, budget=12, seed=2, dataset=sample, app_config=session.config)[0]
    # No own ratings yet: the plan, and why there is no estimate.
    found = label_next_in_worker(session, run_id, budget=12, seed=2, current=sample)
    assert repr(found.plan) == repr(plan_here) and found.estimate is None
    with pytest.raises(DialjudgeError) as refused:
        estimate_for_run(session, run_id, judges=[plan_here.judge], from_reviews=True, active_budget=12, seed=2,
                         dataset=sample, app_config=session.config)
    assert found.estimate_problem == str(refused.value)

    # The reviewers rate the plan's items (stored by this process): the process reads them from the store.
    for item in plan_here.to_label():
        human = sample.get(item).human(QUALITY, Aggregation.MEAN)
        save_review(session, run_id, item, "fine", own_rating=float(round(float(human))))  # type: ignore[arg-type]
    (estimate_here,) = estimate_for_run(session, run_id, judges=[plan_here.judge], from_reviews=True,
                                        active_budget=12, seed=2, dataset=sample, app_config=session.config)
    found = label_next_in_worker(session, run_id, budget=12, seed=2, judge=plan_here.judge, current=None)
    assert found.estimate_problem is None and found.estimate is not None and found.estimate.active is not None
    assert repr(found.estimate) == repr(estimate_here)
    assert repr(found.plan) == repr(plan_here)


def test_an_error_there_reaches_the_caller_as_itself(session: Session, sample: Dataset) -> None:
    with pytest.raises(DialjudgeError) as here:
        label_next(session, 404, budget=5, dataset=sample, app_config=session.config)
    with pytest.raises(type(here.value)) as there:
        label_next_in_worker(session, 404, budget=5, seed=0, current=sample)
    assert str(there.value) == str(here.value)
