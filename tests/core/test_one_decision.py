"""One decision per concept (issue 32): a judge's settings are resolved once and every place that
uses them agrees -- a run and the Prompt lab's trial, the review queue's flags and the judge's
threshold, the failure summary and the reasons it groups, the annotator counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialjudge.core.api.prompt_lab import PromptSetup, prepare_prompt, trial_request
from dialjudge.core.api.protocol_judge_bench import judge_bench_requests
from dialjudge.core.api.requests import RunRequest
from dialjudge.core.api.runs import execute_run
from dialjudge.core.api.runs import plan_run as plan_request
from dialjudge.core.config import BUNDLED_JUDGE, BUNDLED_MIN_VALID_MASS, BUNDLED_SCORING, Config, parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.describe import describe
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.constraint import AnswerConstraint
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.probability import mass_thresholds, min_valid_mass
from dialjudge.core.judges.run.scoring import group_failure_reasons
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import JudgeRequest, Judgment, ScoringMode
from dialjudge.core.planning import default_scoring, plan_run, preferred_mode
from dialjudge.core.review_queue import FlagKind, build_queue
from dialjudge.core.stats.ceiling import human_ceiling

DATA = Path(__file__).resolve().parents[1] / "data"


class RecordingJudge(FakeBackend):
    """The fake judge, able to hold answers to a format (as the bundled GGUF is), recording each request."""

    async def check_constraint(self, request: JudgeRequest) -> None:
        return None


#: (template, dataset, aspect, KPI) with the bundled judge: its own scoring of each (options.scoring).
CASES = [("likert-1to5", "sample", "coherence", None), ("adv-0to1", "sample", "coherence", None),
         ("dstc10-yesno", "sample", None, None), ("inca-kpi", "incar-kpi", None, "harmful-input")]


@pytest.mark.parametrize(("template", "dataset_name", "aspect", "kpi"), CASES)
def test_the_lab_asks_the_bundled_judge_exactly_as_a_run_does(tmp_path, template, dataset_name, aspect, kpi) -> None:
    config = parse_config({})
    judge = config.judge(BUNDLED_JUDGE)
    dataset = open_dataset(dataset_name, Config())
    plan = plan_run(dataset, config, template=template, judges=[BUNDLED_JUDGE], limit=2, aspect=aspect, kpi=kpi)
    backend = RecordingJudge(name=BUNDLED_JUDGE)
    with RunStore(tmp_path / "runs.sqlite3") as store:
        execute_run(plan.config, dataset, store, {BUNDLED_JUDGE: backend})
    asked = backend.requests[0]
    tpl = get_template(template)
    prepared = prepare_prompt(PromptSetup(tpl.text, dataset, dataset.get(asked.item_id), aspect=plan.config.aspect,
                                          kpi=plan.config.kpi))
    trial = trial_request(prepared, asked.item_id, judge)  # the lab's defaults
    assert trial.min_valid_mass == asked.min_valid_mass == BUNDLED_MIN_VALID_MASS
    assert (trial.mode, trial.constrain, trial.top_k) == (asked.mode, asked.constrain, asked.top_k)
    assert trial.prompt.hash == asked.prompt.hash and trial.sampling == asked.sampling
    # ... and that is the judge's own way of scoring the template, where it names one.
    scoring = default_scoring(tpl, [judge])
    assert (asked.mode, asked.constrain) == (scoring.mode, scoring.constrain)


def test_the_bundled_judges_scoring_names_shipped_templates_and_modes_they_offer() -> None:
    judge = parse_config({}).judge(BUNDLED_JUDGE)
    for name in BUNDLED_SCORING:
        template = get_template(name)
        chosen = default_scoring(template, [judge])
        assert chosen.mode in template.output.modes
        assert chosen != default_scoring(template, []), name  # each entry changes something


def test_naming_a_mode_or_a_constraint_overrides_the_judges_default() -> None:
    config = parse_config({})
    sample = open_dataset("sample", Config())
    logprob = plan_run(sample, config, template="likert-1to5", judges=[BUNDLED_JUDGE], aspect="coherence",
                       mode="logprob")
    assert (logprob.config.mode, logprob.config.constrain) == (ScoringMode.LOGPROB, AnswerConstraint.OFF)
    constrained = plan_run(sample, config, template="likert-1to5", judges=[BUNDLED_JUDGE], aspect="coherence",
                           constrain=AnswerConstraint.REASONING)
    assert (constrained.config.mode, constrained.config.constrain) == (ScoringMode.GENERATE,
                                                                       AnswerConstraint.REASONING)


def test_judges_that_disagree_keep_the_templates_preferred_mode() -> None:
    config = parse_config({"judges": {"other": {"backend": "fake", "options": {"scoring": {"adv-0to1": "generate"}}}}})
    template = get_template("adv-0to1")
    both = default_scoring(template, [config.judge(BUNDLED_JUDGE), config.judge("other")])
    assert both.mode is preferred_mode(template.output.modes) and both.constrain is AnswerConstraint.OFF


def test_a_protocol_that_names_its_scoring_wins_over_the_judges_default() -> None:
    config = parse_config({})
    dataset = open_dataset(str(DATA / "judge_bench_dialogue.json"), Config())
    template = get_template("adv-0to1")
    requests = judge_bench_requests(RunRequest(template="adv-0to1", aspect="coherence"), dataset)
    assert requests and all(not r.judge_defaults for r in requests)
    graded = next(r for r in requests if r.template == "adv-0to1")
    plan = plan_request(graded, dataset, config)
    # The protocol's own scoring (JUDGE-BENCH parsed generated answers, issue 33), neither the bundled
    # judge's default for the template nor the template's preferred mode.
    assert plan.config.mode is ScoringMode.GENERATE is not preferred_mode(template.output.modes)
    assert plan.config.constrain is AnswerConstraint.OFF


def test_a_judges_scoring_option_is_checked_when_the_config_is_read() -> None:
    with pytest.raises(ConfigError, match=r"judges.x.options.scoring must be a table of template name = one of"):
        parse_config({"judges": {"x": {"backend": "fake", "options": {"scoring": {"adv-0to1": "sometimes"}}}}})


def judgment(item_id: str, mass: float, threshold: float) -> Judgment:
    scored = mass >= threshold
    return Judgment(item_id=item_id, judge=BUNDLED_JUDGE, mode=ScoringMode.LOGPROB, prompt_hash="h", raw_output="",
                    score=3.0 if scored else None, normalized=0.5 if scored else None,
                    error=None if scored else "the answer did not start with a rating: ...", valid_mass=mass)


def test_the_review_queue_flags_mass_exactly_below_the_judges_own_threshold() -> None:
    config = parse_config({})
    sample = open_dataset("sample", Config())
    plan = plan_run(sample, config, template="likert-1to5", judges=[BUNDLED_JUDGE], aspect="coherence",
                    mode="logprob", limit=4)
    thresholds = mass_thresholds(plan.config)
    assert thresholds == {BUNDLED_JUDGE: min_valid_mass(config.judge(BUNDLED_JUDGE))} == {BUNDLED_JUDGE: 0.3}
    ids = [ex.id for ex in sample.examples[:4]]
    masses = [0.29, 0.31, 0.45, 0.9]
    judgments = {BUNDLED_JUDGE: {i: judgment(i, m, 0.3) for i, m in zip(ids, masses)}}
    queue = build_queue(sample, judgments, "coherence", mass_thresholds=thresholds, min_gap=2.0)
    flagged = {case.item_id for case in queue if any(f.kind is FlagKind.LOW_MASS for f in case.flags)}
    assert flagged == {ids[0]}  # the one the run did not score; 31% and 45% were scored from 30%


def test_failures_for_too_little_mass_are_one_line_with_the_range() -> None:
    def reason(mass: str) -> str:
        return (f"the answer did not start with a rating: {mass} of the probability on valid ratings "
                "(the judge needs 30.0%, options.min_valid_mass)")

    rows = [(reason("23.1%"), 0.231, 2), (reason("29.4%"), 0.294, 8), ("timeout", None, 3), (reason("25.0%"), 0.25, 1)]
    assert group_failure_reasons(rows) == [
        ("too little valid mass, 23.1%-29.4% of the probability on valid ratings (the judge needs 30.0%, "
         "options.min_valid_mass)", 11),
        ("timeout", 3)]


def test_annotator_counts_say_which_count_they_are(shared_data) -> None:
    config = parse_config({"data": {"dirs": [str(shared_data)]}})
    usr = open_dataset("usr-topicalchat", config)
    overall = next(q for q in describe(usr).qualities if q.name == "Overall")
    assert (overall.raters, overall.annotators) == (5, 3)
    names = {name for ex in usr.examples for name in ex.ratings["Overall"].annotators}
    assert len(names) == 5 and max(len(ex.ratings["Overall"].scores) for ex in usr.examples) == 3
    ceiling = human_ceiling(usr.examples, "Overall", n_boot=0)
    assert "5 raters in the set, 3 per item" in ceiling.n_text()
