"""The Prompt lab's "try it" scores an item exactly as a run scores it (core/api/prompt_lab.py)."""

from __future__ import annotations

import asyncio
import inspect

import pytest

from dialjudge.core.api.prompt_lab import (
    RUN_DEFAULT_TOP_K,
    PromptSetup,
    ask_judge,
    prepare_prompt,
    trial_judgment,
    trial_request,
)
from dialjudge.core.api.runs import (
    build_backends,
    execute_run,
)
from dialjudge.core.config import Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.engine import _default_scorer
from dialjudge.core.judges.run.scoring import score_result
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.planning import plan_run

JUDGES = {"judges": {"fa": {"backend": "fake", "model": "fa-model"}}}


def test_the_trial_uses_the_engines_scorer_and_a_runs_default_top_k() -> None:
    assert _default_scorer() is score_result
    assert inspect.signature(plan_run).parameters["top_k"].default == RUN_DEFAULT_TOP_K


def trial(backend: FakeBackend, request, judge: str):
    return trial_judgment(request, asyncio.run(ask_judge(backend, request)), judge)


@pytest.mark.parametrize("template", ["likert-1to5", "dstc10-yesno"])
def test_a_trial_scores_each_item_as_the_run_did(tmp_path, template: str) -> None:
    config = parse_config(JUDGES)
    sample = open_dataset("sample", Config())
    aspect = "overall" if template == "likert-1to5" else None
    plan = plan_run(sample, config, template=template, judges=["fa"], limit=6, aspect=aspect)  # otherwise defaults
    store = RunStore(tmp_path / "runs.sqlite3")
    summary = execute_run(plan.config, sample, store, build_backends(plan.config))  # runs to the end
    judged = store.judgments.load_judgments(summary.run_id)["fa"]
    tpl = get_template(template)
    judge = config.judge("fa")
    differs_in_generate_mode = 0
    for item_id, run_judgment in judged.items():
        prepared = prepare_prompt(PromptSetup(tpl.text, sample, sample.get(item_id), aspect=plan.config.aspect))
        request = trial_request(prepared, item_id, judge)  # the lab's defaults
        assert request.mode is plan.config.mode and request.top_k == plan.config.top_k
        judgment = trial(FakeBackend.from_config(judge), request, judge.name)
        assert judgment.prompt_hash == run_judgment.prompt_hash
        assert judgment.score is not None and judgment.score == pytest.approx(run_judgment.score, abs=1e-12)
        assert judgment.normalized == pytest.approx(run_judgment.normalized, abs=1e-12)
        if ScoringMode.GENERATE in prepared.template.output.modes:
            # What the lab did before: generate mode (a rounded rating) -- not the run's number.
            old = trial_request(prepared, item_id, judge, ScoringMode.GENERATE)
            old_score = trial(FakeBackend.from_config(judge), old, judge.name).score
            differs_in_generate_mode += old_score != pytest.approx(run_judgment.score, abs=1e-9)
    if template == "likert-1to5":
        assert differs_in_generate_mode > 0


def test_a_mode_the_template_lacks_is_refused_as_a_run_refuses_it() -> None:
    sample = open_dataset("sample", Config())
    tpl = get_template("likert-1to5")
    prepared = prepare_prompt(PromptSetup(tpl.text, sample, sample.examples[0], aspect="overall"))
    with pytest.raises(ConfigError, match="does not support yesno scoring"):
        trial_request(prepared, "x", parse_config(JUDGES).judge("fa"), ScoringMode.YESNO)
