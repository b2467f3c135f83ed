"""Cost and latency: the price table in the config, the arithmetic, and a stored run's usage."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from dialjudge.core.config import JudgeConfig, ModelPrice, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.post_run.cost import (
    estimate_cost,
    judge_usage,
    money_text,
    run_usage,
    usage_rows,
    usage_summary,
)
from dialjudge.core.judges.post_run.rescore import RescoreSettings, rescore_run
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import Judgment, ScoringMode

PRICES = {"gpt-4o-mini": ModelPrice(input_per_million=0.15, output_per_million=0.6)}


# -- the price table -----------------------------------------------------------------------


def test_prices_are_read_per_model() -> None:
    config = parse_config({"prices": {"gpt-4o-mini": {"input_per_million": 0.15, "output_per_million": 0.6},
                                      "local-free": {"input_per_million": 0, "output_per_million": 0}}})
    assert config.prices == {"gpt-4o-mini": ModelPrice(0.15, 0.6), "local-free": ModelPrice(0.0, 0.0)}
    assert parse_config({}).prices == {}  # no built-in prices


@pytest.mark.parametrize(("prices", "message"), [
    ({"m": {"input_per_million": 0.15}}, r'prices\."m"\.output_per_million is required'),
    ({"m": {"input_per_million": -1, "output_per_million": 1}},
     r'prices\."m"\.input_per_million must be 0 or more, not -1'),
    ({"m": {"input_per_million": "cheap", "output_per_million": 1}},
     r'prices\."m"\.input_per_million must be a number, not str'),
    ({"m": {"input_per_million": 1, "output_per_million": 1, "currency": "EUR"}},
     r'unknown key prices\."m"\.currency'),
    ({"m": 0.15}, r'prices\."m" must be a table'),
    ({"m": {"input_per_million": True, "output_per_million": 1}}, "not a boolean"),
])
def test_price_mistakes_name_the_key(prices: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_config({"prices": prices})


def test_prices_must_be_a_table() -> None:
    with pytest.raises(ConfigError, match=r"\[prices\] must be a table"):
        parse_config({"prices": 3})


# -- arithmetic ------------------------------------------------------------------------------


def test_cost_by_hand() -> None:
    # 12,000 prompt tokens at 0.15 per million + 3,000 completion tokens at 0.60 per million
    assert estimate_cost(12_000, 3_000, PRICES["gpt-4o-mini"]) == pytest.approx(0.0018 + 0.0018)
    assert money_text(0.0036) == "0.0036" and money_text(1234.5) == "1,234.50" and money_text(None) == "–"


def judgment(item: str, *, prompt: int, completion: int, latency: float, cached: bool = False) -> Judgment:
    return Judgment(item_id=item, judge="api", mode=ScoringMode.GENERATE, prompt_hash="h", raw_output="4",
                    score=4.0, normalized=0.75, latency_s=latency, prompt_tokens=prompt,
                    completion_tokens=completion, cached=cached)


def test_reused_answers_cost_nothing_and_local_judges_have_no_price() -> None:
    rows = [judgment("a", prompt=1000, completion=10, latency=0.5),
            judgment("b", prompt=3000, completion=30, latency=1.5),
            judgment("c", prompt=9999, completion=99, latency=9.0, cached=True)]
    usage = judge_usage("api", "gpt-4o-mini", "openai", rows, PRICES)
    assert (usage.judgments, usage.asked, usage.reused) == (3, 2, 1)
    assert (usage.prompt_tokens, usage.completion_tokens) == (4000, 40)
    assert usage.cost == pytest.approx((4000 * 0.15 + 40 * 0.6) / 1e6)
    assert usage.mean_latency_s == pytest.approx(1.0)
    assert judge_usage("api", "other-model", "openai", rows, PRICES).cost is None
    # A local model named like a priced one is still free.
    assert judge_usage("api", "gpt-4o-mini", "llama", rows, PRICES).cost is None


# -- a stored run ----------------------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = RunStore(tmp_path / "runs.sqlite3")
    yield s
    s.close()


def test_a_runs_usage_adds_up_its_judgments_and_its_wall_time(store: RunStore) -> None:
    dataset = open_dataset("sample")
    api = JudgeConfig(name="api", backend="openai", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
    local = JudgeConfig(name="local", backend="fake", model="fake-model")
    config = RunConfig.build(dataset, get_template("likert-1to5"), [api, local], aspect="overall",
                             quality="overall", mode=ScoringMode.GENERATE, limit=4)
    ticks = iter(range(0, 10_000, 2))  # every clock reading is 2 s after the last
    backends = {"api": FakeBackend(name="api"), "local": FakeBackend(name="local")}
    summary = asyncio.run(RunEngine(config, dataset, backends, store,
                                    EngineOptions(clock=lambda: float(next(ticks)))).run())
    record = store.runs.get_run(summary.run_id)
    assert 0 < record.wall_s <= summary.elapsed_s  # the clock read when the run stopped

    usage = run_usage(store, record, PRICES)
    by_judge = {j.judge: j for j in usage.judges}
    stored = list(store.judgments.iter_judgments(record.id))
    api_prompt = sum(j.prompt_tokens for j in stored if j.judge == "api")
    api_completion = sum(j.completion_tokens for j in stored if j.judge == "api")
    assert api_prompt > 0 and api_completion > 0
    assert by_judge["api"].prompt_tokens == api_prompt
    assert by_judge["api"].cost == pytest.approx((api_prompt * 0.15 + api_completion * 0.6) / 1e6)
    assert by_judge["local"].cost is None and usage.cost == by_judge["api"].cost
    assert usage.items_per_s() == pytest.approx(8 / record.wall_s)  # throughput: judgments / wall time
    assert usage.items_per_s("api") == pytest.approx(4 / record.wall_s)
    assert [row[0] for row in usage_rows(usage)] == ["api", "local"]
    assert usage_rows(usage)[1][-1] == "local"
    line = usage_summary(usage)
    assert "items/s" in line and "est. cost" in line

    unpriced = run_usage(store, record, {})
    assert unpriced.cost is None and unpriced.unpriced_models == ["gpt-4o-mini"]
    assert 'add [prices."gpt-4o-mini"]' in usage_summary(unpriced)


def test_a_rescored_run_costs_nothing(store: RunStore) -> None:
    dataset = open_dataset("sample")
    api = JudgeConfig(name="api", backend="openai", model="gpt-4o-mini", base_url="http://127.0.0.1:9/v1")
    config = RunConfig.build(dataset, get_template("likert-1to5"), [api], aspect="overall", quality="overall",
                             mode=ScoringMode.LOGPROB, top_k=3, limit=3)
    source = asyncio.run(RunEngine(config, dataset, {"api": FakeBackend(name="api")}, store).run()).run_id
    rescored = rescore_run(store, source, dataset, RescoreSettings(top_k=1))
    usage = run_usage(store, rescored.run_id, PRICES)
    assert usage.asked == 0 and usage.prompt_tokens == 0 and usage.wall_s == 0
    assert usage.judges[0].cost == 0 and usage.items_per_s() is None
    assert "3 answers reused" in usage_summary(usage)
