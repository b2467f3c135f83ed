"""What a run is: dataset x template x aspect/KPI x persona(s) x few-shot x judge(s) x mode x repeats.

A :class:`RunConfig` is a complete, JSON-serialisable snapshot: it carries the
exact template text and persona texts, and each judge's configuration without
any secret (only the *name* of the API key's environment variable). Its
:attr:`RunConfig.fingerprint` is stable across processes, so a killed run is
found again and resumed.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit, urlunsplit

from ...config import JudgeConfig, Sampling
from ...errors import ConfigError
from ...model import Dataset, Example
from ...subsets import parse_subset
from ..prompts.constraint import AnswerConstraint
from ..prompts.fewshot import FewShotSetting
from ..types import ScoringMode
from .pairwise import PairSetting, pair_examples
from .prepaired import as_candidates

SNAPSHOT_VERSION = 1

#: Judge settings that change how fast a run goes, never what it answers; left out
#: of the fingerprint so a killed run resumes after, say, raising the concurrency.
#: Folders shipped inside the package: a path below one is the same file wherever dialjudge is installed.
_SHIPPED_FOLDERS = ("prompts", "datasets")


@cache
def _shipped_folders() -> tuple[tuple[str, Path], ...]:
    package = Path(str(files("dialjudge")))
    return tuple((name, (package / name).resolve()) for name in _SHIPPED_FOLDERS)


def _install_independent(path: Any) -> Any:
    """A shipped file's path as ``dialjudge:prompts/templates/x.toml``, so that a run of a bundled
    template or dataset has one fingerprint in every checkout and installation; other paths as given."""
    if not path:
        return path
    resolved = Path(str(path)).resolve()
    for name, folder in _shipped_folders():
        if resolved.is_relative_to(folder):
            return f"dialjudge:{name}/{resolved.relative_to(folder).as_posix()}"
    return path


_OPERATIONAL_JUDGE_KEYS = ("concurrency", "timeout", "max_retries", "n_threads", "n_threads_batch", "n_gpu_layers")

#: Option names that may hold a credential; dropped from every snapshot.
_SECRET_OPTION = re.compile(r"(api[_-]?key|secret|password|passwd|authorization|bearer|credential)", re.I)


def scrub_url(url: str | None) -> str | None:
    """Drop a user:password part from a base URL, which would otherwise be stored."""
    if not url:
        return url
    parts = urlsplit(url)
    if "@" not in parts.netloc:
        return url
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))


def judge_config_to_dict(config: JudgeConfig) -> dict[str, Any]:
    """A JudgeConfig as plain JSON data, with nothing secret in it."""
    return {
        "name": config.name,
        "backend": config.backend,
        "model": config.model,
        "model_path": config.model_path,
        "n_threads": config.n_threads,
        "n_threads_batch": config.n_threads_batch,
        "n_gpu_layers": config.n_gpu_layers,
        "n_ctx": config.n_ctx,
        "base_url": scrub_url(config.base_url),
        "api_key_env": config.api_key_env,
        "endpoint": config.endpoint,
        "concurrency": config.concurrency,
        "timeout": config.timeout,
        "max_retries": config.max_retries,
        "sampling": config.sampling.to_dict(),
        "options": {k: v for k, v in dict(config.extra).items() if not _SECRET_OPTION.search(str(k))},
    }


def judge_config_from_dict(data: Mapping[str, Any]) -> JudgeConfig:
    sampling = data.get("sampling") or {}
    return JudgeConfig(
        name=str(data["name"]),
        backend=str(data["backend"]),
        model=str(data.get("model", "")),
        model_path=data.get("model_path"),
        n_threads=data.get("n_threads"),
        n_threads_batch=data.get("n_threads_batch"),
        n_gpu_layers=data.get("n_gpu_layers"),
        n_ctx=int(data.get("n_ctx", 4096)),
        base_url=data.get("base_url"),
        api_key_env=data.get("api_key_env"),
        endpoint=str(data.get("endpoint", "chat")),
        concurrency=int(data.get("concurrency", 4)),
        timeout=float(data.get("timeout", 120.0)),
        max_retries=int(data.get("max_retries", 4)),
        sampling=Sampling(**sampling),
        extra=dict(data.get("options") or {}),
    )


@dataclass(frozen=True)
class JudgeSpec:
    """A judge taking part in a run: the name its backend is found under, and its config."""

    name: str
    config: JudgeConfig

    @classmethod
    def of(cls, config: JudgeConfig) -> "JudgeSpec":
        return cls(config.name, config)

    @property
    def sampling(self) -> Sampling:
        return self.config.sampling

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "config": judge_config_to_dict(self.config)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "JudgeSpec":
        return cls(str(data["name"]), judge_config_from_dict(data["config"]))


@dataclass(frozen=True)
class PersonaSpec:
    """A persona's exact text as used by the run (a snapshot of personas.Persona)."""

    name: str
    text: str
    description: str = ""

    @classmethod
    def of(cls, persona: Any) -> "PersonaSpec":
        return cls(str(persona.name), str(persona.text), str(getattr(persona, "description", "") or ""))

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "text": self.text, "description": self.description}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "PersonaSpec":
        return cls(str(data["name"]), str(data["text"]), str(data.get("description", "")))


@dataclass(frozen=True)
class JudgeVariant:
    """One column of results: a judge, possibly speaking as a persona (``judge@persona``)."""

    label: str
    judge: JudgeSpec
    persona: PersonaSpec | None


@dataclass(frozen=True)
class RunConfig:
    """Everything that determines a run's judgments."""

    dataset: str
    template: str
    template_text: str
    judges: tuple[JudgeSpec, ...]
    mode: ScoringMode = ScoringMode.GENERATE
    #: Paper 003's K for top-K weighting in logprob mode (0: restricted softmax over all choices).
    top_k: int = 3
    repeats: int = 1
    dataset_path: str | None = None
    subset: str = "all"
    #: When set, only these items (after the subset), in dataset order.
    item_ids: tuple[str, ...] = ()
    limit: int | None = None
    aspect: str | None = None
    kpi: str | None = None
    #: The human-rated quality the judgments are compared with (and few-shot examples are drawn for).
    quality: str | None = None
    #: ``None`` in the tuple stands for "no persona"; an empty tuple means no persona at all.
    personas: tuple[PersonaSpec | None, ...] = ()
    fewshot: FewShotSetting = field(default_factory=FewShotSetting)
    template_source: str = ""
    name: str = ""
    #: Generate mode: hold answers to the template's format (core.judges.prompts.grammar); changes the answers.
    constrain: AnswerConstraint = AnswerConstraint.OFF
    #: Recorded when the run starts (core.judges.store.provenance): versions, metric signatures and
    #: where each model ran. Describes the machine, so it is not part of the fingerprint.
    environment: Mapping[str, Any] = field(default_factory=dict, compare=False)
    #: Two-label qualities: the label a judge's "yes" means (chosen by the user); it decides the
    #: comparison, not the judgments, so it stays out of the fingerprint.
    yes_label: str | None = None
    #: A pairwise run (core.judges.run.pairwise): which pairs of each context's candidates are asked.
    pairs: PairSetting | None = None
    #: An imported run (core.imports): where its judgments came from (file, hash, format, importer
    #: version, the field each value was read from). None for a run judged here.
    imported: Mapping[str, Any] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "mode", ScoringMode(self.mode))
        object.__setattr__(self, "constrain", AnswerConstraint(self.constrain))
        if self.constrain is not AnswerConstraint.OFF and self.mode is not ScoringMode.GENERATE:
            raise ConfigError(f"constrained answers are for mode generate; mode {self.mode.value} reads the "
                              "probabilities of valid answers, which need no constraint")
        object.__setattr__(self, "judges", tuple(self.judges))
        object.__setattr__(self, "personas", tuple(self.personas))
        object.__setattr__(self, "item_ids", tuple(self.item_ids))
        if not self.judges:
            raise ConfigError("a run needs at least one judge")
        names = [j.name for j in self.judges]
        if len(set(names)) != len(names):
            raise ConfigError(f"a run lists the same judge twice: {', '.join(names)}")
        persona_names = [p.name if p else None for p in self.personas]
        if len(set(persona_names)) != len(persona_names):
            raise ConfigError("a run lists the same persona twice")
        if self.repeats < 1:
            raise ConfigError(f"repeats must be at least 1, not {self.repeats}")
        if self.top_k < 0:
            raise ConfigError(f"top_k must be 0 or more, not {self.top_k}")
        if self.limit is not None and self.limit < 1:
            raise ConfigError(f"limit must be at least 1, not {self.limit}")
        if not self.template_text.strip():
            raise ConfigError(f"template {self.template!r}: the run needs the template's text")
        try:
            parse_subset(self.subset)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None

    @classmethod
    def build(cls, dataset: Dataset | str, template: Any, judges: Sequence[JudgeConfig | JudgeSpec], *,
              personas: Sequence[Any | None] = (), fewshot: Any = None, **options: Any) -> "RunConfig":
        """A config from the live objects: a loaded Dataset (or its name), a templates.Template,
        JudgeConfigs, personas.Persona objects (None = without persona) and a FewShotSetting."""
        if isinstance(dataset, Dataset):
            options.setdefault("dataset_path", dataset.source or None)
            dataset = dataset.name
        text = getattr(template, "text", "")
        return cls(
            dataset=dataset, template=template.name, template_text=text,
            template_source=str(getattr(template, "source", "")),
            judges=tuple(j if isinstance(j, JudgeSpec) else JudgeSpec.of(j) for j in judges),
            personas=tuple(None if p is None else p if isinstance(p, PersonaSpec) else PersonaSpec.of(p)
                           for p in personas),
            fewshot=FewShotSetting() if fewshot is None else fewshot,
            **options,
        )

    # -- variants and items ----------------------------------------------------------------

    def variants(self) -> list[JudgeVariant]:
        """Judges x personas, judge-major: all of one judge's personas are run together."""
        personas: Sequence[PersonaSpec | None] = self.personas or (None,)
        out = []
        for judge in self.judges:
            for persona in personas:
                label = judge.name if persona is None else f"{judge.name}@{persona.name}"
                out.append(JudgeVariant(label, judge, persona))
        return out

    def select_items(self, dataset: Dataset) -> list[Example]:
        """The examples this run judges, in dataset order."""
        keep = parse_subset(self.subset)
        items = [ex for ex in dataset.examples if keep(ex)]
        if self.item_ids:
            wanted = set(self.item_ids)
            unknown = sorted(wanted - {ex.id for ex in dataset.examples})
            if unknown:
                raise ConfigError(
                    f"dataset {dataset.name!r} has no item {unknown[0]!r}"
                    + (f" (and {len(unknown) - 1} more unknown ids)" if len(unknown) > 1 else ""))
            items = [ex for ex in items if ex.id in wanted]
        if self.limit is not None:
            items = items[: self.limit]
        if self.pairs is not None:  # the candidates, paired: one item per asked order
            return pair_examples(items, self.pairs)
        return list(as_candidates(items))  # pre-paired items, judged one reply at a time: each reply

    # -- snapshot --------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": SNAPSHOT_VERSION,
            "name": self.name,
            "dataset": {"name": self.dataset, "path": self.dataset_path, "subset": self.subset,
                        "item_ids": list(self.item_ids), "limit": self.limit},
            "template": {"name": self.template, "source": self.template_source, "text": self.template_text},
            "aspect": self.aspect,
            "kpi": self.kpi,
            "quality": self.quality,
            "personas": [p.to_dict() if p else None for p in self.personas],
            "fewshot": self.fewshot.to_dict(),
            "judges": [j.to_dict() for j in self.judges],
            "mode": self.mode.value,
            "top_k": self.top_k,
            "repeats": self.repeats,
            # Only when on: the fingerprints of unconstrained runs stay as they were.
            **({"constrain": self.constrain.value} if self.constrain is not AnswerConstraint.OFF else {}),
            **({"environment": dict(self.environment)} if self.environment else {}),
            **({"yes_label": self.yes_label} if self.yes_label else {}),
            **({"pairs": self.pairs.to_dict()} if self.pairs is not None else {}),
            **({"imported": dict(self.imported)} if self.imported else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "RunConfig":
        version = data.get("version", SNAPSHOT_VERSION)
        if version > SNAPSHOT_VERSION:
            raise ConfigError(f"run config version {version} is newer than this dialjudge reads")
        ds, tpl = data["dataset"], data["template"]
        return cls(
            dataset=str(ds["name"]),
            dataset_path=ds.get("path"),
            subset=str(ds.get("subset", "all")),
            item_ids=tuple(ds.get("item_ids", ())),
            limit=ds.get("limit"),
            template=str(tpl["name"]),
            template_source=str(tpl.get("source", "")),
            template_text=str(tpl["text"]),
            aspect=data.get("aspect"),
            kpi=data.get("kpi"),
            quality=data.get("quality"),
            personas=tuple(PersonaSpec.from_dict(p) if p else None for p in data.get("personas", ())),
            fewshot=FewShotSetting.from_dict(data.get("fewshot", {})),
            judges=tuple(JudgeSpec.from_dict(j) for j in data["judges"]),
            mode=ScoringMode(data.get("mode", "generate")),
            top_k=int(data.get("top_k", 3)),
            repeats=int(data.get("repeats", 1)),
            constrain=AnswerConstraint(data.get("constrain", AnswerConstraint.OFF.value)),
            name=str(data.get("name", "")),
            environment=dict(data.get("environment") or {}),
            yes_label=data.get("yes_label"),
            pairs=PairSetting.from_dict(data["pairs"]) if data.get("pairs") else None,
            imported=dict(data["imported"]) if data.get("imported") else None,
        )

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, sort_keys=True, default=str)

    @property
    def template_hash(self) -> str:
        """The template's identity: 8 hex digits of its text's SHA-256. Two runs of templates with one
        name but different text (an edited copy) differ here."""
        return template_text_hash(self.template_text)

    @property
    def template_label(self) -> str:
        """The template's name with its identity, as every list of runs shows it: ``likert-1to5 #3f2a9c1e``."""
        return f"{self.template} #{self.template_hash}"

    @property
    def fingerprint(self) -> str:
        """Stable hash of everything that decides the judgments (not the run's name, not speed settings)."""
        data = self.to_dict()
        data.pop("name")
        data.pop("environment", None)
        data.pop("yes_label", None)
        data["dataset"]["path"] = _install_independent(data["dataset"].get("path"))
        data["template"]["source"] = _install_independent(data["template"].get("source"))
        for judge in data["judges"]:
            for key in _OPERATIONAL_JUDGE_KEYS:
                judge["config"].pop(key, None)
            # How the judge scores templates by default decides nothing: the run's own mode is above.
            (judge["config"].get("options") or {}).pop("scoring", None)
        payload = json.dumps(data, ensure_ascii=False, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]

    @property
    def label(self) -> str:
        """A short human description, for lists of runs."""
        if self.name:
            return self.name
        what = self.kpi or self.aspect or self.quality or "overall"
        judges = ",".join(j.name for j in self.judges)
        mode = self.mode.value if self.pairs is None else f"pairwise {self.pairs.spec} {self.mode.value}"
        return f"{self.dataset}/{self.subset} {self.template_label}:{what} {judges} {mode}"


def template_text_hash(text: str) -> str:
    """8 hex digits of the SHA-256 of a template's text (its identity beside its name)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]
