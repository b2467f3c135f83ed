"""An experiment file: a search space's variants run on every declared dataset, then ranked and gated.

The format extends the tuning search space's (``space.py``; docs/experiments.md): ``[defaults]``,
``[[variant]]`` and ``[grid]`` are the space's own tables, read by the space's parser, so a variant is
written the same way in both files. An experiment adds:

* ``[experiment]``: its name (runs are named ``<name>: <variant>``), the quality, item limit, subset,
  the bootstrap's resamples and seed, the leaderboard's level and metrics, and ``report``, the HTML
  report's path;
* ``[[datasets]]``: a catalogue ``name`` or a file ``path`` (relative to the experiment file), with a
  column ``map`` for tables with other column names, and its own quality, limit and subset;
* ``[judges.NAME]``: judges declared as in dialjudge.toml (parsed by the config's own parser), beside
  those of the config file;
* ``[gate]``: the rules of ``dialjudge check`` (``min``, ``no_worse_than``, ``max_failures``) with the
  judge and quality they test.

Every error names the file and the key (``experiment.toml: datasets[1].limit must be ...``; arrays of
tables count from 0, as the search space's ``variant[0]`` does).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Mapping

from ..config import JudgeConfig, parse_judges, tomllib
from ..errors import ConfigError, DataError
from ..gate_rules import CORRELATIONS, Rule, parse_rules
from ..loaders.column_map import ColumnMap, parse_column_map
from .space import Variant, _check_type, _only, _table, space_from_dict

#: The space's own tables: parsed by :func:`space.space_from_dict`.
SPACE_KEYS = ("defaults", "variant", "grid")
TOP_KEYS = {"experiment", "datasets", "judges", "gate", *SPACE_KEYS}
LEVELS = ("global", "context", "system")
REPORT_SUFFIXES = (".html", ".htm")


@dataclass(frozen=True)
class ExperimentSettings:
    """The ``[experiment]`` table."""

    name: str
    #: The human-rated quality (a dataset's own ``quality`` wins); None: each run's, from its aspect.
    quality: str | None = None
    #: Items judged per dataset (the first N of the subset); None: every item.
    limit: int | None = None
    subset: str | None = None
    seed: int = 0
    #: Bootstrap resamples of contexts for the leaderboard's and the gate's CIs.
    n_boot: int = 1000
    #: The reference-based metrics join the leaderboard.
    metrics: bool = True
    level: str = "global"
    #: Where the HTML report goes (resolved against the experiment file's folder); None: no report.
    report: Path | None = None


@dataclass(frozen=True)
class ExperimentDataset:
    """One ``[[datasets]]`` entry."""

    #: A catalogue name (``sample``, ``usr-topicalchat``) or a path (resolved against the file's folder).
    target: str
    is_path: bool = False
    column_map: ColumnMap | None = None
    quality: str | None = None
    limit: int | None = None
    subset: str | None = None


@dataclass(frozen=True)
class GateSettings:
    """The ``[gate]`` table: the rules and what they test (None: every judge, each run's quality)."""

    rules: tuple[Rule, ...] = ()
    judge: str | None = None
    quality: str | None = None


@dataclass(frozen=True)
class Experiment:
    source: str
    settings: ExperimentSettings
    datasets: tuple[ExperimentDataset, ...]
    variants: tuple[Variant, ...]
    #: Judges declared in the file (``[judges.NAME]``), beside the config file's.
    judges: tuple[JudgeConfig, ...] = ()
    gate: GateSettings = field(default_factory=GateSettings)


def load_experiment(path: Path | str) -> Experiment:
    """An experiment file, or one shipped with dialjudge by name (``sample``: :func:`packaged_experiments`)."""
    file = Path(path).expanduser()
    if not file.is_file():
        packaged = _packaged(str(path))
        if packaged is not None:
            with resources.as_file(packaged) as real:
                return parse_experiment(real.read_text(encoding="utf-8"), f"{packaged.name} (shipped with dialjudge)",
                                        folder=Path.cwd(), default_name=Path(packaged.name).stem)
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read the experiment file: {exc.strerror} (the experiments shipped with "
                          f"dialjudge, by name: {', '.join(packaged_experiments())})") from None
    return parse_experiment(text, str(path), folder=file.resolve().parent, default_name=file.stem)


def packaged_experiments() -> list[str]:
    """Names of the experiments shipped with dialjudge (``prompts/experiments/NAME.toml``)."""
    folder = resources.files("dialjudge.prompts") / "experiments"
    return sorted(entry.name[: -len(".toml")] for entry in folder.iterdir() if entry.name.endswith(".toml"))


def packaged_experiment_path(name: str) -> Any:
    """The shipped experiment file called ``name`` (a Traversable), or None."""
    return _packaged(name)


def _packaged(name: str) -> Any:
    stem = Path(name).name
    stem = stem[: -len(".toml")] if stem.endswith(".toml") else stem
    if stem not in packaged_experiments():
        return None
    return resources.files("dialjudge.prompts") / "experiments" / f"{stem}.toml"


def parse_experiment(text: str, source: str = "<experiment>", *, folder: Path | None = None,
                     default_name: str = "experiment") -> Experiment:
    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{source}: not valid TOML: {exc}") from None
    return experiment_from_dict(raw, source, folder=folder or Path.cwd(), default_name=default_name)


def experiment_from_dict(raw: Mapping[str, Any], source: str, *, folder: Path, default_name: str) -> Experiment:
    if "search" in raw:
        raise ConfigError(f"{source}: search is a tuning search's table (dialjudge tune); an experiment's settings "
                          "go in [experiment]")
    _only(raw, TOP_KEYS, source, "")
    settings = _settings(_table(raw, "experiment", source), source, folder, default_name)
    datasets = _datasets(raw.get("datasets"), source, folder)
    judges = tuple(parse_judges(raw, source).values())
    space = space_from_dict({k: raw[k] for k in SPACE_KEYS if k in raw}, source)
    for variant in space.variants:
        if variant.aspect_definition:
            raise ConfigError(f"{source}: variant {variant.name!r}: aspect_definition rewrites a template for a "
                              "tuning search; an experiment runs templates as they are (save the definition in a "
                              "template of your own and name it)")
    gate = _gate(_table(raw, "gate", source), source)
    return Experiment(source, settings, datasets, space.variants, judges, gate)


def _settings(table: Mapping[str, Any], source: str, folder: Path, default_name: str) -> ExperimentSettings:
    kinds: dict[str, type] = {"name": str, "quality": str, "limit": int, "subset": str, "seed": int, "n_boot": int,
                              "metrics": bool, "level": str, "report": str}
    _only(table, set(kinds), source, "experiment.")
    for key, value in table.items():
        _typed(value, kinds[key], source, f"experiment.{key}")
    name = str(table.get("name", default_name)).strip()
    if not name:
        raise ConfigError(f"{source}: experiment.name must not be empty")
    limit = table.get("limit")
    if limit is not None and limit < 1:
        raise ConfigError(f"{source}: experiment.limit must be at least 1 item, not {limit}")
    n_boot = table.get("n_boot", 1000)
    if n_boot < 1:
        raise ConfigError(f"{source}: experiment.n_boot must be at least 1 (the leaderboard and the gate test "
                          f"CIs), not {n_boot}")
    level = table.get("level", "global")
    if level not in LEVELS:
        raise ConfigError(f"{source}: experiment.level {level!r} is not one of {', '.join(LEVELS)}")
    report = None
    if "report" in table:
        text = str(table["report"]).strip()
        if not text or not text.lower().endswith(REPORT_SUFFIXES):
            raise ConfigError(f"{source}: experiment.report must name an .html file, not {table['report']!r}")
        report = Path(text).expanduser()
        report = report if report.is_absolute() else folder / report
        if report.exists() and report.is_dir():
            raise ConfigError(f"{source}: experiment.report {text!r} is a folder; name the .html file to write")
    return ExperimentSettings(name=name, quality=table.get("quality"), limit=limit, subset=table.get("subset"),
                              seed=table.get("seed", 0), n_boot=n_boot, metrics=table.get("metrics", True),
                              level=level, report=report)


def _datasets(listed: Any, source: str, folder: Path) -> tuple[ExperimentDataset, ...]:
    if listed is None:
        raise ConfigError(f"{source}: no datasets: add a [[datasets]] table (name = \"sample\", or path = \"...\")")
    if not isinstance(listed, list) or not all(isinstance(t, Mapping) for t in listed) or not listed:
        raise ConfigError(f"{source}: datasets must be an array of tables ([[datasets]])")
    kinds: dict[str, Any] = {"name": str, "path": str, "quality": str, "limit": int, "subset": str, "map": None}
    out = []
    for index, table in enumerate(listed):
        where = f"datasets[{index}]"
        _only(table, set(kinds), source, f"{where}.")
        for key, value in table.items():
            if kinds[key] is not None:
                _typed(value, kinds[key], source, f"{where}.{key}")
        if ("name" in table) == ("path" in table):
            raise ConfigError(f"{source}: {where} needs either name (a dataset of the catalogue) or path (a file), "
                              "not both or neither")
        limit = table.get("limit")
        if limit is not None and limit < 1:
            raise ConfigError(f"{source}: {where}.limit must be at least 1 item, not {limit}")
        column_map = _column_map(table.get("map"), source, f"{where}.map") if "map" in table else None
        if column_map is not None and "path" not in table:
            raise ConfigError(f"{source}: {where}.map reads a table file's columns: give path, not name")
        if "path" in table:
            path = Path(str(table["path"])).expanduser()
            path = path if path.is_absolute() else folder / path
            if not path.is_file():
                raise ConfigError(f"{source}: {where}.path: no such file {str(path)!r}")
            target, is_path = str(path), True
        else:
            target, is_path = str(table["name"]), False
        out.append(ExperimentDataset(target, is_path, column_map, table.get("quality"), limit, table.get("subset")))
    return tuple(out)


def _column_map(value: Any, source: str, where: str) -> ColumnMap:
    """``{ reply = "candidate", r1 = "Overall:a1" }`` or ``["reply=candidate", ...]`` (``--map``'s items)."""
    if isinstance(value, Mapping):
        for column, field_name in value.items():
            _typed(field_name, str, source, f"{where}.{column}")
        items = [f"{column}={field_name}" for column, field_name in value.items()]
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        items = list(value)
    else:
        raise ConfigError(f"{source}: {where} must be a table of COLUMN = \"FIELD\" (or a list of \"COLUMN=FIELD\")")
    try:
        return parse_column_map(items)
    except DataError as exc:
        raise ConfigError(f"{source}: {where}: {exc}") from None


def _gate(table: Mapping[str, Any], source: str) -> GateSettings:
    kinds: dict[str, Any] = {"min": None, "no_worse_than": None, "max_failures": None, "coefficient": str,
                             "judge": str, "quality": str}
    _only(table, set(kinds), source, "gate.")
    for key in ("coefficient", "judge", "quality"):
        if key in table:
            _typed(table[key], str, source, f"gate.{key}")
    minimums = _list_of(table.get("min", []), str, source, "gate.min", "\"spearman=0.3\"")
    baselines = _list_of(table.get("no_worse_than", []), int, source, "gate.no_worse_than", "a run id")
    coefficient = table.get("coefficient", "spearman")
    if coefficient not in CORRELATIONS:
        raise ConfigError(f"{source}: gate.coefficient {coefficient!r} is not one of {', '.join(CORRELATIONS)}")
    failures = table.get("max_failures")
    if failures is not None and (not isinstance(failures, (str, int, float)) or isinstance(failures, bool)):
        raise ConfigError(f"{source}: gate.max_failures must be a share such as \"2%\" or 0.02, not {failures!r}")
    rules = parse_rules(minimums, no_worse_than=baselines, max_failures=failures, coefficient=coefficient,
                        where=f"{source}: gate")
    return GateSettings(rules, table.get("judge"), table.get("quality"))


def _list_of(value: Any, kind: type, source: str, where: str, example: str) -> list[Any]:
    items = value if isinstance(value, list) else [value]
    for index, item in enumerate(items):
        if not isinstance(item, kind) or isinstance(item, bool):
            raise ConfigError(f"{source}: {where}[{index}] must be {example}, not {item!r}")
    return items


def _typed(value: Any, kind: type, source: str, where: str) -> None:
    if kind is bool:
        if not isinstance(value, bool):
            raise ConfigError(f"{source}: {where} must be true or false, not {value!r}")
        return
    _check_type(value, kind, source, where)


__all__ = ["Experiment", "ExperimentDataset", "ExperimentSettings", "GateSettings", "LEVELS", "load_experiment",
           "packaged_experiment_path", "packaged_experiments", "parse_experiment"]
