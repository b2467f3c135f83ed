"""Planning a judge run from what a user typed, running it on fake judges, and reading scores back."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from dialjudge.core.api import EngineOptions
from dialjudge.core.api.events import RunEvent
from dialjudge.core.api.runs import (
    build_backends,
    execute_run,
)
from dialjudge.core.config import Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError, TemplateError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.model import BINARY_01, Dataset, Example, Rating, Scale, ScaleKind, Turn, is_label_quality
from dialjudge.core.planning import infer_quality, plan_run
from dialjudge.core.run_columns import POOL, run_scores


class EventLog(list[RunEvent]):
    """A RunDisplay that keeps every event."""

    def on_event(self, event: RunEvent) -> None:
        self.append(event)


#: Two fake judges that answer differently (the fake's score hashes the sampling seed), one
#: of which writes unparseable text on every 4th request.
FAKE_JUDGES = {"judges": {
    "fa": {"backend": "fake", "model": "fa-model"},
    "fb": {"backend": "fake", "model": "fb-model", "seed": 1, "options": {"garbage_every": 4}},
}}


@pytest.fixture
def config() -> Config:
    return parse_config(FAKE_JUDGES)


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", Config())


@pytest.fixture(scope="module")
def incar() -> Dataset:
    return open_dataset("incar-kpi", Config())


@pytest.mark.parametrize(("options", "expected"), [
    ({"template": "adv-0to1", "aspect": "coherence", "mode": "yesno"},
     r"template 'adv-0to1' does not support mode 'yesno' \(it supports: generate, logprob\)"),
    ({"template": "adv-0to1"}, r"template 'adv-0to1' needs an aspect: fluency, coherence, relevance, consistency"),
    ({"template": "adv-0to1", "aspect": "politeness"}, r"template 'adv-0to1' has no aspect 'politeness'"),
    ({"template": "inca-kpi"}, r"template 'inca-kpi' needs a KPI: follow-up, implicit-understanding, harmful-input"),
    ({"template": "inca-kpi", "kpi": "speed"}, r"template 'inca-kpi' has no KPI 'speed'"),
    ({"template": "adv-0to1", "aspect": "coherence", "personas": ["pirate"]},
     r"no persona named 'pirate' \(personas: .*brand-ambassador"),
    ({"template": "adv-0to1", "aspect": "coherence", "quality": "humour"},
     r"sample has no quality 'humour' \(qualities: coherence, relevance"),
    ({"template": "adv-0to1", "aspect": "coherence", "judges": ["gpt9"]}, r"no judge named 'gpt9'"),
    ({"template": "adv-0to1", "aspect": "coherence", "fewshot": "nearest:3"}, r"few-shot spec 'nearest:3'"),
    ({"template": "adv-0to1", "aspect": "coherence", "subset": "tag"}, r"unknown subset 'tag'"),
])
def test_plan_run_refuses_what_cannot_run(sample: Dataset, config: Config, options: dict, expected: str) -> None:
    options = {"judges": ["fa"], **options}
    with pytest.raises(ConfigError, match=expected):
        plan_run(sample, config, **options)


def test_unknown_template_is_a_template_error(sample: Dataset, config: Config) -> None:
    with pytest.raises(TemplateError, match=r"no template named 'adv-1to0' \(known: .*adv-0to1"):
        plan_run(sample, config, template="adv-1to0", judges=["fa"], aspect="coherence")


def test_plan_for_an_aspect_template(sample: Dataset, config: Config) -> None:
    plan = plan_run(sample, config, template="adv-0to1", judges=["fa", "fb"], aspect="coherent",
                    personas=["none", "strict-fact-checker"], fewshot="random:2", limit=5, name="try")
    run = plan.config
    assert plan.quality == "coherence"  # from the aspect, reached through its alias
    assert run.aspect == "coherence"
    assert plan.subset == "all" and run.subset == "all"
    assert run.template == "adv-0to1" and "Rate the response from {aspect}" in run.template_text
    assert run.mode is ScoringMode.LOGPROB and run.top_k == 0  # the default where the template supports it
    assert run.limit == 5 and run.name == "try"
    assert [j.name for j in run.judges] == ["fa", "fb"]
    assert run.judges[1].config.sampling.seed == 1
    assert [v.label for v in run.variants()] == ["fa", "fa@strict-fact-checker", "fb", "fb@strict-fact-checker"]
    assert run.fewshot.spec == "random:2"
    assert run.dataset == "sample" and run.dataset_path
    assert len(run.select_items(sample)) == 5


def test_kpi_run_defaults_to_the_kpi_items(incar: Dataset, config: Config) -> None:
    plan = plan_run(incar, config, template="inca-kpi", judges=["fa"], kpi="harmful-input")
    assert plan.subset == "tag:kpi:harmful-input" == plan.config.subset
    assert plan.quality == "harmful-input"
    items = plan.config.select_items(incar)
    assert len(items) == 15 and all("kpi:harmful-input" in ex.tags for ex in items)

    explicit = plan_run(incar, config, template="inca-kpi", judges=["fa"], kpi="harmful-input", subset="all")
    assert explicit.subset == "all" and len(explicit.config.select_items(incar)) == len(incar)


def test_kpi_spelled_differently_picks_the_same_items_and_quality(incar: Dataset, config: Config) -> None:
    plan = plan_run(incar, config, template="inca-kpi", judges=["fa"], kpi="Harmful_Input")
    assert plan.config.kpi == "harmful-input"
    assert plan.subset == "tag:kpi:harmful-input"
    assert plan.quality == "harmful-input"


def test_infer_quality_prefers_kpi_then_aspect_then_overall() -> None:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    dataset = Dataset("q", [Example("e", "g", (Turn("A", "hi"),), "yo", ratings={
        "Fluent": Rating((3,), scale), "Overall": Rating((4,), scale), "follow-up": Rating((1,), BINARY_01)})])
    assert infer_quality(dataset, aspect="fluent", kpi=None) == "Fluent"  # case-insensitive
    assert infer_quality(dataset, aspect="fluent", kpi="follow-up") == "follow-up"
    assert infer_quality(dataset, aspect="coherence", kpi=None) == "Overall"
    first_only = Dataset("f", [Example("e", "g", (), "yo", ratings={"Fluent": Rating((3,), scale)})])
    assert infer_quality(first_only, aspect=None, kpi=None) == "Fluent"
    assert infer_quality(Dataset("empty", []), aspect=None, kpi=None) is None


def test_is_label_quality() -> None:
    assert is_label_quality(BINARY_01)
    assert is_label_quality(Scale(ScaleKind.CATEGORICAL, labels=("a", "b")))
    assert not is_label_quality(Scale(ScaleKind.ORDINAL, 1, 5))
    assert not is_label_quality(None)


def test_build_backends_makes_fake_judges_from_the_config(sample: Dataset, config: Config) -> None:
    plan = plan_run(sample, config, template="adv-0to1", judges=["fa", "fb"], aspect="coherence")
    backends = build_backends(plan.config)
    assert set(backends) == {"fa", "fb"}
    assert all(isinstance(b, FakeBackend) for b in backends.values())
    assert backends["fb"].garbage_every == 4 and backends["fa"].garbage_every == 0
    assert backends["fa"].identity == "fake:fa:fa-model"
    made = build_backends(plan.config, make=lambda judge: FakeBackend(name=f"custom-{judge.name}"))
    assert made["fa"].name == "custom-fa"


def test_run_scores_with_a_pool_of_two_judges(tmp_path: Path, sample: Dataset, config: Config) -> None:
    plan = plan_run(sample, config, template="adv-0to1", judges=["fa", "fb"], aspect="coherence", limit=12)
    store = RunStore(tmp_path / "runs.sqlite3")
    summary = execute_run(plan.config, sample, store, build_backends(plan.config), options=EngineOptions(close_backends=True))
    assert summary.status == "finished" and summary.done == 24

    scores, failures = run_scores(store, summary.run_id)
    assert set(scores) == {"fa", "fb", POOL}
    items = [ex.id for ex in plan.config.select_items(sample)]
    assert set(scores["fa"]) == set(items) == set(scores[POOL])
    assert all(v is not None and 0.0 <= v <= 1.0 for v in scores["fa"].values())
    missing_b = [i for i in items if scores["fb"][i] is None]
    assert len(missing_b) == 3  # every 4th of 12 requests was garbage
    assert failures == {"fa": 0, "fb": 3, POOL: 0}
    assert scores["fa"] != scores["fb"]
    for item in items:
        present = [v for v in (scores["fa"][item], scores["fb"][item]) if v is not None]
        assert math.isclose(scores[POOL][item], sum(present) / len(present))

    without_pool, _ = run_scores(store, summary.run_id, with_pool=False)
    assert set(without_pool) == {"fa", "fb"}


def test_a_single_judge_has_no_pool(tmp_path: Path, sample: Dataset, config: Config) -> None:
    plan = plan_run(sample, config, template="adv-0to1", judges=["fa"], aspect="fluency", limit=3)
    store = RunStore(tmp_path / "runs.sqlite3")
    events = EventLog()
    summary = execute_run(plan.config, sample, store, build_backends(plan.config), display=events)
    scores, failures = run_scores(store, summary.run_id)
    assert list(scores) == ["fa"] and failures == {"fa": 0}
    assert len(scores["fa"]) == 3
    assert events  # the subscriber heard the run


def test_a_quality_that_names_an_aspect_supplies_it(sample: Dataset, config: Config) -> None:
    plan = plan_run(sample, config, template="likert-1to5", judges=["fa"], quality="Consistency")
    assert plan.quality == "consistency" and plan.config.aspect == "consistency"
    with pytest.raises(ConfigError, match="needs an aspect"):
        plan_run(sample, config, template="likert-1to5", judges=["fa"], quality="no-such-aspect")
