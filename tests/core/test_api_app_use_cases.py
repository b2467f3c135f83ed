"""The application layer's use cases behind the app's Prompt lab, Review export and Scores decisions,
checked against the engine functions they stand for."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest

from dialjudge.core.api import (
    ask_judge,
    compare_columns,
    item_metric_scores,
    prepare_prompt,
    trial_judgment,
    trial_request,
)
from dialjudge.core.api.prompt_lab import PromptSetup
from dialjudge.core.api.review import check_review_formats
from dialjudge.core.api.types import ScoringMode
from dialjudge.core.api.view import stored_run_of
from dialjudge.core.compare import compare_evaluators
from dialjudge.core.config import Config, bundled_judge
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError, DialjudgeError, TemplateError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.render import render_prompt
from dialjudge.core.judges.prompts.templates import shipped_template_dir
from dialjudge.core.metrics import metric_info
from dialjudge.core.model import Dataset
from dialjudge.core.stats.baselines import length_scores


@pytest.fixture(scope="module")
def sample() -> Dataset:
    return open_dataset("sample", Config())


def shipped(name: str) -> str:
    return (shipped_template_dir() / f"{name}.toml").read_text(encoding="utf-8")


def test_a_column_names_its_stored_run_only_after_the_separator():
    assert stored_run_of("smollm2#12") == 12
    assert stored_run_of("smollm2") is None
    assert stored_run_of("odd#name") is None


def test_the_length_baseline_column_is_the_candidates_token_counts(sample: Dataset):
    judge = {ex.id: float(len(ex.candidate or "")) for ex in sample.examples}
    got = compare_columns(sample, "overall", "all", {"judge": judge, "length": None}, "length", "judge",
                          n_boot=200, seed=1)
    want = compare_evaluators(sample, length_scores(sample.examples), judge, "overall", name_a="length",
                              name_b="judge", n_boot=200, seed=1)
    assert got == want


def test_one_items_metrics_are_named_by_their_labels(sample: Dataset):
    example = next(ex for ex in sample.examples if ex.candidate and ex.references)
    labels = {metric_info("bleu1").label, metric_info("rouge1").label}
    echo = dataclasses.replace(example, candidate=example.references[0])
    assert item_metric_scores(echo, ("bleu1", "rouge1")) == dict.fromkeys(labels, 1.0)
    unrelated = dataclasses.replace(example, candidate="zyzzyva quokka")
    assert item_metric_scores(unrelated, ("bleu1", "rouge1")) == dict.fromkeys(labels, 0.0)


def test_the_lab_renders_what_a_run_renders(sample: Dataset):
    example = sample.examples[0]
    prepared = prepare_prompt(PromptSetup(shipped("likert-1to5"), sample, example, aspect="overall"))
    assert prepared.quality == "overall" and prepared.shots == ()
    assert prepared.prompt == render_prompt(prepared.template, example, aspect="overall", quality="overall")


def test_an_edited_template_fails_with_its_position(sample: Dataset):
    with pytest.raises(TemplateError) as caught:
        prepare_prompt(PromptSetup('name = "broken"\n[output\n', sample, sample.examples[0]))
    assert "prompt lab" in str(caught.value)


def test_a_trial_asks_for_a_mode_the_template_offers_and_scores_the_answer(sample: Dataset):
    prepared = prepare_prompt(PromptSetup(shipped("likert-1to5"), sample, sample.examples[0], aspect="overall"))
    judge = bundled_judge()
    offered = set(prepared.template.output.modes)
    missing = [m for m in ScoringMode if m not in offered]
    if missing:
        with pytest.raises(ConfigError, match="does not support"):
            trial_request(prepared, sample.examples[0].id, judge, missing[0])
    mode = next(iter(prepared.template.output.modes))
    request = trial_request(prepared, sample.examples[0].id, judge, mode)
    result = asyncio.run(ask_judge(FakeBackend(), request))
    judgment = trial_judgment(request, result, "fake")
    assert judgment.item_id == sample.examples[0].id and judgment.judge == "fake"
    assert judgment.failed or judgment.score is not None


@pytest.mark.parametrize("formats", [(), ("reviews-xlsx",)])
def test_a_review_export_needs_known_formats(formats: tuple[str, ...]):
    with pytest.raises(DialjudgeError):
        check_review_formats(formats)
