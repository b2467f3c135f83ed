"""Background work behind the Run screen (a mixin of the App): judge choices, run plans, resumes.

Templates and personas are read from disk once and kept on the app
(:attr:`RunControl.judge_choices`); the Run and Prompt lab screens follow
:attr:`RunControl.judge_choices_changed`, and a saved template or persona
reloads them. Planning a run reads the templates again and asks the run store
for an unfinished run of the same configuration, so both happen on a worker;
the screen that asked receives :class:`RunPlanned` and decides (resume, start
afresh). The run itself is the shell's :meth:`WorkspaceController.start_run`.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import work
from textual.message import Message
from textual.message_pump import MessagePump
from textual.signal import Signal
from textual.worker import Worker, get_current_worker

from dialjudge.core.config import JudgeConfig

if TYPE_CHECKING:
    from dialjudge.core.errors import TemplateError
    from dialjudge.core.judges.personas import Persona
    from dialjudge.core.judges.store import RunRecord
    from dialjudge.core.judges.templates import Template
    from dialjudge.core.judging import RunPlan
    from dialjudge.core.model import Dataset
    from dialjudge.core.workspace import Workspace

    from .services import Services

CHOICES_GROUP = "judge-choices"
PLAN_GROUP = "run-plan"


@dataclass(frozen=True)
class JudgeChoices:
    """Every template and persona a run or the Prompt lab may use."""

    templates: dict[str, "Template"]
    personas: dict[str, "Persona"]
    #: Broken user template files, skipped (each names its file, line and column).
    errors: tuple["TemplateError", ...] = ()
    #: Names of the templates read from dialjudge's own folder (not overridden by a user file).
    shipped: frozenset[str] = frozenset()


class JudgeChoicesLoaded(Message):
    """Templates and personas were (re)read from disk."""

    def __init__(self, choices: JudgeChoices) -> None:
        super().__init__()
        self.choices = choices


@dataclass(frozen=True)
class RunRequest:
    """What the Run screen's form asks for, before it is validated into a plan."""

    template: str
    judges: tuple[str, ...]
    mode: str
    aspect: str | None = None
    kpi: str | None = None
    personas: tuple[str, ...] = ()
    fewshot: str = "none"
    subset: str | None = None
    limit: int | None = None
    repeats: int = 1
    #: Judges typed in on the screen (a .gguf path), beside those of the config file.
    extra_judges: tuple[JudgeConfig, ...] = ()


class RunPlanned(Message):
    """A run request was validated; ``resumable`` is an unfinished run of the same configuration."""

    def __init__(self, plan: "RunPlan", resumable: "RunRecord | None") -> None:
        super().__init__()
        self.plan = plan
        self.resumable = resumable


_JUDGE_NAME_JUNK = re.compile(r"[^a-z0-9_-]+")


def gguf_judge(path: str, taken: set[str]) -> JudgeConfig:
    """A local judge for a .gguf file typed in, named after the file (unique among ``taken``)."""
    file = Path(path).expanduser()
    if file.suffix.lower() != ".gguf":
        from dialjudge.core.errors import ConfigError

        raise ConfigError(f"{path}: a local judge needs a .gguf model file")
    base = _JUDGE_NAME_JUNK.sub("-", file.stem.lower()).strip("-") or "gguf"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    return JudgeConfig(name=name, backend="llama", model=file.stem, model_path=str(file))


class RunControl:
    """Mixed into the App: the judge choices it keeps and the workers of the Run screen."""

    services: "Services"
    workspace: "Workspace"
    judge_choices: JudgeChoices | None = None

    @property
    def judge_choices_changed(self) -> Signal[JudgeChoices]:
        """Published with the new :class:`JudgeChoices` whenever they were (re)loaded."""
        signal = self.__dict__.get("_judge_choices_signal")
        if signal is None:
            signal = Signal(self, "judge-choices-changed")  # type: ignore[arg-type]
            self.__dict__["_judge_choices_signal"] = signal
        return signal

    def reload_judge_choices(self) -> Worker:
        """Read templates and personas again (after one was saved, or on first use)."""
        return self._load_judge_choices()

    @work(thread=True, exclusive=True, group=CHOICES_GROUP, exit_on_error=False,
          description="Reading templates and personas")
    def _load_judge_choices(self) -> None:
        from dialjudge.core.judges.personas import load_personas
        from dialjudge.core.judges.templates import load_templates, shipped_template_dir

        errors: list[TemplateError] = []
        dirs = self.services.config.template_dirs
        templates = load_templates(dirs, errors=errors)
        personas = load_personas(dirs)
        shipped_dir = str(shipped_template_dir())
        shipped = frozenset(name for name, t in templates.items() if t.source.startswith(shipped_dir))
        if not get_current_worker().is_cancelled:
            choices = JudgeChoices(templates, personas, tuple(errors), shipped)
            self.post_message(JudgeChoicesLoaded(choices))  # type: ignore[attr-defined]

    def on_judge_choices_loaded(self, message: JudgeChoicesLoaded) -> None:
        self.judge_choices = message.choices
        for error in message.choices.errors:
            self.notify(str(error), title="A template file was skipped", severity="warning",  # type: ignore[attr-defined]
                        timeout=8)
        self.judge_choices_changed.publish(message.choices)

    # -- planning and starting a run -------------------------------------------------------

    def plan_judge_run(self, request: RunRequest, dataset: "Dataset", reply_to: MessagePump) -> Worker:
        """Validate ``request`` into a plan on a worker; ``reply_to`` receives :class:`RunPlanned`."""
        return self._plan_judge_run(request, dataset, reply_to)

    @work(thread=True, exclusive=True, group=PLAN_GROUP, exit_on_error=False, description="Planning the run")
    def _plan_judge_run(self, request: RunRequest, dataset: "Dataset", reply_to: MessagePump) -> None:
        from dialjudge.core.errors import ConfigError
        from dialjudge.core.judging import plan_run

        config = self.services.config
        if request.extra_judges:
            for judge in request.extra_judges:
                if judge.model_path and not Path(judge.model_path).is_file():
                    raise ConfigError(f"{judge.model_path}: no such model file (judge {judge.name!r})")
            config = dataclasses.replace(
                config, judges={**config.judges, **{j.name: j for j in request.extra_judges}})
        plan = plan_run(dataset, config, template=request.template, judges=list(request.judges),
                        mode=request.mode, aspect=request.aspect, kpi=request.kpi, personas=request.personas,
                        fewshot=request.fewshot, subset=request.subset, limit=request.limit,
                        repeats=request.repeats)
        if not plan.config.select_items(dataset):  # fail here, with the form still open
            raise ConfigError(f"subset {plan.subset!r} of {dataset.name} holds no items to judge")
        with self.services.open_store() as store:
            resumable = store.find_resumable(plan.config.fingerprint)
        if not get_current_worker().is_cancelled:
            reply_to.post_message(RunPlanned(plan, resumable))

    def start_planned_run(self, plan: "RunPlan", *, resume_run: int | None = None) -> Worker:
        """Start ``plan``: continue run ``resume_run``, or (None) a new run even when one could resume.

        The Scores screen switches to the quality the run is compared with.
        """
        if plan.quality is not None and plan.quality in self.workspace.qualities():
            self.choose_view(quality=plan.quality)  # type: ignore[attr-defined]
        options: dict[str, Any] = {"run_id": resume_run} if resume_run is not None else {"resume": False}
        return self.start_run(plan.config, **options)  # type: ignore[attr-defined]
