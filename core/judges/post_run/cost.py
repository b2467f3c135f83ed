"""Cost and latency of a run, per judge: tokens, wall time, throughput and an estimated price.

Tokens count the judgments a model answered *for this run*: an answer reused
from the response cache (or from the source run of a rescoring) cost nothing
now, and is counted apart. Throughput is judgments per second of the run's
wall time (all its sessions), not the inverse of a request's latency: with
four requests in flight a judge can do four items in one request's time. A cost
is only estimated for API judges whose model has a price in the config's
``[prices."MODEL"]`` table; dialjudge ships no prices, since they go stale.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from ...config import ModelPrice
from ..backends import backend_names, paid_per_token
from ..run.config import RunConfig
from ..store.run_store import RunRecord, RunStore
from ..types import Judgment


@dataclass(frozen=True)
class JudgeUsage:
    """One judge column of a run."""

    judge: str
    model: str
    backend: str
    judgments: int
    #: Judgments whose answer came from a model call made for this run.
    asked: int
    #: Judgments answered from the response cache or a source run (no call, no cost).
    reused: int
    prompt_tokens: int
    completion_tokens: int
    #: Sum of the requests' latencies (they overlap when a judge runs requests concurrently).
    request_s: float
    #: Estimated cost in the price table's currency; None: no price (local judge, or model not in the table).
    cost: float | None

    @property
    def priced(self) -> bool:
        return self.cost is not None

    @property
    def local(self) -> bool:
        # A judge of no registered backend (an imported run's) ran elsewhere: not known to be local.
        return self.backend in backend_names() and not paid_per_token(self.backend)

    @property
    def mean_latency_s(self) -> float | None:
        return self.request_s / self.asked if self.asked else None


@dataclass(frozen=True)
class RunUsage:
    run_id: int
    judges: tuple[JudgeUsage, ...]
    #: Seconds the engine spent on the run over all its sessions (0 for a rescored run).
    wall_s: float

    @property
    def judgments(self) -> int:
        return sum(j.judgments for j in self.judges)

    @property
    def asked(self) -> int:
        return sum(j.asked for j in self.judges)

    @property
    def prompt_tokens(self) -> int:
        return sum(j.prompt_tokens for j in self.judges)

    @property
    def completion_tokens(self) -> int:
        return sum(j.completion_tokens for j in self.judges)

    @property
    def cost(self) -> float | None:
        """The priced judges' total; None when no judge has a price."""
        priced = [j.cost for j in self.judges if j.cost is not None]
        return sum(priced) if priced else None

    @property
    def unpriced_models(self) -> list[str]:
        """Models of API judges without a price: the total cost leaves them out."""
        return sorted({j.model for j in self.judges if not j.local and j.cost is None and j.asked})

    def items_per_s(self, judge: str | None = None) -> float | None:
        """Judgments answered per second of the run's wall time (of one judge column, or all)."""
        if self.wall_s <= 0:
            return None
        asked = self.asked if judge is None else next((j.asked for j in self.judges if j.judge == judge), 0)
        return asked / self.wall_s if asked else None


def estimate_cost(prompt_tokens: int, completion_tokens: int, price: ModelPrice) -> float:
    return (prompt_tokens * price.input_per_million + completion_tokens * price.output_per_million) / 1_000_000


def judge_usage(label: str, model: str, backend: str, judgments: Iterable[Judgment],
                prices: Mapping[str, ModelPrice]) -> JudgeUsage:
    """One judge column's usage from its stored judgments."""
    count = asked = prompt = completion = 0
    request_s = 0.0
    for j in judgments:
        count += 1
        if j.cached:
            continue
        asked += 1
        # A reused prefix is still billed by APIs (as prompt tokens); a local model evaluated fewer.
        prompt += j.prompt_tokens
        completion += j.completion_tokens
        request_s += j.latency_s
    price = prices.get(model) if paid_per_token(backend) else None
    cost = estimate_cost(prompt, completion, price) if price is not None else None
    return JudgeUsage(label, model, backend, count, asked, count - asked, prompt, completion, request_s, cost)


def run_usage(store: RunStore, run: int | RunRecord, prices: Mapping[str, ModelPrice]) -> RunUsage:
    """Per judge column: tokens, request time, throughput and estimated cost of a stored run."""
    record = run if isinstance(run, RunRecord) else store.runs.get_run(run)
    config: RunConfig = record.run_config
    if isinstance(record.config.get("batch"), dict):  # answered through a batch engine, at its prices
        prices = {model: price.for_batch() for model, price in prices.items()}
    by_judge: dict[str, list[Judgment]] = {}
    for j in store.judgments.iter_judgments(record.id):
        by_judge.setdefault(j.judge, []).append(j)
    judges = []
    for variant in config.variants():
        judge = variant.judge.config
        judges.append(judge_usage(variant.label, judge.model, judge.backend, by_judge.get(variant.label, []),
                                  prices))
    return RunUsage(record.id, tuple(judges), record.wall_s)


def money_text(cost: float | None) -> str:
    """An estimated cost: enough digits for a cent fraction, no currency (the price table's own)."""
    if cost is None:
        return "–"
    return f"{cost:.4f}" if cost < 1 else f"{cost:,.2f}"


def usage_rows(usage: RunUsage) -> list[tuple[str, ...]]:
    """Rows for a table: judge, model, asked/reused, prompt and completion tokens, mean latency, items/s, cost."""
    rows: list[tuple[str, ...]] = []
    for j in usage.judges:
        latency = j.mean_latency_s
        rate = usage.items_per_s(j.judge)
        cost = "local" if j.local and j.asked else money_text(j.cost)
        rows.append((j.judge, j.model or "–", f"{j.asked}/{j.reused}", str(j.prompt_tokens), str(j.completion_tokens),
                     f"{latency:.2f} s" if latency is not None else "–", f"{rate:.2f}" if rate is not None else "–",
                     cost))
    return rows


USAGE_COLUMNS = ("judge", "model", "asked/reused", "prompt tokens", "completion tokens", "mean latency",
                 "items/s", "est. cost")


def usage_summary(usage: RunUsage) -> str:
    """One line: wall time, throughput, tokens and cost of the whole run."""
    parts = [f"wall {usage.wall_s:.1f} s"]
    rate = usage.items_per_s()
    if rate is not None:
        parts.append(f"{rate:.2f} items/s")
    parts.append(f"{usage.prompt_tokens} prompt + {usage.completion_tokens} completion tokens")
    if usage.cost is not None:
        parts.append(f"est. cost {money_text(usage.cost)}")
    missing = usage.unpriced_models
    if missing:
        parts.append(f"no price for {', '.join(missing)} (add [prices.\"{missing[0]}\"] to the config)")
    reused = sum(j.reused for j in usage.judges)
    if reused:
        parts.append(f"{reused} answers reused (no call)")
    return " · ".join(parts)
