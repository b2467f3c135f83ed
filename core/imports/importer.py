"""Turning a file of judge scores into a stored run of kind "imported".

``prepare_scores`` takes the file read by ``read_file`` (one of :mod:`.formats`), matches each row to
the dataset's items (by id, or by context and response text), puts each score on the template's scale and collects every
problem by name: rows matching no item (or several), duplicate rows, rows and items without a score,
values outside the scale. Nothing is dropped silently: a row that cannot be used is named in the
report, and a matched item without a usable score is stored as a failed judgment, as a native run
stores an unreadable answer. ``strict`` refuses the import on any problem. A score outside the
template's scale refuses the import unless a :class:`ScaleRule` states the file's scale (then a value
outside the stated scale is a named problem): scores on another scale are mapped by a stated rule,
never guessed. ``write_import`` stores the plan; :mod:`.dispatch` chooses this importer or the
pairwise one (:mod:`.pairwise`) by what the file holds.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..errors import ConfigError, DataError
from ..evaluation import resolve_quality
from ..judge_config import JudgeConfig, Sampling
from ..judges.prompts.templates import get_template
from ..judges.run.config import RunConfig
from ..judges.run.engine import TemplateRenderer
from ..judges.run.events import RunStatus
from ..judges.run.pairwise import PAIR_SEPARATOR, PairSetting, pair_examples
from ..judges.run.scoring import score_result
from ..judges.store.run_store import JudgmentWrite, RunStore
from ..judges.types import (
    BackendResult,
    JudgeRequest,
    Judgment,
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)
from ..model import Dataset, Example
from ..planning import infer_quality
from .formats import detect, get_format
from .records import ImportedRow, ParsedFile, VerdictRow
from .scale import ScaleRule

#: Recorded in every imported run; raise it when the same file would be read differently.
IMPORTER_VERSION = 1
#: The backend name an imported run's judges carry: nothing here can ask them again.
IMPORTED_BACKEND = "imported"
DEFAULT_TEMPLATE = "likert-1to5"
#: How many names a problem line lists before "and N more".
SHOWN = 8


class ImportRefused(ConfigError):
    """An import refused (``--strict`` and a problem, or scores on another scale); carries the report."""

    def __init__(self, message: str, report: "ImportReport") -> None:
        super().__init__(message)
        self.report = report


@dataclass(frozen=True)
class ImportOptions:
    template: str = DEFAULT_TEMPLATE
    quality: str | None = None
    #: The judge's name in the run (a file holding one judge only).
    judge_name: str | None = None
    name: str = ""
    strict: bool = False
    scale: ScaleRule | None = None
    #: A format name of :data:`.formats.FORMATS`; None detects it.
    format: str | None = None
    template_dirs: Sequence[Path] = ()


@dataclass
class ImportReport:
    """What an import matched and what it did not, each problem with the rows or items it concerns."""

    file: str
    format: str
    rows: int
    judges: list[str]
    matched_rows: int = 0
    items: int = 0
    dataset_items: int = 0
    scale_rule: str = ""
    unmatched: list[str] = field(default_factory=list)
    ambiguous: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    rows_without_score: list[str] = field(default_factory=list)
    items_without_score: list[str] = field(default_factory=list)
    out_of_scale: list[str] = field(default_factory=list)
    #: Pairwise verdicts whose cell is empty, and those in no known spelling (stored as failed judgments).
    empty_verdicts: list[str] = field(default_factory=list)
    unknown_verdicts: list[str] = field(default_factory=list)
    #: Pairwise verdicts whose file does not say which reply was shown first (stored as reply A first).
    without_order: list[str] = field(default_factory=list)
    fields: dict[str, str] = field(default_factory=dict)

    def problems(self) -> list[tuple[str, list[str]]]:
        """Each kind of problem with its names, in the order a user fixes them; empty kinds left out."""
        kinds = [("rows matching no item", self.unmatched), ("rows matching several items", self.ambiguous),
                 ("duplicate rows (the first kept)", self.duplicates),
                 ("rows without a score", self.rows_without_score),
                 ("items without a score from a judge", self.items_without_score),
                 ("values outside the scale", self.out_of_scale),
                 ("empty verdicts", self.empty_verdicts), ("verdicts in no known spelling", self.unknown_verdicts),
                 ("verdicts without the reply shown first (taken as reply A first)", self.without_order)]
        return [(label, names) for label, names in kinds if names]

    def summary_lines(self) -> list[str]:
        lines = [f"{self.file}: {self.format} format, {self.rows} scores, judges: {', '.join(self.judges)}",
                 f"matched {self.matched_rows} of {self.rows} scores to {self.items} of {self.dataset_items} items "
                 "of the dataset",
                 f"scale: {self.scale_rule}"]
        for label, names in self.problems():
            lines.append(f"{label}: {len(names)} — {shown(names)}")
        if not self.problems():
            lines.append("no unmatched rows, duplicates, missing scores or values outside the scale")
        return lines

    def counts(self) -> dict[str, int]:
        return {"rows": self.rows, "matched_rows": self.matched_rows, "items": self.items,
                **{label: len(names) for label, names in self.problems()}}


def shown(names: Sequence[str]) -> str:
    head = ", ".join(names[:SHOWN])
    return head + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")


@dataclass
class ImportPlan:
    config: RunConfig
    judgments: list[Judgment]
    report: ImportReport
    fingerprint: str
    #: The judgments the run expects, where it is not items x judges x repeats (a pairwise run's orders).
    total: int | None = None


@dataclass(frozen=True)
class ImportResult:
    run_id: int
    report: ImportReport
    #: The same file was imported before with the same settings: that run is shown, nothing is stored.
    shown_again: bool = False


def existing_import(store: RunStore, plan: ImportPlan) -> int | None:
    """The finished run an earlier import of the same bytes with the same settings made (its fingerprint
    holds the file's SHA-256 and the run's configuration), or None."""
    found = store.runs.find_finished(plan.fingerprint, name=plan.config.name)
    return found.id if found is not None else None


def write_import(store: RunStore, plan: ImportPlan) -> int:
    config = plan.config
    total = plan.total if plan.total is not None else len(config.item_ids) * len(config.judges) * config.repeats
    run_id = store.runs.create_run(config.to_dict(), plan.fingerprint, name=config.name, total=total)
    store.judgments.add_judgments(run_id, (JudgmentWrite(judgment) for judgment in plan.judgments))  # one transaction
    store.runs.set_status(run_id, RunStatus.FINISHED)
    return run_id


def read_file(path: Path, format_name: str | None = None) -> tuple[ParsedFile, str]:
    """The file parsed by its format, and the SHA-256 of its bytes."""
    path = Path(path).expanduser()
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot read: {exc.strerror}") from None
    digest = hashlib.sha256(data).hexdigest()
    if path.suffix.lower() == ".eval":
        text = ""
    else:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise DataError(f"{path}: not UTF-8 text") from None
    module = get_format(format_name) if format_name else detect(path, text)
    return module.read(path, text), digest


def prepare_scores(path: Path, dataset: Dataset, parsed: ParsedFile, digest: str,
                   options: ImportOptions = ImportOptions()) -> ImportPlan:
    """A file of scores (any format but pairwise verdicts, :mod:`.pairwise`), read, matched and checked."""
    rows, judges = named_judge_rows(list(parsed.rows), options, path)

    tpl = get_template(options.template, options.template_dirs)
    quality = resolve_quality(dataset, options.quality) if options.quality else infer_quality(
        dataset, aspect=None, kpi=None)
    if quality is not None and quality not in dataset.qualities:
        raise ConfigError(f"{dataset.name} has no quality {quality!r} (qualities: {', '.join(dataset.qualities)})")
    aspect = tpl.resolve_aspect(quality) if tpl.needs_aspect or tpl.aspects else None
    if tpl.needs_aspect and aspect is None:
        raise ConfigError(f"template {tpl.name!r} has no aspect for quality {quality!r} "
                          f"(aspects: {', '.join(tpl.aspects)}); choose another --quality or --template")
    if tpl.needs_kpi:
        raise ConfigError(f"template {tpl.name!r} judges KPIs; imports use a template without KPIs")
    modes = {r.mode for r in rows if r.mode}
    if len(modes) > 1:
        raise ConfigError(f"{path.name} mixes scoring modes ({', '.join(sorted(modes))}); import one run at a time")
    mode = ScoringMode(modes.pop()) if modes else ScoringMode.GENERATE
    if mode not in tpl.output.modes:
        raise ConfigError(f"the file's judgments were scored in {mode.value} mode, which template {tpl.name!r} "
                          f"does not offer; give the run's own template with --template")

    report = ImportReport(file=path.name, format=parsed.format, rows=len(rows), judges=judges,
                          dataset_items=len(dataset.examples), fields=dict(parsed.fields))
    # dialjudge's own export of a pairwise run on pre-paired items: its rows are the asked orders.
    pairs = _pair_setting(rows, dataset, tpl.output.kind)
    pool = dataset.examples if pairs is None else pair_examples([ex for ex in dataset.examples if ex.is_pairwise],
                                                                pairs)
    matched = _match(rows, pool, report)
    order = {ex.id: i for i, ex in enumerate(dataset.examples)}
    ids = {ex.id if pairs is None else ex.group_id for _, ex in matched}
    item_ids = sorted((i for i in ids if i is not None), key=order.__getitem__)
    if not item_ids:
        hint = ("; its ids are asked orders of pairs (<id>#A><id>#B): import it with the pairwise run's own "
                "--template" if pairs is None and any(r.item_id and PAIR_SEPARATOR in r.item_id for r in rows)
                else "")
        raise ImportRefused(f"{path.name}: no row matches an item of {dataset.name}"
                            + (f" (unmatched: {shown(report.unmatched)})" if report.unmatched else "") + hint,
                            report)
    report.items = len(item_ids)
    report.matched_rows = len(matched)
    repeats = max(r.repeat for r, _ in matched) + 1
    rule = options.scale
    if rule is None and parsed.native_scale is not None:
        rule = ScaleRule(*parsed.native_scale)
    provenance: dict[str, Any] = {
        "file": path.name, "path": str(path.resolve()), "sha256": digest, "format": parsed.format,
        "importer_version": IMPORTER_VERSION, "fields": dict(parsed.fields), "source": dict(parsed.source),
        "scale": str(rule) if rule else None,
    }
    config = RunConfig.build(
        dataset, tpl, [JudgeConfig(name=j, backend=IMPORTED_BACKEND, model=j) for j in judges], mode=mode,
        aspect=aspect, quality=quality, item_ids=tuple(item_ids), repeats=repeats, top_k=0, pairs=pairs,
        name=options.name or f"imported {path.name}", imported=provenance)
    renderer = TemplateRenderer(config, dataset.examples)
    variants = {v.label: v for v in config.variants()}

    judgments: list[Judgment] = []
    specs: list[OutputSpec] = []
    scored = 0
    for row, example in matched:
        prompt = renderer(variants[row.judge], example)
        judgment = _judgment(row, example.id, prompt.output, prompt.hash, mode, rule, report)
        scored += row.score is not None
        specs.append(prompt.output)
        judgments.append(judgment)
    spec_range = {(s.min, s.max) for s in specs}
    report.scale_rule = (rule.describe(*next(iter(spec_range))) if rule and len(spec_range) == 1
                         else f"{rule} mapped linearly onto each item's template scale" if rule
                         else "the template's: " + ", ".join(f"{lo:g}-{hi:g}" for lo, hi in sorted(spec_range)))
    if parsed.format == "dialjudge":
        report.scale_rule = "the exported 0-1 scores, kept as they are"
    judgments += _missing(matched, judges, repeats, mode, report)

    if rule is None and report.out_of_scale:
        remedy = ("import it with the exported run's own --template and --quality" if parsed.format == "dialjudge"
                  else "give their scale with --scale LOW-HIGH (e.g. --scale 1-10), choose a --template on their "
                       "scale, or correct the values")
        raise ImportRefused(
            f"{len(report.out_of_scale)} of {scored} scores lie outside the template's scale "
            f"({shown(report.out_of_scale)}): scores on another scale are mapped by a stated rule, never "
            f"guessed; {remedy}", report)
    if options.strict and report.problems():
        label, names = report.problems()[0]
        raise ImportRefused(f"--strict: the import has problems ({label}: {len(names)} — {shown(names)})", report)
    provenance["counts"] = report.counts()
    # The same bytes imported with the same settings: the same fingerprint, wherever the file lies.
    fingerprint = "import-" + hashlib.sha256(f"{digest}:{_with_provenance(config, {}).fingerprint}".encode()
                                             ).hexdigest()[:24]
    config = _with_provenance(config, provenance)
    return ImportPlan(config, judgments, report, fingerprint)


def _with_provenance(config: RunConfig, provenance: dict[str, Any]) -> RunConfig:
    return dataclasses.replace(config, imported=provenance)


JudgedRow = TypeVar("JudgedRow", ImportedRow, VerdictRow)


def named_judge_rows(rows: list[JudgedRow], options: ImportOptions, path: Path) -> tuple[list[JudgedRow], list[str]]:
    """The rows and their judges in file order; with ``--judge-name``, the file's one judge renamed (a
    file of several judges is refused: which one would the name be for?)."""
    judges = list(dict.fromkeys(r.judge for r in rows))
    if not options.judge_name:
        return rows, judges
    if len(judges) > 1:
        raise ConfigError(f"--judge-name names one judge, but {path.name} holds {len(judges)}: {', '.join(judges)}")
    return [dataclasses.replace(r, judge=options.judge_name) for r in rows], [options.judge_name]


_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().casefold()


def _pair_setting(rows: Sequence[ImportedRow], dataset: Dataset, kind: OutputKind) -> PairSetting | None:
    """Both orders of every pair, for a pairwise template and rows whose ids are asked orders of pre-paired
    items (``<id>#A><id>#B``); None otherwise."""
    if kind is not OutputKind.PAIRWISE or not rows or not any(ex.is_pairwise for ex in dataset.examples):
        return None
    if not all(row.item_id and PAIR_SEPARATOR in row.item_id for row in rows):
        return None
    return PairSetting(None, 0, both_orders=True)


def _match(rows: Sequence[ImportedRow], examples: Sequence[Example], report: ImportReport
           ) -> list[tuple[ImportedRow, Example]]:
    """Rows with their items; unmatched, ambiguous and duplicate rows go into the report by name."""
    by_id = {ex.id: ex for ex in examples}
    by_response: dict[str, list[Example]] = {}
    for ex in examples:
        if ex.candidate is not None:
            by_response.setdefault(_norm(ex.candidate), []).append(ex)
    seen: dict[tuple[str, str, int], str] = {}
    out = []
    for row in rows:
        if row.item_id is not None:
            example = by_id.get(row.item_id)
            if example is None:
                name = f"{row.where} ({row.item_id})"
                if name not in report.unmatched:  # a wide file's row holds several judges' scores
                    report.unmatched.append(name)
                continue
        else:
            candidates = _by_text(row, by_response)
            if len(candidates) != 1:
                target = report.unmatched if not candidates else report.ambiguous
                name = f"{row.where} ({_clip(row.response or '')})"
                if name not in target:
                    target.append(name)
                continue
            example = candidates[0]
        key = (example.id, row.judge, row.repeat)
        if key in seen:
            report.duplicates.append(f"{row.where} ({example.id}, {row.judge}; first at {seen[key]})")
            continue
        seen[key] = row.where
        out.append((row, example))
    return out


def _by_text(row: ImportedRow, by_response: dict[str, list[Example]]) -> list[Example]:
    """The items whose response is the row's and whose context's last turn the row's context holds."""
    if not row.response:
        return []
    context = _norm(row.context or "")
    return [ex for ex in by_response.get(_norm(row.response), [])
            if not ex.context or _norm(ex.context[-1].text) in context]


def _clip(text: str, width: int = 40) -> str:
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= width else text[: width - 1] + "…"


def _judgment(row: ImportedRow, item_id: str, spec: OutputSpec, prompt_hash: str, mode: ScoringMode, rule: ScaleRule | None,
              report: ImportReport) -> Judgment:
    common: dict[str, Any] = dict(
        item_id="", judge=row.judge, mode=mode, raw_output=row.raw_output, reasoning=row.reasoning,
        distribution=dict(row.distribution) if row.distribution else None, latency_s=row.latency_s,
        prompt_tokens=row.prompt_tokens, evaluated_tokens=row.evaluated_tokens,
        completion_tokens=row.completion_tokens, repeat=row.repeat, cached=row.cached, sampling=dict(row.sampling),
        top_logprobs=list(row.top_logprobs) if row.top_logprobs else None, valid_mass=row.valid_mass,
        valid_in_top=row.valid_in_top, mass_is_lower_bound=row.mass_is_lower_bound)
    name = f"{row.where} ({row.judge})"
    if row.mode is not None:  # dialjudge's own export: every stored value as it was
        if row.score is not None and row.normalized is not None \
                and abs(spec.normalize(row.score) - row.normalized) > 1e-9:
            report.out_of_scale.append(f"{name}: {row.score:g} is {row.normalized:g} on 0-1 in the file but "
                                       f"{spec.normalize(row.score):g} on the template's {spec.min:g}-{spec.max:g}")
        elif row.score is None:
            report.rows_without_score.append(f"{name}: {row.error or 'no score in the file'}")
        return Judgment(**common | {"item_id": item_id}, prompt_hash=row.prompt_hash, score=row.score,
                        normalized=row.normalized, error=row.error)
    # An answer or probabilities make the judgment rescorable with the template's parser: it records
    # the prompt the template renders (what the import declares the judge was asked).
    answer_hash = prompt_hash if (row.raw_output or row.distribution) else ""
    value = row.score
    if value is None and row.error is None and row.raw_output and mode is ScoringMode.GENERATE and rule is None:
        return _parsed_answer(row, item_id, spec, answer_hash, report, common)
    if value is None:
        report.rows_without_score.append(f"{name}: {row.error or 'no score in the file'}")
        return Judgment(**common | {"item_id": item_id}, prompt_hash=answer_hash, score=None, normalized=None,
                        error=row.error or "no score in the imported file")
    if rule is not None:
        if not rule.contains(value):
            report.out_of_scale.append(f"{name}: {value:g} outside {rule}")
            return Judgment(**common | {"item_id": item_id}, prompt_hash=answer_hash, score=None, normalized=None,
                            error=f"the imported score {value:g} lies outside the stated scale {rule}")
        value = rule.map(value, spec.min, spec.max)
    elif not spec.min - 1e-9 <= value <= spec.max + 1e-9:
        report.out_of_scale.append(f"{name}: {value:g} outside {spec.min:g}-{spec.max:g}")
        return Judgment(**common | {"item_id": item_id}, prompt_hash=answer_hash, score=None, normalized=None,
                        error=f"the imported score {value:g} lies outside the template's scale "
                              f"{spec.min:g}-{spec.max:g}")
    return Judgment(**common | {"item_id": item_id}, prompt_hash=answer_hash, score=value,
                    normalized=spec.normalize(value), error=None)


def _parsed_answer(row: ImportedRow, item_id: str, spec: OutputSpec, prompt_hash: str, report: ImportReport,
                   common: dict[str, Any]) -> Judgment:
    """No score but a raw answer: read it with the template's parser, as a generate run reads its answers."""
    request = JudgeRequest(item_id=item_id, prompt=RenderedPrompt((Message("user", ""),), spec),
                           mode=ScoringMode.GENERATE, sampling=Sampling(), repeat=row.repeat)
    parsed = score_result(request, BackendResult(raw_output=row.raw_output), row.judge)
    if parsed.score is None:
        report.rows_without_score.append(f"{row.where} ({row.judge}): the answer does not parse: {parsed.error}")
    return Judgment(**common | {"item_id": item_id, "reasoning": row.reasoning or parsed.reasoning},
                    prompt_hash=prompt_hash, score=parsed.score, normalized=parsed.normalized, error=parsed.error)


def _missing(matched: Sequence[tuple[ImportedRow, Example]], judges: Sequence[str], repeats: int,
             mode: ScoringMode, report: ImportReport) -> list[Judgment]:
    """A failed judgment for each matched item a judge has no row for, named in the report."""
    have = {(ex.id, row.judge, row.repeat) for row, ex in matched}
    items = list(dict.fromkeys(ex.id for _, ex in matched))
    out = []
    for judge in judges:
        for item in items:
            for repeat in range(repeats):
                if (item, judge, repeat) not in have:
                    report.items_without_score.append(f"{item} ({judge}" + (f", repeat {repeat})" if repeats > 1
                                                                            else ")"))
                    out.append(Judgment(item_id=item, judge=judge, mode=mode, prompt_hash="", raw_output="",
                                        score=None, normalized=None, repeat=repeat,
                                        error="no score for this item in the imported file"))
    return out
