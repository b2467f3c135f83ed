"""The Prompt lab's work: previews, trials, saving templates and personas.

The preview parses the edited template text and renders the chosen item
(few-shot examples included) on a worker, so a large dataset's BM25 index
never blocks typing. A template error is an expected outcome there, shown
inline with its line and column, not a failure. "Try on this item" sends one
request to a judge; the backend stays open between trials (a local model
loads once). Templates and personas are saved in the user's folder, never
over a shipped file.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from textual.app import App
from textual.message import Message
from textual.message_pump import MessagePump
from textual.worker import Worker, get_current_worker

from dialjudge.core.config import JudgeConfig
from dialjudge.core.errors import ConfigError, TemplateError

from .base import start_thread_work

if TYPE_CHECKING:
    from dialjudge.core.judges.prompts.personas import Persona
    from dialjudge.core.judges.prompts.templates import Template
    from dialjudge.core.judges.types import JudgeBackend, Judgment, RenderedPrompt, ScoringMode
    from dialjudge.core.model import Dataset, Example

    from ..services import Services

PREVIEW_GROUP = "prompt-preview"
TRIAL_GROUP = "prompt-trial"
SAVE_GROUP = "prompt-save"
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


@dataclass
class PreviewRendered(Message):
    """The lab's prompt was rendered, or the template (or a setting) has an error."""

    generation: int
    prepared: PreparedPrompt | None
    error: Exception | None

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, PreviewRendered)


@dataclass
class TrialFinished(Message):
    """A judge answered the lab's prompt for one item."""

    judge: str
    prepared: PreparedPrompt
    judgment: Judgment
    seconds: float


@dataclass
class TrialFailed(Message):
    """A trial could not be made (the app's failure handler says why, too)."""

    judge: str
    error: str


@dataclass
class TemplateReverted(Message):
    """A user's override was set aside (renamed to ``kept``): the shipped template is in use again."""

    name: str
    kept: str


@dataclass
class TemplateSaved(Message):
    """The edited template was written to the user's template folder."""

    name: str
    path: str
    overrides_shipped: bool


@dataclass
class PersonaSaved(Message):
    """A persona was written to the user's persona folder."""

    name: str
    path: str


def prepare_prompt(setup: PromptSetup, selectors: dict[Any, Any] | None = None) -> PreparedPrompt:
    """Parse the template text and render the item. Raises TemplateError / ConfigError for the user."""
    from dialjudge.core.api import infer_quality
    from dialjudge.core.judges.prompts.fewshot import FewShotSelector, FewShotSetting
    from dialjudge.core.judges.prompts.render import render_prompt
    from dialjudge.core.judges.prompts.templates import parse_template

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
    from dialjudge.core.judges.types import OutputKind

    if template.output.kind is OutputKind.PAIRWISE:  # both orders of the item and its context's next candidate
        from dialjudge.core.judges.run.pairwise import preview_pair

        orders = [render_prompt(template, pair, aspect=setup.aspect, persona=setup.persona, quality=quality,
                                kpi=setup.kpi) for pair in preview_pair(setup.dataset.examples, setup.example)]
        return PreparedPrompt(template, orders[0], quality, (), swapped=orders[1])
    prompt = render_prompt(template, setup.example, aspect=setup.aspect, persona=setup.persona, fewshot=shots,
                           quality=quality, kpi=setup.kpi)
    return PreparedPrompt(template, prompt, quality, tuple(ex.id for ex in shots))


@dataclass
class _LabState:
    """What the lab keeps between previews and trials (shared by its worker threads)."""

    #: Few-shot selectors by (dataset, setting, quality): a BM25 index is built once.
    selectors: dict[Any, Any] = field(default_factory=dict)
    #: Open judges by their configuration, reused by the next trial.
    backends: dict[str, JudgeBackend] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: One event loop for every trial and the final close: a kept-open HTTP client's
    #: connections belong to the loop that opened them (a fresh asyncio.run per trial breaks them).
    loop: asyncio.AbstractEventLoop | None = None
    #: Held while ``loop`` runs; a cancelled trial's thread may still be using it.
    loop_lock: threading.Lock = field(default_factory=threading.Lock)

    def run_on_loop(self, coroutine: Any) -> Any:
        with self.loop_lock:
            if self.loop is None:
                self.loop = asyncio.new_event_loop()
            return self.loop.run_until_complete(coroutine)

    def run_and_close_loop(self, coroutine: Any) -> None:
        with self.loop_lock:
            loop, self.loop = self.loop or asyncio.new_event_loop(), None
            try:
                loop.run_until_complete(coroutine)
            finally:
                loop.close()


class LabController:
    """The Prompt lab's workers and the judges it keeps open between trials."""

    def __init__(self, app: App[Any], services: Services) -> None:
        self.app = app
        self.services = services
        # Created here, on the UI thread, before any worker shares it.
        self._state = _LabState()

    # -- the preview -----------------------------------------------------------------------

    def render_preview(self, setup: PromptSetup, reply_to: MessagePump) -> Worker[None]:
        """Render ``setup`` on a worker; ``reply_to`` receives :class:`PreviewRendered`."""

        def render() -> None:
            prepared: PreparedPrompt | None
            error: Exception | None
            try:
                prepared, error = prepare_prompt(setup, self._state.selectors), None
            except (TemplateError, ConfigError) as exc:
                prepared, error = None, exc
            if not get_current_worker().is_cancelled:
                reply_to.post_message(PreviewRendered(setup.generation, prepared, error))

        return start_thread_work(self.app, render, group=PREVIEW_GROUP, description="Rendering the prompt")

    # -- trying a judge --------------------------------------------------------------------

    def try_prompt(self, setup: PromptSetup, judge: JudgeConfig, mode: ScoringMode, reply_to: MessagePump,
                   *, top_k: int = 3) -> Worker[None]:
        """Ask ``judge`` about ``setup``'s item now; ``reply_to`` receives TrialFinished or TrialFailed."""

        def trial() -> None:
            from dialjudge.core.judges.run.scoring import score_result
            from dialjudge.core.judges.types import JudgeRequest

            try:
                prepared = prepare_prompt(setup, self._state.selectors)
                if mode not in prepared.template.output.modes:
                    offered = ", ".join(m.value for m in prepared.template.output.modes)
                    raise ConfigError(f"template {prepared.template.name!r} does not support {mode.value} scoring "
                                      f"(it offers: {offered})")
                request = JudgeRequest(item_id=setup.example.id, prompt=prepared.prompt, mode=mode,
                                       sampling=judge.sampling, top_k=top_k)
                backend = self._trial_backend(judge)
                started = time.perf_counter()
                result = self._state.run_on_loop(_ask(backend, request))
                judgment = score_result(request, result, judge.name)
            except BaseException as exc:
                reply_to.post_message(TrialFailed(judge.name, _describe(exc)))
                raise
            if not get_current_worker().is_cancelled:
                reply_to.post_message(TrialFinished(judge.name, prepared, judgment, time.perf_counter() - started))

        return start_thread_work(self.app, trial, group=TRIAL_GROUP, description="Trying the judge")

    def _trial_backend(self, judge: JudgeConfig) -> JudgeBackend:
        """One backend per judge configuration, kept open for the next trial."""
        from dialjudge.core.judges.run.config import judge_config_to_dict

        state = self._state
        key = repr(sorted(judge_config_to_dict(judge).items()))
        with state.lock:
            backend = state.backends.get(key)
            if backend is None:
                backend = state.backends[key] = self.services.make_backend(judge)
        return backend

    def close_trial_judges(self) -> None:
        """Close the judges the lab opened (a local model's thread and memory)."""
        state = self._state
        with state.lock:
            backends = list(state.backends.values())
            state.backends.clear()
        if backends:
            closer = threading.Thread(target=lambda: state.run_and_close_loop(_close_all(backends)),
                                      name="closing trial judges", daemon=True)
            closer.start()

    # -- saving ----------------------------------------------------------------------------

    def save_template(self, text: str, reply_to: MessagePump, *, name: str | None = None) -> Worker[None]:
        """Save the edited template in the user's template folder, under ``name`` (the text's own name
        is rewritten) or the name its text gives; ``reply_to`` receives :class:`TemplateSaved`.

        Saving under a shipped template's name overrides it: the screen asks before it does that.
        """

        def save() -> None:
            from dialjudge.core.api import is_shipped_name, parse_template, renamed_template_text
            from dialjudge.core.judges.prompts.personas import save_template

            current = parse_template(text, LAB_SOURCE).name
            final = text if name is None or name == current else renamed_template_text(text, name)
            saved_name = name or current
            path = save_template(final, saved_name)
            reply_to.post_message(TemplateSaved(saved_name, str(path), is_shipped_name(saved_name)))

        return start_thread_work(self.app, save, group=SAVE_GROUP, description="Saving the template")

    def revert_template(self, template: Template, reply_to: MessagePump) -> Worker[None]:
        """Put the shipped template back in place of the user's override (kept beside, renamed)."""

        def revert() -> None:
            from dialjudge.core.api import revert_override

            kept = revert_override(template)
            reply_to.post_message(TemplateReverted(template.name, str(kept)))

        return start_thread_work(self.app, revert, group=SAVE_GROUP, description="Reverting the template")

    def save_persona(self, persona: Persona, reply_to: MessagePump) -> Worker[None]:
        """Save a persona to the user's persona folder; ``reply_to`` receives :class:`PersonaSaved`."""

        def save() -> None:
            from dialjudge.core.judges.prompts.personas import save_persona

            path = save_persona(persona)
            reply_to.post_message(PersonaSaved(persona.name, str(path)))

        return start_thread_work(self.app, save, group=SAVE_GROUP, description="Saving the persona")


async def _ask(backend: JudgeBackend, request: Any) -> Any:
    await backend.open()
    await backend.check_mode(request.mode, request.top_k)
    return await backend.complete(request)


async def _close_all(backends: Sequence[JudgeBackend]) -> None:
    for backend in backends:
        await backend.close()


def _describe(exc: BaseException) -> str:
    from dialjudge.core.errors import DialjudgeError

    return str(exc) if isinstance(exc, DialjudgeError) else f"{type(exc).__name__}: {exc}"
