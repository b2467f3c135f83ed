"""Rescore a stored run without calling the model: another top-K, mode, parser or answer mapping.

The run store keeps, per judgment, the model's raw output, its probabilities over
the answers (``distribution``) and its most likely first answer tokens
(``top_logprobs``, schema 3). Rescoring re-renders each item's prompt from the
run's own template snapshot (the output spec depends on the item's quality
scale, and the parser ignores numbers copied from the prompt), checks that the
prompt is still the one that was asked, and scores the stored answer again with
:func:`dialjudge.core.judges.run.scoring.score_result`, the function the engine
uses. The result is a new, finished run whose ``source_run`` names the run it
came from; the source is never changed.

What can change:

* ``top_k``: paper 003's K (logprob mode). Exact as long as the new K is at most
  the number of first tokens the backend returned (at least 5, see
  ``backends.answers.top_logprobs_count``).
* ``mode``: between the probability modes (logprob <-> yesno) where the stored
  distribution holds the answers the new mode weighs. Generate runs stay generate.
* ``template``: a template whose output section (the parser: kind, scale,
  choices, JSON keys) replaces the run's; the prompt itself is the run's.
* ``mapping``: answer -> value, e.g. ``{"1": 0, "2": 0, "3": 0, "4": 1, "5": 1}``;
  every answer of the template gets a value, and the scale becomes the values' range.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ConfigError
from ...model import Dataset
from ..prompts.templates import get_template, load_template_file, parse_template
from ..run.config import RunConfig
from ..run.engine import TemplateRenderer
from ..run.events import RunStatus
from ..run.probability import judge_request
from ..run.scoring import score_result
from ..store.run_store import JudgmentKey, JudgmentWrite, RunStore
from ..types import BackendResult, Judgment, OutputKind, OutputSpec, RenderedPrompt, ScoringMode

if TYPE_CHECKING:
    from ..prompts.templates import Template

PROBABILITY_MODES = (ScoringMode.LOGPROB, ScoringMode.YESNO)


@dataclass(frozen=True)
class RescoreSettings:
    """What a rescoring changes; ``None`` keeps the source run's setting."""

    top_k: int | None = None
    mode: ScoringMode | None = None
    #: The TOML text of a template whose output section replaces the run's (a new parser).
    template_text: str | None = None
    template_source: str = ""
    #: Answer -> value on the new scale (an answer mapping).
    mapping: Mapping[str, float] | None = None
    name: str = ""

    def describe(self) -> str:
        parts = []
        if self.top_k is not None:
            parts.append(f"top-{self.top_k}" if self.top_k else "top-K off (expected value)")
        if self.mode is not None:
            parts.append(f"mode {self.mode.value}")
        if self.template_text is not None:
            parts.append(f"parser from {self.template_source or 'a new template'}")
        if self.mapping:
            parts.append("mapping " + ", ".join(f"{a}={_num(v)}" for a, v in self.mapping.items()))
        return ", ".join(parts) or "the same settings"

    def to_dict(self) -> dict[str, Any]:
        return {"top_k": self.top_k, "mode": self.mode.value if self.mode else None,
                "template": self.template_source if self.template_text is not None else None,
                "mapping": dict(self.mapping) if self.mapping else None}


@dataclass(frozen=True)
class RescoreResult:
    run_id: int
    source_run: int
    rescored: int
    #: Judgments without a score in the new run (failed requests stay failed).
    failures: int
    #: Judgments whose normalised score differs from the source run's (failures included).
    changed: int
    settings: RescoreSettings = field(default_factory=RescoreSettings)


def parse_mapping(text: str) -> dict[str, float]:
    """``"1=0, 2=0, 4=1"`` -> ``{"1": 0.0, "2": 0.0, "4": 1.0}``, with a message naming the bad part."""
    out: dict[str, float] = {}
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        answer, sep, value = part.partition("=")
        if not sep or not answer.strip():
            raise ConfigError(f"answer mapping: {part!r} is not ANSWER=VALUE")
        try:
            out[answer.strip()] = float(value)
        except ValueError:
            raise ConfigError(f"answer mapping: the value of {answer.strip()!r} is not a number: {value.strip()!r}"
                              ) from None
    if not out:
        raise ConfigError("answer mapping: empty (give ANSWER=VALUE pairs, e.g. 1=0,2=0,3=1)")
    return out


def rescored_config(source: RunConfig, settings: RescoreSettings) -> RunConfig:
    """The source run's configuration with the new settings (checked before anything is written)."""

    changes: dict[str, Any] = {}
    if settings.top_k is not None:
        if settings.top_k < 0:
            raise ConfigError(f"top_k must be 0 or more, not {settings.top_k}")
        changes["top_k"] = settings.top_k
    mode = settings.mode or source.mode
    if mode is not source.mode:
        if source.mode not in PROBABILITY_MODES or mode not in PROBABILITY_MODES:
            raise ConfigError(f"a {source.mode.value} run cannot be rescored as {mode.value}: the stored answers "
                              "hold no probabilities for it (only logprob and yesno runs switch between each other)")
        changes["mode"] = mode
    if settings.template_text is not None:
        template = parse_template(settings.template_text, settings.template_source or "<rescore template>")
        changes.update(template=template.name, template_text=settings.template_text,
                       template_source=settings.template_source)
    offered = parse_template(changes.get("template_text", source.template_text), source.template).output.modes
    if mode not in offered:
        raise ConfigError(f"template {changes.get('template', source.template)!r} does not offer {mode.value} "
                          f"scoring (it offers: {', '.join(m.value for m in offered)})")
    if settings.mapping is not None and mode is ScoringMode.YESNO:
        raise ConfigError("yesno scores are p(yes) / (p(yes) + p(no)); an answer mapping has nothing to map")
    if settings.name:
        changes["name"] = settings.name
    return dataclasses.replace(source, **changes)


@dataclass(frozen=True)
class MappedOutputSpec(OutputSpec):
    """An output spec whose answers have the values of an answer mapping, in choice order."""

    values: tuple[float, ...] = ()

    def choice_values(self) -> list[float]:
        return list(self.values)


def mapped_spec(spec: OutputSpec, mapping: Mapping[str, float]) -> OutputSpec:
    """The output spec with the mapping's values; every answer needs one and no other answer may appear."""
    if spec.kind is OutputKind.LABEL:
        raise ConfigError("label answers are scored by their position; an answer mapping does not apply")
    if not spec.choices:
        raise ConfigError("the template's output lists no answers (choices) to map")
    unknown = sorted(set(mapping) - set(spec.choices))
    if unknown:
        raise ConfigError(f"answer mapping: {unknown[0]!r} is not an answer of the template "
                          f"(answers: {', '.join(spec.choices)})")
    missing = [c for c in spec.choices if c not in mapping]
    if missing:
        raise ConfigError(f"answer mapping: no value for {missing[0]!r} (every answer needs one: "
                          f"{', '.join(spec.choices)})")
    values = tuple(float(mapping[c]) for c in spec.choices)
    if min(values) == max(values):
        raise ConfigError("answer mapping: every answer gets the same value, so there is no scale")
    fields = {f.name: getattr(spec, f.name) for f in dataclasses.fields(OutputSpec)}
    return MappedOutputSpec(**{**fields, "min": min(values), "max": max(values)}, values=values)


class _Rescorer:
    """Scores one stored judgment under the new configuration."""

    def __init__(self, source: RunConfig, target: RunConfig, dataset: Dataset,
                 mapping: Mapping[str, float] | None) -> None:

        self._score = score_result
        self.source, self.target = source, target
        self._asked = TemplateRenderer(source, dataset.examples)
        self._reading = TemplateRenderer(target, dataset.examples) if target.template_text != source.template_text \
            else self._asked
        self._mapping = mapping
        self._variants = {v.label: v for v in target.variants()}
        self._examples = {ex.id: ex for ex in dataset.examples}
        if source.pairs is not None:  # a pairwise run's items are its asked pair orders
            self._examples.update((ex.id, ex) for ex in source.select_items(dataset))

    def __call__(self, judgment: Judgment) -> Judgment:
        variant = self._variants.get(judgment.judge)
        example = self._examples.get(judgment.item_id)
        if variant is None or example is None:
            what = f"judge {judgment.judge!r}" if variant is None else f"item {judgment.item_id!r}"
            raise ConfigError(f"the stored run has a judgment of {what}, which its configuration does not know")
        asked = self._asked(variant, example)
        if asked.hash != judgment.prompt_hash:
            raise ConfigError(
                f"item {judgment.item_id!r} ({judgment.judge}) no longer renders the prompt that was asked "
                "(the dataset or its file changed since the run); rescoring would read the answer against "
                "another prompt")
        spec = self._reading(variant, example).output if self._reading is not self._asked else asked.output
        mode = self.target.mode
        mapped = self._mapping is not None and mode is not ScoringMode.GENERATE
        if mapped:
            assert self._mapping is not None
            spec = mapped_spec(spec, self._mapping)
        request = judge_request(judgment.item_id, RenderedPrompt(asked.messages, spec, asked.template_name),
                                variant.judge.config, mode=mode, top_k=self.target.top_k, repeat=judgment.repeat)
        stored = BackendResult(raw_output=judgment.raw_output, choice_probs=judgment.distribution,
                               top_logprobs=judgment.top_logprobs, prompt_tokens=judgment.prompt_tokens,
                               evaluated_tokens=judgment.evaluated_tokens,
                               completion_tokens=judgment.completion_tokens, latency_s=judgment.latency_s,
                               valid_mass=judgment.valid_mass, mass_is_lower_bound=judgment.mass_is_lower_bound)
        new = self._score(request, stored, judgment.judge)
        if self._mapping is not None and not mapped:
            new = _map_generated(new, spec, self._mapping)
        # The answer was paid for by the source run: nothing was asked in this one.
        return dataclasses.replace(new, repeat=judgment.repeat, cached=True, sampling=judgment.sampling)


def _map_generated(judgment: Judgment, spec: OutputSpec, mapping: Mapping[str, float]) -> Judgment:
    """A parsed answer's value through the mapping (generate mode parses on the template's own scale)."""
    if judgment.score is None:
        return judgment
    target = mapped_spec(spec, mapping)
    for choice, value in zip(spec.choices, spec.choice_values()):
        if abs(value - judgment.score) <= 1e-9:
            score = float(mapping[choice])
            return dataclasses.replace(judgment, score=score, normalized=target.normalize(score))
    return dataclasses.replace(judgment, score=None, normalized=None,
                               error=f"the answer {_num(judgment.score)} is none of the mapped answers")


def check_rescorable(store: RunStore, run_id: int, target: RunConfig) -> None:
    """Refuse up front what cannot be rescored exactly (top-K beyond the stored tokens, old runs)."""
    if target.mode is not ScoringMode.LOGPROB or target.top_k <= 0:
        return
    failed = store.judgments.request_failed_keys(run_id)
    kept: list[int] = []
    for j in store.judgments.iter_judgments(run_id):
        if JudgmentKey(j.item_id, j.judge, j.repeat) in failed or j.distribution is None:
            continue
        if j.top_logprobs is None:
            raise ConfigError(f"run {run_id} was stored before judgments kept their top log-probabilities "
                              "(schema 3); it can be rescored with top-K 0 (the expected value) only")
        kept.append(len(j.top_logprobs))
    if kept and target.top_k > min(kept):
        raise ConfigError(f"run {run_id} kept the {min(kept)} most likely first tokens per answer; top-{target.top_k} "
                          f"needs {target.top_k}, so it can be rescored with top-K up to {min(kept)} only")


def rescore_run(store: RunStore, run_id: int, dataset: Dataset, settings: RescoreSettings, *,
                on_progress: Callable[[int, int], None] | None = None) -> RescoreResult:
    """Score run ``run_id``'s stored answers again under ``settings`` into a new run; no model is called."""
    record = store.runs.get_run(run_id)
    source = record.run_config
    if source.dataset != dataset.name:
        raise ConfigError(f"run {run_id} judged {source.dataset}, not {dataset.name}")
    target = rescored_config(source, settings)
    check_rescorable(store, run_id, target)
    rescorer = _Rescorer(source, target, dataset, settings.mapping)
    failed_requests = store.judgments.request_failed_keys(run_id)
    stored = list(store.judgments.iter_judgments(run_id))
    # Score everything before writing, so a refusal leaves no half-made run behind.
    rescored: list[tuple[Judgment, Judgment, bool]] = []
    for index, judgment in enumerate(stored):
        request_failed = JudgmentKey(judgment.item_id, judgment.judge, judgment.repeat) in failed_requests
        if request_failed or not judgment.prompt_hash:  # no answer to read (a failed request, a prompt too long)
            rescored.append((judgment, judgment, request_failed))
        else:
            rescored.append((judgment, rescorer(judgment), False))
        if on_progress is not None:
            on_progress(index + 1, len(stored))

    snapshot = {**target.to_dict(), "environment": dict(source.environment),
                "rescore": {"source_run": run_id, **settings.to_dict()}}
    fingerprint = _rescore_fingerprint(target, run_id, settings)
    new_id = store.runs.create_run(snapshot, fingerprint, name=target.name, total=record.total, source_run=run_id)
    # One transaction for the lot: a rescored 100,000-judgment run is one commit, not 100,000.
    store.judgments.add_judgments(new_id, (JudgmentWrite(judgment, request_failed=request_failed)
                                 for _, judgment, request_failed in rescored))
    store.runs.set_status(new_id, RunStatus.FINISHED)
    changed = sum(1 for old, new, _ in rescored if not _same(old.normalized, new.normalized))
    return RescoreResult(run_id=new_id, source_run=run_id, rescored=len(rescored),
                         failures=sum(1 for _, new, _ in rescored if new.failed), changed=changed, settings=settings)


def _rescore_fingerprint(target: RunConfig, source_run: int, settings: RescoreSettings) -> str:
    """Not the config's own fingerprint: an unfinished rescoring must never be resumed as a judged run."""
    payload = json.dumps({"config": target.fingerprint, "source_run": source_run, **settings.to_dict()},
                         sort_keys=True)
    return "rescore-" + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is b
    return abs(a - b) <= 1e-12


def _num(x: float) -> str:
    return f"{x:g}"


def resolve_template(name_or_path: str, template_dirs: Sequence[Path] = ()) -> Template:
    """A template by name (shipped, user or config folders), or from a .toml file."""

    path = Path(name_or_path).expanduser()
    if path.suffix == ".toml" and path.is_file():
        return load_template_file(path)
    return get_template(name_or_path, template_dirs)


def settings_from_options(*, top_k: int | None = None, mode: str | None = None, template: str | None = None,
                          mapping: str | None = None, name: str = "",
                          template_dirs: Sequence[Path] = ()) -> RescoreSettings:
    """Settings from what a user typed (the CLI's options, the app's dialog); empty means unchanged."""
    chosen = resolve_template(template, template_dirs) if template else None
    try:
        scoring = ScoringMode(mode) if mode else None
    except ValueError:
        raise ConfigError(f"mode must be logprob or yesno, not {mode!r}") from None
    return RescoreSettings(top_k=top_k, mode=scoring,
                           template_text=chosen.text if chosen is not None else None,
                           template_source=(chosen.source or chosen.name) if chosen is not None else "",
                           mapping=parse_mapping(mapping) if mapping else None, name=name)
