"""Comparing two runs of fake judges: correlation deltas, the prompt diff and the changed settings."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialjudge.core.api.runs import (
    build_backends,
    execute_run,
)
from dialjudge.core.compare import Delta, compare_runs, config_changes
from dialjudge.core.config import Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.evaluation import evaluate
from dialjudge.core.judges.prompts.templates import shipped_template_dir
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.model import Dataset
from dialjudge.core.planning import plan_run
from dialjudge.core.run_columns import run_scores

OLD_LINE = "Rate the response from {aspect}. The score is from 0 to 1. Please output a score."
NEW_LINE = "Rate the response from {aspect}. The score is from 0 to 1. Please output only a number."


@pytest.fixture
def config(tmp_path: Path) -> Config:
    """Fake judges, and a user template that differs from adv-0to1 in its name and one line."""
    shipped = (shipped_template_dir() / "adv-0to1.toml").read_text(encoding="utf-8")
    assert OLD_LINE in shipped
    edited = shipped.replace('name = "adv-0to1"', 'name = "adv-edit"').replace(OLD_LINE, NEW_LINE)
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "adv-edit.toml").write_text(edited, encoding="utf-8")
    return parse_config({"templates": {"dirs": ["templates"]},
                         "judges": {"fa": {"backend": "fake"}, "fb": {"backend": "fake", "seed": 3}}},
                        tmp_path / "dialjudge.toml")


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", Config())


def judge_run(store: RunStore, dataset: Dataset, config: Config, template: str, judges: list[str],
              **options: object) -> int:
    plan = plan_run(dataset, config, template=template, judges=judges, aspect="coherence", **options)
    summary = execute_run(plan.config, dataset, store, build_backends(plan.config))
    assert summary.status == "finished"
    return summary.run_id


def test_template_edit_gives_deltas_and_a_prompt_diff(tmp_path: Path, sample: Dataset, config: Config) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    run_a = judge_run(store, sample, config, "adv-0to1", ["fa"])
    run_b = judge_run(store, sample, config, "adv-edit", ["fa"])

    comparison = compare_runs(store, run_a, run_b, dataset=sample, subsets=("all", "open"))
    assert (comparison.run_a, comparison.run_b, comparison.dataset) == (run_a, run_b, "sample")
    assert [(d.evaluator, d.quality, d.subset, d.coefficient) for d in comparison.deltas] == [
        ("fa", "coherence", subset, c) for subset in ("all", "open") for c in ("pearson", "spearman", "kendall")]

    # Each side is exactly what the agreement table says about that run alone.
    for run_id, side in ((run_a, "before"), (run_b, "after")):
        scores, failures = run_scores(store, run_id)
        expected = next(r for r in evaluate(sample, qualities=["coherence"], extra_scores=scores, failures=failures,
                                            include_metrics=False, n_boot=0).records if r["evaluator"] == "fa")
        delta = comparison.deltas[1]
        assert getattr(delta, side) == pytest.approx(expected["spearman"])
        assert (delta.n_before if side == "before" else delta.n_after) == expected["n"] == 60
    # The fake judge's scores hash the prompt, so a changed template moves the correlations.
    assert any(d.change not in (None, 0.0) for d in comparison.deltas)
    assert all(d.change == pytest.approx(d.after - d.before) for d in comparison.deltas)

    diff = comparison.prompt_diff
    # Each side names its template with its content hash (two texts of one name stay told apart).
    before, after = (store.runs.get_run(r).run_config for r in (run_a, run_b))
    assert diff[0] == f"--- run {run_a}: adv-0to1 #{before.template_hash}"
    assert diff[1] == f"+++ run {run_b}: adv-edit #{after.template_hash}"
    assert before.template_hash != after.template_hash
    assert "-{sep} " + OLD_LINE in diff and "+{sep} " + NEW_LINE in diff
    assert '-name = "adv-0to1"' in diff and '+name = "adv-edit"' in diff
    changed = [line for line in diff[2:] if line[:1] in "+-" and not line.startswith("@@")]
    assert len(changed) == 4  # nothing else differs

    changes = {key: (a, b) for key, a, b in comparison.config_changes}
    assert changes["template.name"] == ("adv-0to1", "adv-edit")
    assert changes["template.source"][1].endswith("adv-edit.toml")
    assert set(changes) == {"template.name", "template.source"}  # the text is covered by the diff

    records = comparison.to_records()
    assert records[0] == {"evaluator": "fa", "quality": "coherence", "subset": "all", "coefficient": "pearson",
                          f"run_{run_a}": comparison.deltas[0].before, f"run_{run_b}": comparison.deltas[0].after,
                          "delta": comparison.deltas[0].change, "n_a": 60, "n_b": 60}


def test_judges_in_one_run_only_and_changed_settings(tmp_path: Path, sample: Dataset, config: Config) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    run_a = judge_run(store, sample, config, "adv-0to1", ["fa"], limit=20)
    run_b = judge_run(store, sample, config, "adv-0to1", ["fa", "fb"], limit=20,
                      personas=["strict-fact-checker"])

    comparison = compare_runs(store, run_a, run_b)  # opens the dataset the run names
    assert comparison.dataset == "sample"
    evaluators = {d.evaluator for d in comparison.deltas}
    assert evaluators == {"fa", "fa@strict-fact-checker", "fb@strict-fact-checker", "pool"}
    only_b = [d for d in comparison.deltas if d.evaluator == "fb@strict-fact-checker"]
    assert all(d.before is None and d.n_before == 0 and d.after is not None and d.change is None for d in only_b)
    only_a = [d for d in comparison.deltas if d.evaluator == "fa"]
    assert all(d.after is None and d.n_after == 0 and d.n_before == 20 for d in only_a)

    assert "+# persona strict-fact-checker" in comparison.prompt_diff
    keys = [key for key, _, _ in comparison.config_changes]
    assert "personas" in keys and "judges" in keys
    assert not any(key.startswith("template") for key in keys)


def test_same_run_twice_has_no_diff_and_zero_deltas(tmp_path: Path, sample: Dataset, config: Config) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    run_a = judge_run(store, sample, config, "adv-0to1", ["fa"], limit=10, name="first")
    run_b = judge_run(store, sample, config, "adv-0to1", ["fa"], limit=10, name="second")
    comparison = compare_runs(store, run_a, run_b, dataset=sample, qualities=["coherence", "overall"])
    assert comparison.prompt_diff == []
    assert comparison.config_changes == []  # the run's name is not a setting
    assert {d.quality for d in comparison.deltas} == {"coherence", "overall"}
    assert all(d.change == 0.0 for d in comparison.deltas)


def test_config_changes_flattens_nested_keys() -> None:
    a = {"mode": "generate", "template": {"name": "x", "text": "A"}, "dataset": {"subset": "all", "limit": None},
         "name": "one", "judges": [{"name": "fa"}]}
    b = {"mode": "logprob", "template": {"name": "x", "text": "B"}, "dataset": {"subset": "open"},
         "name": "two", "judges": [{"name": "fa"}], "top_k": 3}
    assert config_changes(a, b) == [
        ("dataset.subset", "all", "open"),
        ("mode", "generate", "logprob"),
        ("top_k", None, 3),
    ]


def test_delta_change_needs_both_sides() -> None:
    assert Delta("j", "q", "all", "pearson", 0.25, 0.5, 10, 10).change == 0.25
    assert Delta("j", "q", "all", "pearson", None, 0.5, 0, 10).change is None
