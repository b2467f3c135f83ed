"""The prompt lab's use cases: render an edited template on one item, ask a judge about it, save it.

A template's text is parsed here, not in the front end, so an edited
template fails with the same :class:`~dialjudge.core.errors.TemplateError`
(line and column) that loading it from a file would give.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass
from pathlib import Path

from ..config import JudgeConfig
from ..errors import ConfigError
from ..judges.prompts.constraint import AnswerConstraint
from ..judges.prompts.fewshot import FewShotSelector, FewShotSetting
from ..judges.prompts.personas import Persona, save_template
from ..judges.prompts.personas import _check_name as check_name
from ..judges.prompts.render import render_prompt
from ..judges.prompts.templates import Template, parse_template, renamed_template_text, shipped_template_dir
from ..judges.run.config import judge_config_to_dict
from ..judges.run.pairwise import preview_pair
from ..judges.run.probability import judge_request
from ..judges.run.scoring import score_result
from ..judges.types import BackendResult, JudgeBackend, JudgeRequest, Judgment, OutputKind, RenderedPrompt, ScoringMode
from ..model import Dataset, Example
from ..planning import infer_quality, resolve_scoring

#: Where an edited template's errors point (the text is not a file yet).
LAB_SOURCE = "prompt lab"

#: Few-shot selectors by (dataset id, setting, quality): a BM25 index is built once per dataset.
FewShotCache = MutableMapping[tuple[int, FewShotSetting, str], FewShotSelector]


@dataclass(frozen=True)
class PromptSetup:
    """Everything a prompt is rendered from: the template's text, the item and the choices around it."""

    text: str
    dataset: Dataset
    example: Example
    aspect: str | None = None
    kpi: str | None = None
    persona: Persona | None = None
    fewshot: str = "none"


@dataclass(frozen=True)
class PreparedPrompt:
    template: Template
    prompt: RenderedPrompt
    quality: str | None
    shots: tuple[str, ...]
    #: A pairwise template's other order: the same two replies swapped (``prompt`` shows the item first).
    swapped: RenderedPrompt | None = None


def prepare_prompt(setup: PromptSetup, selectors: FewShotCache | None = None) -> PreparedPrompt:
    """Parse the template text and render the item. Raises TemplateError / ConfigError for the user."""
    template = parse_template(setup.text, LAB_SOURCE)
    quality = infer_quality(setup.dataset, aspect=setup.aspect, kpi=setup.kpi)
    shots = _fewshot_examples(setup, template, quality, selectors)
    if template.output.kind is OutputKind.PAIRWISE:  # both orders of the item and its context's next candidate
        orders = [render_prompt(template, pair, aspect=setup.aspect, persona=setup.persona, quality=quality,
                                kpi=setup.kpi) for pair in preview_pair(setup.dataset.examples, setup.example)]
        return PreparedPrompt(template, orders[0], quality, (), swapped=orders[1])
    prompt = render_prompt(template, setup.example, aspect=setup.aspect, persona=setup.persona, fewshot=shots,
                           quality=quality, kpi=setup.kpi)
    return PreparedPrompt(template, prompt, quality, tuple(ex.id for ex in shots))


def _fewshot_examples(setup: PromptSetup, template: Template, quality: str | None,
                      selectors: FewShotCache | None) -> list[Example]:
    setting = FewShotSetting.parse(setup.fewshot)
    if setting.method == "none":
        return []
    if not template.accepts_examples:
        raise ConfigError(f"template {template.name!r} has no {{examples}} slot; choose no few-shot examples")
    if quality is None:
        raise ConfigError("few-shot examples need a rated quality; this dataset has none")
    key = (id(setup.dataset), setting, quality)
    cache: FewShotCache = selectors if selectors is not None else {}
    selector = cache.get(key)
    if selector is None:
        selector = cache[key] = FewShotSelector(setup.dataset.examples, setting, quality)
    return list(selector.select(setup.example))


#: A run's top-K unless told otherwise (``core.planning.plan_run``'s default, held equal by a test):
#: 0, the expected value over every valid rating.
RUN_DEFAULT_TOP_K = 0


def trial_request(prepared: PreparedPrompt, item_id: str, judge: JudgeConfig, mode: ScoringMode | None = None, *,
                  top_k: int | None = None, constrain: AnswerConstraint = AnswerConstraint.OFF) -> JudgeRequest:
    """The one request a trial sends, as a run with this template and judge sends it (the same
    ``judge_request``: the judge's sampling and valid-mass threshold): ``mode`` and ``constrain``
    default to a run's (``resolve_scoring``: the judge's way of scoring this template) and ``top_k``
    to a run's (0: the expected value over every rating; a trial with top-3 or generate mode could
    report "not scored" for an item the run scored). ConfigError when the template does not offer
    ``mode``."""
    scoring = resolve_scoring(prepared.template, [judge], mode=mode, constrain=constrain)
    top_k = RUN_DEFAULT_TOP_K if top_k is None else top_k
    if scoring.mode not in prepared.template.output.modes:
        offered = ", ".join(m.value for m in prepared.template.output.modes)
        raise ConfigError(f"template {prepared.template.name!r} does not support {scoring.mode.value} scoring "
                          f"(it offers: {offered})")
    return judge_request(item_id, prepared.prompt, judge, mode=scoring.mode, top_k=top_k, constrain=scoring.constrain)


async def ask_judge(backend: JudgeBackend, request: JudgeRequest) -> BackendResult:
    """Open ``backend`` (a no-op when it is open), check it can score in the request's mode, and ask."""
    await backend.open()
    await backend.check_mode(request.mode, request.top_k)
    return await backend.complete(request)


def trial_judgment(request: JudgeRequest, result: BackendResult, judge: str) -> Judgment:
    """The judge's answer scored the way a run scores it."""
    return score_result(request, result, judge)


def judge_key(judge: JudgeConfig) -> str:
    """One key per distinct judge configuration (a backend is kept open under it)."""
    return repr(sorted(judge_config_to_dict(judge).items()))


@dataclass(frozen=True)
class SavedTemplate:
    name: str
    path: Path
    #: A shipped template of the same name exists; the saved one now stands in for it.
    overrides_shipped: bool


def save_edited_template(text: str, name: str | None = None) -> SavedTemplate:
    """Save a template in the user's template folder (never over a shipped file): under the name its
    text gives, or under ``name`` (save as: the text's name line is rewritten). Saved under a shipped
    template's name it overrides that one; the Prompt lab asks before it does."""
    current = parse_template(text, LAB_SOURCE).name
    final = text if name is None or name == current else renamed_template_text(text, name)
    saved_name = name or current
    path = save_template(final, saved_name)
    return SavedTemplate(saved_name, path, (shipped_template_dir() / f"{saved_name}.toml").is_file())


def check_persona_name(name: str) -> None:
    """TemplateError unless ``name`` can name a persona (it becomes a file name)."""
    check_name(name, "persona")
