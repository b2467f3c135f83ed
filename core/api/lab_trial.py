"""One judgment of one item, scored exactly as a run would score it (the Prompt lab's "try it").

A run asks with the run's mode (probability scoring where the template supports
it), ``top_k = 0`` (the expected value over every valid rating) unless told
otherwise, the judge's sampling, and scores the answer with the engine's scorer.
A trial that picked its own settings (generate mode, or the top-3 weighting)
could report "not scored", or another number, for an item the run scored 0.644.
Here the trial takes the run's defaults from the same place the run does
(``preferred_mode``; ``RUN_DEFAULT_TOP_K``, which a test holds equal to
``core.planning.plan_run``'s default) and the engine's scorer.
``prepare_prompt`` renders the lab's (possibly edited) template for the item the
way a run renders it (few-shot examples, persona, aspect or KPI); the app's lab
controller runs both on workers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ConfigError

if TYPE_CHECKING:
    from ..config import JudgeConfig
    from ..judges.prompts.personas import Persona
    from ..judges.prompts.templates import Template
    from ..judges.types import JudgeBackend, JudgeRequest, Judgment, RenderedPrompt, ScoringMode
    from ..model import Dataset, Example

#: A run's top-K unless told otherwise (``core.planning.plan_run``'s default): the expected value over every rating.
RUN_DEFAULT_TOP_K = 0

#: Where an edited template's errors point (the text is not a file yet).
LAB_SOURCE = "prompt lab"


@dataclass(frozen=True)
class PromptSetup:
    """Everything the lab renders a prompt from."""

    text: str
    dataset: Dataset
    example: Example
    aspect: str | None = None
    kpi: str | None = None
    persona: Persona | None = None
    fewshot: str = "none"
    #: Grows with every edit, so a late preview of older text is recognised and dropped.
    generation: int = 0


@dataclass(frozen=True)
class PreparedPrompt:
    template: Template
    prompt: RenderedPrompt
    quality: str | None
    shots: tuple[str, ...]
    #: A pairwise template's other order: the same two replies swapped (``prompt`` shows the item first).
    swapped: RenderedPrompt | None = None


def prepare_prompt(setup: PromptSetup, selectors: dict[Any, Any] | None = None) -> PreparedPrompt:
    """Parse the template text and render the item. Raises TemplateError / ConfigError for the user."""
    from ..judges.prompts.fewshot import FewShotSelector, FewShotSetting
    from ..judges.prompts.render import render_prompt
    from ..judges.prompts.templates import parse_template
    from ..planning import infer_quality

    template = parse_template(setup.text, LAB_SOURCE)
    quality = infer_quality(setup.dataset, aspect=setup.aspect, kpi=setup.kpi)
    setting = FewShotSetting.parse(setup.fewshot)
    shots: list[Example] = []
    if setting.method != "none":
        if not template.accepts_examples:
            raise ConfigError(f"template {template.name!r} has no {{examples}} slot; choose no few-shot examples")
        if quality is None:
            raise ConfigError("few-shot examples need a rated quality; this dataset has none")
        key = (id(setup.dataset), setting, quality)
        cache = selectors if selectors is not None else {}
        selector = cache.get(key)
        if selector is None:
            selector = cache[key] = FewShotSelector(setup.dataset.examples, setting, quality)
        shots = list(selector.select(setup.example))
    from ..judges.types import OutputKind

    if template.output.kind is OutputKind.PAIRWISE:  # both orders of the item and its context's next candidate
        from ..judges.run.pairwise import preview_pair

        orders = [render_prompt(template, pair, aspect=setup.aspect, persona=setup.persona, quality=quality,
                                kpi=setup.kpi) for pair in preview_pair(setup.dataset.examples, setup.example)]
        return PreparedPrompt(template, orders[0], quality, (), swapped=orders[1])
    prompt = render_prompt(template, setup.example, aspect=setup.aspect, persona=setup.persona, fewshot=shots,
                           quality=quality, kpi=setup.kpi)
    return PreparedPrompt(template, prompt, quality, tuple(ex.id for ex in shots))




def trial_request(item_id: str, prompt: RenderedPrompt, template: Template, judge: JudgeConfig, *,
                  mode: ScoringMode | None = None, top_k: int | None = None) -> JudgeRequest:
    """The request a run with this template and judge sends for the item (repeat 0). ``mode`` and
    ``top_k`` default to a run's defaults; a mode the template lacks is refused as a run refuses it."""
    from ..judges.types import JudgeRequest
    from ..planning import preferred_mode

    chosen = preferred_mode(template.output.modes) if mode is None else mode
    if chosen not in template.output.modes:
        offered = ", ".join(m.value for m in template.output.modes)
        raise ConfigError(f"template {template.name!r} does not support {chosen.value} scoring (it offers: {offered})")
    return JudgeRequest(item_id=item_id, prompt=prompt, mode=chosen, sampling=judge.sampling,
                        top_k=RUN_DEFAULT_TOP_K if top_k is None else top_k)


async def judge_once(backend: JudgeBackend, request: JudgeRequest, judge_label: str) -> Judgment:
    """Open the backend (again: opening an open one is cheap), check the mode as a run does before
    its first request, ask, and score with the engine's own scorer."""
    from ..judges.run.scoring import score_result  # the engine's default scorer

    await backend.open()
    await backend.check_mode(request.mode, request.top_k)
    result = await backend.complete(request)
    return score_result(request, result, judge_label)
