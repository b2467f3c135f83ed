"""The Prompt lab's work: previews, trials, saving templates and personas.

The preview parses the edited template text and renders the chosen item
(few-shot examples included) on a worker, so a large dataset's BM25 index
never blocks typing. A template error is an expected outcome there, shown
inline with its line and column, not a failure. "Try on this item" sends one
request to a judge, in the judge process a run uses (core/api/run_worker.py), where
the judge stays open between trials and runs (a local model loads once). Templates and personas are saved in the user's folder, never
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

from dialjudge.core.api import (
    JudgeConfig,
    PreparedPrompt,
    ask_judge,
    prepare_prompt,
    save_edited_template,
    save_persona,
    trial_judgment,
    trial_request,
)
from dialjudge.core.api.prompt_lab import (
    FewShotCache,
    PromptSetup,
    judge_key,
)
from dialjudge.core.api.run_worker import ask_in_worker, runs_in_worker
from dialjudge.core.api.template_identity import revert_override
from dialjudge.core.api.types import (
    AnswerConstraint,
    JudgeBackend,
    Judgment,
    Persona,
    ScoringMode,
    Template,
)
from dialjudge.core.errors import ConfigError, DialjudgeError, TemplateError

from .base import start_thread_work

if TYPE_CHECKING:
    from ..services import Services

PREVIEW_GROUP = "prompt-preview"
TRIAL_GROUP = "prompt-trial"
SAVE_GROUP = "prompt-save"


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


@dataclass
class _LabState:
    """What the lab keeps between previews and trials (shared by its worker threads)."""

    #: Few-shot selectors by (dataset, setting, quality): a BM25 index is built once.
    selectors: FewShotCache = field(default_factory=dict)
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
        #: The templates whose edits the Prompt lab holds unsaved (the lab screen keeps this current).
        self.unsaved: tuple[str, ...] = ()

    def unsaved_text(self) -> str | None:
        """The unsaved edits a quit would lose, in words (None: none)."""
        if not self.unsaved:
            return None
        names = ", ".join(self.unsaved)
        return f"your edits to template{'s' if len(self.unsaved) > 1 else ''} {names} are not saved"

    # -- the preview -----------------------------------------------------------------------

    def render_preview(self, setup: PromptSetup, reply_to: MessagePump, *, generation: int) -> Worker[None]:
        """Render ``setup`` on a worker; ``reply_to`` receives :class:`PreviewRendered` with ``generation``
        (the editor's count of changes, so a late preview of older text is recognised and dropped)."""

        def render() -> None:
            prepared: PreparedPrompt | None
            error: Exception | None
            try:
                prepared, error = prepare_prompt(setup, self._state.selectors), None
            except (TemplateError, ConfigError) as exc:
                prepared, error = None, exc
            if not get_current_worker().is_cancelled:
                reply_to.post_message(PreviewRendered(generation, prepared, error))

        return start_thread_work(self.app, render, group=PREVIEW_GROUP, description="Rendering the prompt")

    # -- trying a judge --------------------------------------------------------------------

    def try_prompt(self, setup: PromptSetup, judge: JudgeConfig, mode: ScoringMode | None, reply_to: MessagePump,
                   *, top_k: int | None = None, constrain: AnswerConstraint = AnswerConstraint.OFF) -> Worker[None]:
        """Ask ``judge`` about ``setup``'s item now, scored as a run scores it (``mode`` and ``top_k``
        default to a run's: core/api/prompt_lab.trial_request); ``reply_to`` receives TrialFinished or TrialFailed."""

        def trial() -> None:
            try:
                prepared = prepare_prompt(setup, self._state.selectors)
                request = trial_request(prepared, setup.example.id, judge, mode, top_k=top_k, constrain=constrain)
                started = time.perf_counter()
                if runs_in_worker(self.services.session):
                    # In the judge process, with the judge a run there has open: a local model loads once
                    # for runs and trials, and its computations never overlap.
                    result = ask_in_worker(self.services.session, judge, request).result
                else:  # a judge made in this process (a test's)
                    result = self._state.run_on_loop(ask_judge(self._trial_backend(judge), request))
                judgment = trial_judgment(request, result, judge.name)
            except BaseException as exc:
                reply_to.post_message(TrialFailed(judge.name, _describe(exc)))
                raise
            if not get_current_worker().is_cancelled:
                reply_to.post_message(TrialFinished(judge.name, prepared, judgment, time.perf_counter() - started))

        return start_thread_work(self.app, trial, group=TRIAL_GROUP, description="Trying the judge")

    def _trial_backend(self, judge: JudgeConfig) -> JudgeBackend:
        """One backend per judge configuration, kept open for the next trial."""
        state = self._state
        key = judge_key(judge)
        with state.lock:
            backend = state.backends.get(key)
            if backend is None:
                backend = state.backends[key] = self.services.session.make_backend(judge)
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
            saved = save_edited_template(text, name)
            reply_to.post_message(TemplateSaved(saved.name, str(saved.path), saved.overrides_shipped))

        return start_thread_work(self.app, save, group=SAVE_GROUP, description="Saving the template")

    def revert_template(self, template: Template, reply_to: MessagePump) -> Worker[None]:
        """Put the shipped template back in place of the user's override (kept beside, renamed)."""

        def revert() -> None:
            kept = revert_override(template)
            reply_to.post_message(TemplateReverted(template.name, str(kept)))

        return start_thread_work(self.app, revert, group=SAVE_GROUP, description="Reverting the template")

    def save_persona(self, persona: Persona, reply_to: MessagePump) -> Worker[None]:
        """Save a persona to the user's persona folder; ``reply_to`` receives :class:`PersonaSaved`."""

        def save() -> None:
            path = save_persona(persona)
            reply_to.post_message(PersonaSaved(persona.name, str(path)))

        return start_thread_work(self.app, save, group=SAVE_GROUP, description="Saving the persona")


async def _close_all(backends: Sequence[JudgeBackend]) -> None:
    for backend in backends:
        await backend.close()


def _describe(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, DialjudgeError) else f"{type(exc).__name__}: {exc}"
