"""The search space: judge variants declared in a TOML file (format: prompts/search/README.md).

A space lists variants explicitly (``[[variant]]`` tables), as a product of choices
(``[grid]``), or both; every variant starts from ``[defaults]``. ``[search]`` holds the
search settings (split, successive halving, budget). Every error names the key it is about.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field, fields, replace
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from ..config import tomllib
from ..errors import ConfigError
from ..judges.prompts.fewshot import FewShotSetting
from ..judges.types import ScoringMode

COEFFICIENTS = ("spearman", "pearson", "kendall")


@dataclass(frozen=True)
class Variant:
    """One judge configuration the search tries."""

    name: str
    template: str = "likert-1to5"
    aspect: str | None = None
    #: Replaces the template's definition of ``aspect`` (the [aspects] table) when set.
    aspect_definition: str | None = None
    persona: str = "none"
    fewshot: str = "none"
    mode: str | None = None
    top_k: int = 0
    judge: str = "smollm2"

    def describe(self) -> str:
        """The settings in one line, for tables."""
        parts = [self.template, f"aspect={self.aspect or '–'}"]
        if self.aspect_definition:
            parts.append("definition=custom")
        parts += [f"persona={self.persona}", f"fewshot={self.fewshot}", f"mode={self.mode or 'default'}"]
        if self.top_k:
            parts.append(f"top-{self.top_k}")
        parts.append(f"judge={self.judge}")
        return " ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: Variant keys, with the type a TOML value must have (a list of them in [grid]).
VARIANT_KEYS: dict[str, type] = {f.name: (int if f.name == "top_k" else str) for f in fields(Variant)}


@dataclass(frozen=True)
class SearchSettings:
    quality: str | None = None
    #: Most judgments the search may make (tuning and held-out together); 0: no limit.
    budget: int = 0
    seed: int = 0
    #: Share of the contexts held out for the final report.
    heldout_fraction: float = 0.3
    #: Tuning contexts every variant is judged on in the first round.
    first_sample: int = 8
    #: Successive halving's factor: keep 1/eta of the variants, multiply the sample by eta.
    eta: int = 2
    #: Variants (best on tuning) judged on the held-out part.
    finalists: int = 2
    #: The variant the winner is compared with (the starting prompt); default: the first.
    baseline: str | None = None
    coefficient: str = "spearman"
    #: Bootstrap resamples (of contexts) for the held-out CIs and the paired comparison.
    n_boot: int = 1000


@dataclass(frozen=True)
class SearchSpace:
    variants: tuple[Variant, ...]
    settings: SearchSettings = field(default_factory=SearchSettings)
    source: str = ""

    @property
    def baseline(self) -> Variant:
        name = self.settings.baseline
        return next(v for v in self.variants if v.name == name) if name else self.variants[0]

    def variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise ConfigError(f"the search space has no variant {name!r}")

    def with_settings(self, **changes: Any) -> "SearchSpace":
        """The space with some settings replaced (command-line options); None leaves one as it is."""
        given = {k: v for k, v in changes.items() if v is not None}
        settings = replace(self.settings, **given)
        _check_settings(settings, "option")
        return replace(self, settings=settings)


def load_space(path: Path | str) -> SearchSpace:
    """A search space from a file, or one shipped with dialjudge by name (``example``: see
    :func:`packaged_spaces`), so that the examples work outside a checkout."""
    file = Path(path).expanduser()
    if not file.is_file():
        packaged = _packaged_space(str(path))
        if packaged is not None:
            return parse_space(packaged.read_text(encoding="utf-8"), f"{packaged.name} (shipped with dialjudge)")
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        names = ", ".join(packaged_spaces())
        raise ConfigError(f"{path}: cannot read the search space: {exc.strerror} "
                          f"(the spaces shipped with dialjudge, by name: {names})") from None
    return parse_space(text, str(path))


def packaged_spaces() -> list[str]:
    """Names of the search spaces shipped with dialjudge (``prompts/search/NAME.toml``)."""
    folder = resources.files("dialjudge.prompts") / "search"
    return sorted(entry.name[: -len(".toml")] for entry in folder.iterdir() if entry.name.endswith(".toml"))


def _packaged_space(name: str) -> Any:
    """The shipped space called ``name`` (``example``, ``example.toml`` or ``prompts/search/example.toml``)."""
    stem = Path(name).name
    stem = stem[: -len(".toml")] if stem.endswith(".toml") else stem
    if stem not in packaged_spaces():
        return None
    return resources.files("dialjudge.prompts") / "search" / f"{stem}.toml"


def parse_space(text: str, source: str = "<search space>") -> SearchSpace:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    return space_from_dict(raw, source)


def space_from_dict(raw: Mapping[str, Any], source: str = "<search space>") -> SearchSpace:
    _only(raw, {"search", "defaults", "variant", "grid"}, source, "")
    settings = _settings(_table(raw, "search", source), source)
    defaults = _variant_fields(_table(raw, "defaults", source), source, "defaults", allow_name=False)
    _make_variant({**defaults, "name": "defaults"}, source, "defaults")  # a wrong default is named as one
    variants: list[Variant] = []
    listed = raw.get("variant", [])
    if not isinstance(listed, list) or not all(isinstance(t, Mapping) for t in listed):
        raise ConfigError(f"{source}: variant must be an array of tables ([[variant]])")
    for index, table in enumerate(listed):
        where = f"variant[{index}]"
        values = _variant_fields(table, source, where, allow_name=True)
        if "name" not in values:
            raise ConfigError(f"{source}: {where}.name is missing (every listed variant needs a name)")
        variants.append(_make_variant({**defaults, **values}, source, where))
    variants += _grid(_table(raw, "grid", source), defaults, source)
    if not variants:
        raise ConfigError(f"{source}: the space has no variants (add [[variant]] tables or a [grid])")
    names = [v.name for v in variants]
    for name in names:
        if names.count(name) > 1:
            raise ConfigError(f"{source}: two variants are named {name!r} (variant names must differ)")
    if settings.baseline is not None and settings.baseline not in names:
        raise ConfigError(f"{source}: search.baseline names {settings.baseline!r}, which is not a variant "
                          f"(variants: {', '.join(names)})")
    if settings.finalists > len(variants):
        settings = replace(settings, finalists=len(variants))
    return SearchSpace(tuple(variants), settings, source)


def _grid(table: Mapping[str, Any], defaults: Mapping[str, Any], source: str) -> list[Variant]:
    if not table:
        return []
    choices: dict[str, list[Any]] = {}
    for key, value in table.items():
        where = f"grid.{key}"
        if key == "name" or key not in VARIANT_KEYS:
            raise ConfigError(f"{source}: {where} is not a variant setting "
                              f"(grid keys: {', '.join(k for k in VARIANT_KEYS if k != 'name')})")
        if not isinstance(value, list) or not value:
            raise ConfigError(f"{source}: {where} must be a non-empty list of choices")
        for i, item in enumerate(value):
            _check_type(item, VARIANT_KEYS[key], source, f"{where}[{i}]")
        choices[key] = value
    varying = [k for k, v in choices.items() if len(v) > 1]
    out = []
    for combo in itertools.product(*choices.values()):
        values = dict(zip(choices, combo))
        label = ",".join(f"{k}={_short(values[k])}" for k in varying) or "grid"
        out.append(_make_variant({**defaults, **values, "name": label}, source, "grid"))
    return out


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 24 else text[:21] + "…"


def _make_variant(values: Mapping[str, Any], source: str, where: str) -> Variant:
    variant = Variant(**values)
    try:
        FewShotSetting.parse(variant.fewshot)
    except ConfigError as exc:
        raise ConfigError(f"{source}: {where}.fewshot: {exc}") from None
    if variant.mode is not None and variant.mode not in {m.value for m in ScoringMode}:
        raise ConfigError(f"{source}: {where}.mode must be one of {', '.join(m.value for m in ScoringMode)}, "
                          f"not {variant.mode!r}")
    if variant.top_k < 0:
        raise ConfigError(f"{source}: {where}.top_k must be 0 or more, not {variant.top_k}")
    if variant.aspect_definition is not None and not variant.aspect:
        raise ConfigError(f"{source}: {where}.aspect_definition needs an aspect to define (set {where}.aspect)")
    return variant


def _variant_fields(table: Mapping[str, Any], source: str, where: str, *, allow_name: bool) -> dict[str, Any]:
    allowed = set(VARIANT_KEYS) - (set() if allow_name else {"name"})
    _only(table, allowed, source, f"{where}.")
    for key, value in table.items():
        _check_type(value, VARIANT_KEYS[key], source, f"{where}.{key}")
    return dict(table)


def _settings(table: Mapping[str, Any], source: str) -> SearchSettings:
    kinds = {f.name: f.type for f in fields(SearchSettings)}
    _only(table, set(kinds), source, "search.")
    values: dict[str, Any] = {}
    for key, value in table.items():
        expected: type = float if key == "heldout_fraction" else int if key in (
            "budget", "seed", "first_sample", "eta", "finalists", "n_boot") else str
        _check_type(value, expected, source, f"search.{key}")
        values[key] = float(value) if expected is float else value
    settings = SearchSettings(**values)
    _check_settings(settings, source)
    return settings


def _check_settings(s: SearchSettings, source: str) -> None:
    if not 0.0 < s.heldout_fraction < 1.0:
        raise ConfigError(f"{source}: search.heldout_fraction must be between 0 and 1, not {s.heldout_fraction}")
    if s.budget < 0:
        raise ConfigError(f"{source}: search.budget must be 0 (no limit) or more, not {s.budget}")
    if s.first_sample < 1:
        raise ConfigError(f"{source}: search.first_sample must be at least 1 context, not {s.first_sample}")
    if s.eta < 2:
        raise ConfigError(f"{source}: search.eta must be at least 2, not {s.eta}")
    if s.finalists < 1:
        raise ConfigError(f"{source}: search.finalists must be at least 1, not {s.finalists}")
    if s.n_boot < 0:
        raise ConfigError(f"{source}: search.n_boot must be 0 or more, not {s.n_boot}")
    if s.coefficient not in COEFFICIENTS:
        raise ConfigError(f"{source}: search.coefficient must be one of {', '.join(COEFFICIENTS)}, "
                          f"not {s.coefficient!r}")


def _check_type(value: Any, expected: type, source: str, where: str) -> None:
    ok = (isinstance(value, (int, float)) and not isinstance(value, bool) if expected is float
          else isinstance(value, int) and not isinstance(value, bool) if expected is int
          else isinstance(value, expected))
    if not ok:
        kind = {str: "a string", int: "a whole number", float: "a number"}[expected]
        raise ConfigError(f"{source}: {where} must be {kind}, not {value!r}")


def _table(raw: Mapping[str, Any], key: str, source: str) -> Mapping[str, Any]:
    value = raw.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{source}: {key} must be a table ([{key}])")
    return value


def _only(table: Mapping[str, Any], allowed: set[str], source: str, prefix: str) -> None:
    for key in table:
        if key not in allowed:
            raise ConfigError(f"{source}: {prefix}{key} is not a known key (known: {', '.join(sorted(allowed))})")
