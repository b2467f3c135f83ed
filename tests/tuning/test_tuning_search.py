"""The tuning search: split by context, successive halving's bookkeeping, reuse on a rerun,
the held-out report's numbers, and the space file's validation."""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path

import pytest
from scipy import stats

from dialjudge.core.config import parse_config
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.loaders import load_dataset
from dialjudge.core.model import Dataset
from dialjudge.core.stats.rater_pairs import MIN_SHARED_ITEMS
from dialjudge.core.tuning.halving import SuccessiveHalving
from dialjudge.core.tuning.search import TuningSearch
from dialjudge.core.tuning.space import parse_space
from dialjudge.core.tuning.split import split_by_context

N_CONTEXTS = 10
PER_CONTEXT = 3


def _dataset(tmp_path: Path) -> Dataset:
    """10 contexts x 3 candidates, every candidate text unique ("resp-<context>-<i>"), rated 1-5."""
    lines = [json.dumps({"dialjudge_dataset": 1, "name": "tiny-tune"})]
    for c in range(N_CONTEXTS):
        for i in range(PER_CONTEXT):
            lines.append(json.dumps({
                "id": f"c{c}-r{i}", "group_id": f"c{c}",
                "context": [{"speaker": "A", "text": f"opening line of context {c}"}],
                "candidate": f"resp-{c}-{i} answer", "ratings": {"overall": {
                    "scores": [1 + (c + i) % 5, 1 + (c * i) % 5], "scale": {"kind": "ordinal", "min": 1, "max": 5}}},
            }))
    path = tmp_path / "tiny.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_dataset(path)


def _config() -> object:
    return parse_config({"judges": {"fa": {"backend": "fake", "model": "fake-a"}}})


SPACE = """
[search]
quality = "overall"
first_sample = {first}
finalists = {finalists}
heldout_fraction = 0.3
n_boot = 200
[defaults]
template = "likert-1to5"
aspect = "overall"
judge = "fa"
mode = "logprob"
[[variant]]
name = "plain"
[[variant]]
name = "calibrated"
persona = "calibrated-annotator"
[[variant]]
name = "bm25"
fewshot = "bm25-both:2"
"""

EXTRA_VARIANT = """
[[variant]]
name = "strict"
persona = "strict-fact-checker"
"""


def _search(tmp_path: Path, text: str, backend: FakeBackend, store: RunStore) -> TuningSearch:
    return TuningSearch(parse_space(text), _dataset(tmp_path), _config(), store,  # type: ignore[arg-type]
                        make_backend=lambda _config: backend)


# -- the split -------------------------------------------------------------------------------------

def test_split_puts_every_context_on_one_side_only(tmp_path: Path) -> None:
    dataset = _dataset(tmp_path)
    split = split_by_context(dataset.examples, heldout_fraction=0.3, seed=4)
    assert not set(split.tuning) & set(split.heldout)
    assert set(split.tuning) | set(split.heldout) == {f"c{c}" for c in range(N_CONTEXTS)}
    assert len(split.heldout) == 3
    tuning_groups = {ex.group_id for ex in split.tuning_items(dataset)}
    heldout_groups = {ex.group_id for ex in split.heldout_items(dataset)}
    assert not tuning_groups & heldout_groups
    assert len(split.tuning_items(dataset)) + len(split.heldout_items(dataset)) == N_CONTEXTS * PER_CONTEXT
    # seeded: the same seed gives the same split, and the split survives a round trip
    assert split_by_context(list(reversed(dataset.examples)), heldout_fraction=0.3, seed=4) == split
    assert split.from_dict(json.loads(json.dumps(split.to_dict()))) == split
    seeds = {split_by_context(dataset.examples, heldout_fraction=0.3, seed=s).heldout for s in range(6)}
    assert len(seeds) > 1


def test_fewshot_examples_come_from_the_tuning_part_only(tmp_path: Path) -> None:
    backend = FakeBackend(name="fa")
    with RunStore(tmp_path / "runs.sqlite3") as store:
        search = _search(tmp_path, SPACE.format(first=7, finalists=3), backend, store)
        asyncio.run(search.run())
    tuning = set(search.split.tuning)
    heldout_items = {ex.id for ex in search.split.heldout_items(search.dataset)}
    shown_on_heldout = 0
    for request in backend.requests:
        text = "\n".join(m.content for m in request.prompt.messages)
        item_context = request.item_id.split("-")[0]
        for context, _i in re.findall(r"resp-(\d+)-(\d+)", text):
            if f"c{context}" == item_context:
                continue  # the item's own candidate
            assert f"c{context}" in tuning, f"{request.item_id} was shown an example from held-out context c{context}"
            shown_on_heldout += request.item_id in heldout_items
    assert shown_on_heldout > 0  # the held-out items did get (tuning) examples


# -- successive halving ----------------------------------------------------------------------------

def test_halving_keeps_the_better_half_on_a_doubled_sample() -> None:
    names = [f"v{i}" for i in range(8)]
    halving = SuccessiveHalving(names, [3] * 20, first_sample=2, eta=2)
    r0 = halving.next_round()
    assert r0 is not None and r0.variants == tuple(names) and (r0.n_contexts, r0.n_items, r0.cost) == (2, 6, 48)
    halving.record({n: i / 10 for i, n in enumerate(names)})  # v7 best
    r1 = halving.next_round()
    assert r1 is not None and r1.variants == ("v7", "v6", "v5", "v4")
    assert (r1.n_contexts, r1.n_items, r1.cost) == (4, 12, 4 * 6)  # only the 2 new contexts cost
    halving.record({"v7": 0.1, "v6": None, "v5": 0.3, "v4": 0.2})
    r2 = halving.next_round()
    assert r2 is not None and r2.variants == ("v5", "v4") and (r2.n_contexts, r2.cost) == (8, 2 * 12)
    halving.record({"v5": 0.1, "v4": 0.4})
    assert halving.next_round() is None and halving.stop_reason == "one variant left"
    assert halving.spent == 48 + 24 + 24
    assert [s.variant for s in halving.leaderboard()] == ["v4", "v5", "v7", "v6", "v3", "v2", "v1", "v0"]
    assert [s.round for s in halving.leaderboard()] == [2, 2, 1, 1, 0, 0, 0, 0]


def test_halving_shrinks_a_round_to_the_budget_and_then_stops() -> None:
    halving = SuccessiveHalving(["a", "b", "c", "d"], [2] * 10, first_sample=3, eta=2, budget=30)
    r0 = halving.next_round()
    assert r0 is not None and r0.n_contexts == 3 and r0.cost == 24
    halving.record({"a": 0.5, "b": 0.4, "c": 0.3, "d": 0.2})
    r1 = halving.next_round()  # wants 6 contexts (2 x 3 new x 2 items = 12), can afford 6 judgments: 1 context
    assert r1 is not None and r1.variants == ("a", "b") and r1.n_contexts == 4 and r1.cost == 4
    halving.record({"a": 0.1, "b": 0.2})
    assert halving.next_round() is None and halving.stop_reason == "one variant left"
    assert halving.spent == 28 <= 30
    wide = SuccessiveHalving(list("abcdef"), [2] * 10, first_sample=1, eta=2, budget=16)
    assert wide.next_round() is not None and wide.spent == 12
    wide.record(dict.fromkeys("abcdef", 0.1))
    assert wide.next_round() is None and wide.stop_reason == "the budget is spent"  # 3 x 1 context = 6 > 4
    with pytest.raises(ConfigError, match="budget of 5 judgments"):
        SuccessiveHalving(["a", "b", "c"], [2] * 4, first_sample=2, budget=5).next_round()


def test_halving_stops_when_the_sample_holds_every_context() -> None:
    halving = SuccessiveHalving(["a", "b", "c", "d", "e"], [1] * 3, first_sample=2, eta=2)
    assert halving.next_round() is not None
    halving.record(dict.fromkeys("abcde", 0.0))
    r1 = halving.next_round()
    assert r1 is not None and r1.n_contexts == 3 and len(r1.variants) == 3
    halving.record({v: 0.0 for v in r1.variants})
    assert halving.next_round() is None and "every tuning context" in halving.stop_reason


# -- the search through the engine -----------------------------------------------------------------

def test_rerun_after_adding_a_variant_judges_only_that_variant(tmp_path: Path) -> None:
    backend = FakeBackend(name="fa")
    store_path = tmp_path / "runs.sqlite3"
    three = SPACE.format(first=99, finalists=4)  # one round on every tuning context; all judged on held-out
    with RunStore(store_path) as store:
        first = asyncio.run(_search(tmp_path, three, backend, store).run())
    n_items = N_CONTEXTS * PER_CONTEXT
    assert len(backend.requests) == 3 * n_items and first.model_calls == 3 * n_items
    backend.requests.clear()
    with RunStore(store_path) as store:
        again = asyncio.run(_search(tmp_path, three, backend, store).run())
    assert backend.requests == [] and again.model_calls == 0 and again.spent == first.spent
    assert again.run_ids == first.run_ids  # the same stored runs, not copies
    with RunStore(store_path) as store:
        four = asyncio.run(_search(tmp_path, three + EXTRA_VARIANT, backend, store).run())
    assert len(backend.requests) == n_items  # the new variant, on tuning and held-out items, and nothing else
    assert all("strict" in "\n".join(m.content for m in r.prompt.messages).lower() for r in backend.requests)
    assert four.model_calls == n_items and len(four.leaderboard) == 4
    assert [s.score for s in four.leaderboard if s.variant != "strict"] == \
        [s.score for s in first.leaderboard]


def test_heldout_numbers_match_scipy_and_the_winner_is_chosen_on_tuning(tmp_path: Path) -> None:
    backend = FakeBackend(name="fa")
    with RunStore(tmp_path / "runs.sqlite3") as store:
        search = _search(tmp_path, SPACE.format(first=2, finalists=1), backend, store)
        report = asyncio.run(search.run())
        dataset = search.dataset
        human = {ex.id: sum(ex.ratings["overall"].scores) / 2 for ex in dataset.examples}
        heldout_ids = [ex.id for ex in search.split.heldout_items(dataset)]
        assert report.winner == report.leaderboard[0].variant
        for result in report.heldout:
            judgments = next(iter(store.judgments.load_judgments(result.run_id).values()))
            assert sorted(judgments) == sorted(heldout_ids)
            x = [judgments[i].normalized for i in heldout_ids]
            y = [human[i] for i in heldout_ids]
            assert result.heldout == pytest.approx(stats.spearmanr(x, y).statistic)
            assert result.gap == pytest.approx(result.tuning - result.heldout)
            low, high = result.ci
            if result.correlation.ci_reason:  # too few held-out contexts for a CI: none is shown, and why
                assert low is None and high is None and result.correlation.ci_reason in result.heldout_text()
            else:
                assert low is not None and high is not None and low < high
    if report.winner != report.baseline:
        assert report.paired is not None
        d = report.paired.delta("spearman")
        assert d.delta == pytest.approx(report.heldout_of(report.winner).heldout
                                        - report.heldout_of(report.baseline).heldout)
    assert {h.variant for h in report.heldout} == {report.winner, report.baseline}
    # The human ceiling on exactly the held-out items the finalists are compared on: with two
    # annotators, leave-one-out is one annotator against the other.
    assert report.ceiling is not None and report.ceiling.n_items == len(heldout_ids)
    # Fewer held-out items than two annotators must share (core.stats.rater_pairs): no ceiling, and why.
    assert len(heldout_ids) < MIN_SHARED_ITEMS and math.isnan(report.ceiling.spearman)
    assert f"no two annotators share {MIN_SHARED_ITEMS} items" in " ".join(report.ceiling.reasons)
    assert f"n = {len(heldout_ids)} items" in report.ceiling_text()
    spent = sum(r.cost for r in report.rounds) + len(report.heldout) * len(heldout_ids)
    assert report.spent == spent


def test_a_budget_too_small_for_the_heldout_part_is_refused(tmp_path: Path) -> None:
    text = SPACE.format(first=2, finalists=1).replace("n_boot = 200", "n_boot = 200\nbudget = 10")
    with RunStore(tmp_path / "runs.sqlite3") as store, pytest.raises(ConfigError, match="budget of 10"):
        asyncio.run(_search(tmp_path, text, FakeBackend(name="fa"), store).run())


def test_an_aspect_definition_variant_runs_on_its_own_definition(tmp_path: Path) -> None:
    text = SPACE.format(first=99, finalists=1) + """
[[variant]]
name = "custom def"
aspect_definition = "ZEBRA-DEFINITION of a good reply."
"""
    backend = FakeBackend(name="fa")
    with RunStore(tmp_path / "runs.sqlite3") as store:
        search = _search(tmp_path, text, backend, store)
        asyncio.run(search.run())
    texts = ["\n".join(m.content for m in r.prompt.messages) for r in backend.requests]
    assert sum("ZEBRA-DEFINITION" in t for t in texts) >= N_CONTEXTS * PER_CONTEXT * 0.6
    assert search.planned["custom def"].template_name == "likert-1to5.custom-def"


# -- the space file --------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "key"), [
    ('[search]\nbudgets = 3\n[[variant]]\nname = "a"', "search.budgets"),
    ('[search]\nbudget = "lots"\n[[variant]]\nname = "a"', "search.budget"),
    ('[search]\nheldout_fraction = 1.5\n[[variant]]\nname = "a"', "search.heldout_fraction"),
    ('[[variant]]\nname = "a"\nfewshots = "none"', "variant[0].fewshots"),
    ('[[variant]]\nname = "a"\n[[variant]]\nname = "b"\nfewshot = "bm25:x"', "variant[1].fewshot"),
    ('[[variant]]\nname = "a"\ntop_k = "3"', "variant[0].top_k"),
    ('[[variant]]\npersona = "x"', "variant[0].name"),
    ('[[variant]]\nname = "a"\nmode = "vibes"', "variant[0].mode"),
    ('[grid]\npersona = "calibrated-annotator"', "grid.persona"),
    ('[defaults]\ntemplates = "x"\n[[variant]]\nname = "a"', "defaults.templates"),
    ('[search]\nbaseline = "zz"\n[[variant]]\nname = "a"', "search.baseline"),
    ('[search]\nseed = 1', "no variants"),
])
def test_space_errors_name_the_key(text: str, key: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_space(text, "space.toml")
    assert key in str(info.value) and "space.toml" in str(info.value)


def test_a_variant_the_engine_cannot_run_is_named_before_judging(tmp_path: Path) -> None:
    text = SPACE.format(first=2, finalists=1) + '[[variant]]\nname = "ghost"\ntemplate = "no-such-template"\n'
    backend = FakeBackend(name="fa")
    with RunStore(tmp_path / "runs.sqlite3") as store, pytest.raises(ConfigError, match="variant 'ghost'"):
        _search(tmp_path, text, backend, store)
    assert backend.requests == []


def test_a_grid_multiplies_the_choices_over_the_defaults() -> None:
    space = parse_space("""
[defaults]
template = "likert-1to5"
aspect = "overall"
[[variant]]
name = "start"
[grid]
persona = ["none", "calibrated-annotator"]
fewshot = ["none", "random:2", "bm25-both:2"]
top_k = [0]
""")
    assert len(space.variants) == 7 and space.baseline.name == "start"
    grid = space.variants[1:]
    assert {(v.persona, v.fewshot) for v in grid} == {(p, f) for p in ("none", "calibrated-annotator")
                                                      for f in ("none", "random:2", "bm25-both:2")}
    assert all(v.template == "likert-1to5" and v.aspect == "overall" for v in grid)
    assert len({v.name for v in space.variants}) == 7


def test_the_shipped_example_space_is_valid() -> None:
    root = Path(__file__).resolve().parents[2]
    from dialjudge.core.tuning.space import load_space

    space = load_space(root / "prompts" / "search" / "example.toml")
    assert len(space.variants) >= 8 and space.baseline.name == "plain"


def test_progress_counts_the_budget_spent_without_overshooting(tmp_path: Path) -> None:
    from dialjudge.core.tuning.search import JudgingProgressed, VariantScored

    events: list[object] = []
    with RunStore(tmp_path / "runs.sqlite3") as store:
        search = TuningSearch(parse_space(SPACE.format(first=2, finalists=1)), _dataset(tmp_path),
                              _config(), store, make_backend=lambda _c: FakeBackend(name="fa"),  # type: ignore[arg-type]
                              on_event=events.append)
        report = asyncio.run(search.run())
    spent = [e.spent for e in events if isinstance(e, (JudgingProgressed, VariantScored))]
    assert spent == sorted(spent) and spent[-1] == report.spent
    scored = [e for e in events if isinstance(e, VariantScored)]
    first_round = [e.spent for e in scored if e.stage == "round 1"]
    per_variant = report.rounds[0].cost // len(report.rounds[0].variants)
    assert first_round == [per_variant * (i + 1) for i in range(len(first_round))]


@pytest.mark.parametrize("n_variants,sizes,first_sample,eta,budget", [
    (9, [6] * 20, 2, 2, 0), (9, [6] * 20, 2, 2, 150), (5, [3, 6, 1, 4, 5, 2, 6], 1, 3, 0), (2, [6] * 4, 4, 2, 0)])
def test_the_planned_tuning_cost_is_what_halving_spends_whatever_the_scores(n_variants, sizes, first_sample, eta,
                                                                            budget) -> None:
    import random

    from dialjudge.core.tuning.halving import planned_tuning_cost

    names = [f"v{i}" for i in range(n_variants)]
    planned = planned_tuning_cost(names, sizes, first_sample=first_sample, eta=eta, budget=budget)
    for seed in range(5):  # scores change which variants go on, never what the rounds cost
        rng = random.Random(seed)
        halving = SuccessiveHalving(names, sizes, first_sample=first_sample, eta=eta, budget=budget)
        while (round_ := halving.next_round()) is not None:
            halving.record({v: rng.choice([None, rng.random()]) for v in round_.variants})
        assert halving.spent == planned


def test_the_search_announces_the_judgments_it_plans(tmp_path: Path) -> None:
    from dialjudge.core.tuning.search import SearchStarted

    events: list[object] = []
    with RunStore(tmp_path / "runs.sqlite3") as store:
        search = TuningSearch(parse_space(SPACE.format(first=2, finalists=1)), _dataset(tmp_path),
                              _config(), store, make_backend=lambda _c: FakeBackend(name="fa"),  # type: ignore[arg-type]
                              on_event=events.append)
        report = asyncio.run(search.run())
    (started,) = [e for e in events if isinstance(e, SearchStarted)]
    # The tuning rounds exactly, and the held-out part for the finalist and the baseline (at most).
    assert started.planned == sum(r.cost for r in report.rounds) + 2 * report.heldout_items
    assert started.planned >= report.spent
    if report.winner != report.baseline:
        assert started.planned == report.spent
