"""dialjudge.toml: where data lives, which judges exist, where user templates are.

The file is found at ``$DIALJUDGE_CONFIG`` when set (tests use it), else in the
user config directory. A missing file means the bundled defaults. Every value is
checked here, so a typo is reported with the key that holds it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import platformdirs

from .backend_rules import backend_rules
from .errors import ConfigError
from .judge_config import PRESET_ALIASES, SAMPLING_PRESETS, JudgeConfig, Sampling

__all__ = [
    "APP_NAME", "BUNDLED_JUDGE", "BUNDLED_MIN_VALID_MASS", "CONFIG_ENV", "DATA_DIR_ENV", "ENDPOINTS", "PRESET_ALIASES",
    "PROBABILITY_CONTINUATIONS", "SAMPLING_PRESETS", "Config", "JudgeConfig", "ModelPrice", "Sampling", "bundled_judge",
    "config_path", "load_config", "parse_config", "parse_judges", "user_config_dir", "user_data_dir",
]

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

CONFIG_ENV = "DIALJUDGE_CONFIG"
DATA_DIR_ENV = "DIALJUDGE_DATA_DIR"
APP_NAME = "dialjudge"

#: The judge every fresh install has: the bundled SmolLM2-135M-Instruct GGUF.
BUNDLED_JUDGE = "smollm2"

ENDPOINTS = ("chat", "completions")


def user_config_dir() -> Path:
    return Path(platformdirs.user_config_dir(APP_NAME))


def user_data_dir() -> Path:
    """Run store, saved templates and personas. ``$DIALJUDGE_DATA_DIR`` overrides it."""
    env = os.environ.get(DATA_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_data_dir(APP_NAME))


def config_path() -> Path:
    env = os.environ.get(CONFIG_ENV)
    if env:
        return Path(env).expanduser()
    return user_config_dir() / "dialjudge.toml"


@dataclass(frozen=True)
class ModelPrice:
    """What an API model costs, in the user's currency per million tokens (``[prices."MODEL"]``)."""

    input_per_million: float
    output_per_million: float
    #: What a batch engine charges (``batch_input_per_million``, ``batch_output_per_million``: the OpenAI
    #: Batch API's are half the live ones); None: the live price. A batch run's cost uses them.
    batch_input_per_million: float | None = None
    batch_output_per_million: float | None = None

    def for_batch(self) -> ModelPrice:
        """The prices a batch run pays (the live ones where no batch price is set)."""
        return ModelPrice(
            self.input_per_million if self.batch_input_per_million is None else self.batch_input_per_million,
            self.output_per_million if self.batch_output_per_million is None else self.batch_output_per_million)


@dataclass(frozen=True)
class Config:
    path: Path | None = None
    data_dirs: tuple[Path, ...] = ()
    template_dirs: tuple[Path, ...] = ()
    judges: Mapping[str, JudgeConfig] = field(default_factory=dict)
    #: Per API model name; no built-in prices (they go stale), so a cost is only estimated where given.
    prices: Mapping[str, ModelPrice] = field(default_factory=dict)

    def judge(self, name: str) -> JudgeConfig:
        try:
            return self.judges[name]
        except KeyError:
            known = ", ".join(sorted(self.judges)) or "none"
            raise ConfigError(f"no judge named {name!r} (configured: {known})") from None


#: The bundled judge's least valid mass (every other judge: 0.5). Forced to continue "Score:",
#: SmolLM2-135M puts 35-53% of its probability on the ratings and most of the rest on copying the
#: prompt's "N" (measured on the first 12 USR Topical-Chat items, likert-1to5). Its readings there
#: are stable, so it is scored from 30% up, and the mass shows beside every judgment; a judgment
#: whose answer is mostly not a rating still fails.
BUNDLED_MIN_VALID_MASS = 0.3


#: How a judge scores a template when the user names neither a mode nor a constraint
#: (``options.scoring``, template name -> one of these): a scoring mode, or generate mode held to
#: the template's answer format ("constrained") or after a free reasoning line ("reasoning").
SCORING_CHOICES = ("logprob", "yesno", "generate", "constrained", "reasoning")

#: The bundled judge's way of scoring each shipped template, chosen by measurement (README, "The
#: bundled judge on every shipped template": the share of items scored and Spearman's rho with the
#: humans, with the commands). Templates not named here keep their preferred mode.
BUNDLED_SCORING: Mapping[str, str | Mapping[str, str]] = {
    # Probability scoring fails every item: after "The score is" SmolLM2 puts about 3% on "0.0".."1.0".
    "adv-0to1": "constrained",
    # Probability scoring leaves about 1 item in 6 below 30% on "1".."5" (it copies "Score: N"'s "N").
    "likert-1to5": "constrained",
    # Without examples it puts about 17% on "0".."2" after "Rating:", and held to the format it answers
    # 2 to every item; with three random examples (Huynh et al.'s few-shot setting) about half.
    "fed-fewshot": {"way": "logprob", "fewshot": "random:3"},
    # The same on whole dialogues (it copies the "r" of "Rating: r/2"; constrained, it answers 2 to
    # every dialogue); two examples, as whole dialogues are long.
    "fed-fewshot-dialog": {"way": "logprob", "fewshot": "random:2"},
    # On USR's 0/1 labels it answers "no"/"yes" (about 10% on the labels); with three examples, 55-60%,
    # so every item is scored, but its likeliest label is 1 on every item (README: not solved yet).
    "label-choice": {"way": "logprob", "fewshot": "random:3"},
}


def bundled_judge() -> JudgeConfig:
    return JudgeConfig(name=BUNDLED_JUDGE, backend=backend_rules().model_file_backend, model="SmolLM2-135M-Instruct Q4_1",
                       extra={"min_valid_mass": BUNDLED_MIN_VALID_MASS, "scoring": dict(BUNDLED_SCORING)})


def load_config(path: Path | None = None) -> Config:
    """Read and validate the config file; a missing file gives the defaults."""
    path = path or config_path()
    if not path.exists():
        if os.environ.get(CONFIG_ENV):
            raise ConfigError(f"{path}: file not found (named by ${CONFIG_ENV})")
        return Config(path=None, judges={BUNDLED_JUDGE: bundled_judge()})
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays or tables
        raise ConfigError(f"{path}: not valid TOML: arrays or tables nested too deeply") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    return parse_config(raw, path)


def parse_config(raw: Mapping[str, Any], path: Path | None = None) -> Config:
    where = str(path) if path else "config"
    base = path.parent if path else Path.cwd()
    _only_keys(raw, {"data", "templates", "judges", "prices"}, where, "")

    data = _table(raw, "data", where)
    _only_keys(data, {"dirs"}, where, "data.")
    templates = _table(raw, "templates", where)
    _only_keys(templates, {"dirs"}, where, "templates.")

    judges: dict[str, JudgeConfig] = {BUNDLED_JUDGE: bundled_judge(), **parse_judges(raw, where)}

    return Config(
        path=path,
        data_dirs=tuple(_paths(data.get("dirs", []), base, where, "data.dirs")),
        template_dirs=tuple(_paths(templates.get("dirs", []), base, where, "templates.dirs")),
        judges=judges,
        prices=_parse_prices(_table(raw, "prices", where), where),
    )


def parse_judges(raw: Mapping[str, Any], where: str) -> dict[str, JudgeConfig]:
    """The ``[judges.NAME]`` tables of ``raw`` (a config file, or an experiment file that declares its
    judges the same way), each checked with errors naming ``where`` and the key."""
    judges: dict[str, JudgeConfig] = {}
    for name, table in _table(raw, "judges", where).items():
        if not isinstance(table, Mapping):
            raise ConfigError(f"{where}: judges.{name} must be a table")
        judges[name] = _parse_judge(name, table, where)
    return judges


_PRICE_KEYS = {"input_per_million", "output_per_million"}
_BATCH_PRICE_KEYS = {"batch_input_per_million", "batch_output_per_million"}


def _parse_prices(table: Mapping[str, Any], where: str) -> dict[str, ModelPrice]:
    prices = {}
    for model, t in table.items():
        key = f'prices."{model}"'
        if not isinstance(t, Mapping):
            raise ConfigError(f"{where}: {key} must be a table with input_per_million and output_per_million")
        _only_keys(t, _PRICE_KEYS | _BATCH_PRICE_KEYS, where, key + ".")
        values = {}
        for name in sorted(_PRICE_KEYS | (_BATCH_PRICE_KEYS & set(t))):
            value = _get(t, name, (int, float), where, key)
            if value < 0:
                raise ConfigError(f"{where}: {key}.{name} must be 0 or more, not {value}")
            values[name] = float(value)
        prices[str(model)] = ModelPrice(**values)
    return prices


_JUDGE_KEYS = {
    "backend", "model", "model_path", "n_threads", "n_threads_batch", "n_gpu_layers", "n_ctx", "base_url", "api_key_env", "api_key",
    "endpoint", "concurrency", "timeout", "max_retries", "preset", "temperature", "top_p",
    "max_tokens", "presence_penalty", "frequency_penalty", "seed", "options",
}


def _parse_judge(name: str, t: Mapping[str, Any], where: str) -> JudgeConfig:
    key = f"judges.{name}"
    _only_keys(t, _JUDGE_KEYS, where, key + ".")
    if "api_key" in t:
        raise ConfigError(
            f"{where}: {key}.api_key: keys are never read from the config file; "
            "put the key in an environment variable and name it in api_key_env"
        )
    backend = _get(t, "backend", str, where, key)
    backends = backend_rules()
    if backend not in backends.required_keys:
        raise ConfigError(f"{where}: {key}.backend must be one of {', '.join(backends.names())}, not {backend!r}")
    endpoint = _get(t, "endpoint", str, where, key, "chat")
    if endpoint not in ENDPOINTS:
        raise ConfigError(f"{where}: {key}.endpoint must be chat or completions, not {endpoint!r}")
    for required in backends.required_keys[backend]:
        if not t.get(required):
            raise ConfigError(f"{where}: {key}.{required} is required for the {backend} backend")

    preset_name = _get(t, "preset", str, where, key, "greedy")
    preset_name = PRESET_ALIASES.get(preset_name, preset_name)
    if preset_name not in SAMPLING_PRESETS:
        raise ConfigError(f"{where}: {key}.preset must be one of {', '.join(SAMPLING_PRESETS)}")
    preset = SAMPLING_PRESETS[preset_name]
    sampling = Sampling(
        temperature=_get(t, "temperature", (int, float), where, key, preset.temperature),
        top_p=_get(t, "top_p", (int, float), where, key, preset.top_p),
        max_tokens=_get(t, "max_tokens", int, where, key, preset.max_tokens),
        presence_penalty=_get(t, "presence_penalty", (int, float), where, key, preset.presence_penalty),
        frequency_penalty=_get(t, "frequency_penalty", (int, float), where, key, preset.frequency_penalty),
        seed=_get(t, "seed", int, where, key, preset.seed),
    )
    model_path = t.get("model_path")
    if model_path is not None:
        model_path = str(Path(str(model_path)).expanduser())
    return JudgeConfig(
        name=name,
        backend=backend,
        model=_get(t, "model", str, where, key, Path(model_path).stem if model_path else ""),
        model_path=model_path,
        n_threads=_at_least(_get(t, "n_threads", int, where, key, None), 1, where, f"{key}.n_threads"),
        n_threads_batch=_at_least(_get(t, "n_threads_batch", int, where, key, None), 1, where,
                                  f"{key}.n_threads_batch"),
        n_gpu_layers=_at_least(_get(t, "n_gpu_layers", int, where, key, None), -1, where,
                               f"{key}.n_gpu_layers", hint=" (-1 offloads every layer)"),
        n_ctx=_get(t, "n_ctx", int, where, key, 4096),
        base_url=_get(t, "base_url", str, where, key, None),
        api_key_env=_get(t, "api_key_env", str, where, key, None),
        endpoint=endpoint,
        concurrency=_positive(_get(t, "concurrency", int, where, key, 4), where, f"{key}.concurrency"),
        timeout=float(_get(t, "timeout", (int, float), where, key, 120.0)),
        max_retries=_get(t, "max_retries", int, where, key, 4),
        sampling=sampling,
        extra=_probability_options(dict(_get(t, "options", dict, where, key, {})), where, f"{key}.options"),
    )


#: Judge options of probability scoring (core.judges.probability), checked here so that a bad value
#: is named before a run starts.
PROBABILITY_CONTINUATIONS = ("auto", "template", "continue", "prefill", "unprefixed")


def _probability_options(options: dict[str, Any], where: str, key: str) -> dict[str, Any]:
    mass = options.get("min_valid_mass")
    if mass is not None and (isinstance(mass, bool) or not isinstance(mass, (int, float)) or not 0 <= mass <= 1):
        raise ConfigError(f"{where}: {key}.min_valid_mass must be a number from 0 to 1 (the least probability "
                          f"the valid answers must hold at the answer position), not {mass!r}")
    how = options.get("continuation")
    if how is not None and how not in PROBABILITY_CONTINUATIONS:
        raise ConfigError(f"{where}: {key}.continuation must be one of {', '.join(PROBABILITY_CONTINUATIONS)}, "
                          f"not {how!r}")
    scoring = options.get("scoring")
    if scoring is not None:
        if not isinstance(scoring, Mapping) or not all(_scoring_way(how) for how in scoring.values()):
            raise ConfigError(f"{where}: {key}.scoring must be a table of template name = one of "
                              f"{', '.join(SCORING_CHOICES)}, or {{ way = one of those, fewshot = \"random:3\" }} "
                              f"(how the judge scores that template when a run names neither a mode nor a "
                              f"constraint), not {scoring!r}")
        options["scoring"] = {str(name): how if isinstance(how, str) else dict(how) for name, how in scoring.items()}
    template = options.get("chat_template")
    if template is not None:
        if not isinstance(template, str) or not template:
            raise ConfigError(f"{where}: {key}.chat_template must be the path of a GGUF file, a "
                              "tokenizer_config.json or a Jinja template")
        options["chat_template"] = str(Path(template).expanduser())
    return options


def _scoring_way(how: Any) -> bool:
    """A judge's way of scoring a template: a name, or a table with ``way`` and ``fewshot``."""
    if isinstance(how, Mapping):
        return set(how) <= {"way", "fewshot"} and how.get("way") in SCORING_CHOICES and isinstance(
            how.get("fewshot", "none"), str)
    return how in SCORING_CHOICES


def _table(raw: Mapping[str, Any], name: str, where: str) -> Mapping[str, Any]:
    value = raw.get(name, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: [{name}] must be a table")
    return value


def _only_keys(t: Mapping[str, Any], allowed: set[str], where: str, prefix: str) -> None:
    unknown = sorted(set(t) - allowed)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key {prefix}{unknown[0]} (allowed: {', '.join(sorted(allowed))})"
        )


_MISSING = object()


def _get(t: Mapping[str, Any], name: str, kind: Any, where: str, key: str, default: Any = _MISSING) -> Any:
    if name not in t:
        if default is _MISSING:
            raise ConfigError(f"{where}: {key}.{name} is required")
        return default
    value = t[name]
    if isinstance(value, bool) and kind is not bool:
        raise ConfigError(f"{where}: {key}.{name} must be {_kind_name(kind)}, not a boolean")
    if not isinstance(value, kind):
        raise ConfigError(f"{where}: {key}.{name} must be {_kind_name(kind)}, not {type(value).__name__}")
    return value


def _kind_name(kind: Any) -> str:
    if kind == (int, float):
        return "a number"
    return {int: "an integer", str: "a string", dict: "a table"}.get(kind, str(kind))


def _positive(value: int, where: str, key: str) -> int:
    if value < 1:
        raise ConfigError(f"{where}: {key} must be at least 1")
    return value


def _at_least(value: int | None, low: int, where: str, key: str, hint: str = "") -> int | None:
    if value is not None and value < low:
        raise ConfigError(f"{where}: {key} must be at least {low}{hint}, not {value}")
    return value


def _paths(values: Any, base: Path, where: str, key: str) -> list[Path]:
    if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
        raise ConfigError(f"{where}: {key} must be a list of paths")
    out = []
    for v in values:
        p = Path(v).expanduser()
        out.append(p if p.is_absolute() else (base / p).resolve())
    return out
