"""Pairwise verdicts on pre-paired preference data become a stored pairwise run of kind "imported".

A native pairwise run on pre-paired items (:mod:`dialjudge.core.judges.run.prepaired`) stores one
judgment per asked order, under the item id ``<id>#A><id>#B`` (reply A shown first) or
``<id>#B><id>#A`` (reply B shown first), whose 0-1 value is 1 when the reply shown first wins, 0
when the second wins and 0.5 for a tie. An imported verdict is stored exactly so, in a run whose
pair setting asks every pair in both orders, and the preference report reads it as it reads a
native run: agreement, κ, the flip rate under the swap, first-position wins.

The file's verdict names the pair's reply (A or B of the dataset). A row whose file gives no reply
shown first is stored as asked with reply A first and named in the report, since the position
statistics then rest on that assumption; ``strict`` refuses it. Rows naming no pair of the
dataset, a second verdict for the same pair, judge and order, and verdicts in no known spelling
are counted and named as the pointwise import does.
"""

from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..evaluation import resolve_quality
from ..judge_config import JudgeConfig
from ..judges.prompts.templates import get_template
from ..judges.run.config import RunConfig
from ..judges.run.pairwise import PairSetting, pair_item_id
from ..judges.run.prepaired import SIDES, reply_id
from ..judges.types import PAIRWISE_VERDICT_VALUES, Judgment, OutputKind, ScoringMode
from ..loaders.preference import ALLOWED_TEXT, PREFERENCE, VOTE_A, VOTE_B, VOTE_TIE
from ..model import Dataset
from ..planning import infer_quality
from . import importer
from .records import ParsedFile, VerdictRow

#: The template a verdicts import uses when none (or the pointwise default) is named.
DEFAULT_PAIRWISE_TEMPLATE = "pairwise-plain"
_FIRST_WINS, _SECOND_WINS, _TIE = PAIRWISE_VERDICT_VALUES


def prepare_verdict_import(path: Path, dataset: Dataset, parsed: ParsedFile, digest: str,
                           options: importer.ImportOptions) -> importer.ImportPlan:
    rows, judges = importer.named_judge_rows(list(parsed.verdicts), options, path)
    pairs = {ex.id: ex for ex in dataset.examples if ex.is_pairwise}
    if not pairs:
        raise ConfigError(f"{path.name} holds pairwise verdicts, but {dataset.name} has no pre-paired items "
                          "(a prompt with two replies and the humans' votes); scores in a column named "
                          "verdict or winner are imported with --format table")
    template_name = DEFAULT_PAIRWISE_TEMPLATE if options.template == importer.DEFAULT_TEMPLATE else options.template
    tpl = get_template(template_name, options.template_dirs)
    if tpl.output.kind is not OutputKind.PAIRWISE:
        raise ConfigError(f"template {tpl.name!r} is not pairwise; verdicts are imported with a pairwise template "
                          f"(e.g. {DEFAULT_PAIRWISE_TEMPLATE})")
    quality = resolve_quality(dataset, options.quality) if options.quality else (
        PREFERENCE if PREFERENCE in dataset.qualities else infer_quality(dataset, aspect=None, kpi=None))

    report = importer.ImportReport(file=path.name, format=parsed.format, rows=len(rows), judges=judges,
                                   dataset_items=len(pairs), fields=dict(parsed.fields))
    seen: dict[tuple[str, str, str], str] = {}
    matched: list[tuple[VerdictRow, str]] = []
    for row in rows:
        if row.pair_id not in pairs:
            report.unmatched.append(f"{row.where} ({row.pair_id})")
            continue
        first = row.first or VOTE_A
        if row.first is None:
            report.without_order.append(f"{row.where} ({row.pair_id}, {row.judge})")
        key = (row.pair_id, row.judge, first)
        if key in seen:
            report.duplicates.append(f"{row.where} ({row.pair_id}, {row.judge}, {first} first; first at "
                                     f"{seen[key]})")
            continue
        seen[key] = row.where
        matched.append((row, first))
    order = {ex.id: i for i, ex in enumerate(dataset.examples)}
    item_ids = sorted({row.pair_id for row, _ in matched}, key=order.__getitem__)
    if not item_ids:
        raise importer.ImportRefused(
            f"{path.name}: no row names a pre-paired item of {dataset.name}"
            + (f" (unmatched: {importer.shown(report.unmatched)})" if report.unmatched else ""), report)
    report.items = len(item_ids)
    report.matched_rows = len(matched)
    report.scale_rule = ("verdicts A, B or tie naming the pair's reply, stored per asked order as 1 (the reply "
                         "shown first wins), 0 (the second) or 0.5 (tie)")

    judgments = [_judgment(row, first, report) for row, first in matched]
    # Each matched pair in every order the file asks (both where it names the reply shown first).
    orders = SIDES if any(row.first is not None for row, _ in matched) else (VOTE_A,)
    for judge in judges:
        for pair in item_ids:
            for first in orders:
                if (pair, judge, first) not in seen:
                    report.items_without_score.append(f"{pair} ({judge}, {first} shown first)")

    provenance: dict[str, Any] = {
        "file": path.name, "path": str(path.resolve()), "sha256": digest, "format": parsed.format,
        "importer_version": importer.IMPORTER_VERSION, "fields": dict(parsed.fields), "source": dict(parsed.source),
        "scale": None,
    }
    config = RunConfig.build(
        dataset, tpl, [JudgeConfig(name=j, backend=importer.IMPORTED_BACKEND, model=j) for j in judges],
        mode=ScoringMode.GENERATE, quality=quality, item_ids=tuple(item_ids), top_k=0,
        pairs=PairSetting(None, 0, both_orders=True), name=options.name or f"imported {path.name}",
        imported=provenance)
    if options.strict and report.problems():
        label, names = report.problems()[0]
        raise importer.ImportRefused(f"--strict: the import has problems ({label}: {len(names)} — "
                                     f"{importer.shown(names)})", report)
    provenance["counts"] = report.counts()
    fingerprint = "import-" + hashlib.sha256(
        f"{digest}:{dataclasses.replace(config, imported={}).fingerprint}".encode()).hexdigest()[:24]
    config = dataclasses.replace(config, imported=provenance)
    total = len(item_ids) * len(SIDES) * len(judges)
    return importer.ImportPlan(config, judgments, report, fingerprint, total=total)


def _judgment(row: VerdictRow, first: str, report: importer.ImportReport) -> Judgment:
    second = VOTE_B if first == VOTE_A else VOTE_A
    item_id = pair_item_id(reply_id(row.pair_id, first), reply_id(row.pair_id, second))
    common: dict[str, Any] = dict(item_id=item_id, judge=row.judge, mode=ScoringMode.GENERATE, prompt_hash="",
                                  raw_output="")
    if row.verdict is None and not row.written.strip():
        report.empty_verdicts.append(f"{row.where} ({row.pair_id}, {row.judge})")
        return Judgment(**common, score=None, normalized=None, error="empty verdict")
    if row.verdict is None:
        report.unknown_verdicts.append(f"{row.where} ({row.pair_id}, {row.judge}): {row.written!r}")
        return Judgment(**common, score=None, normalized=None,
                        error=f"the imported verdict {row.written!r} is none of {ALLOWED_TEXT}")
    value = _TIE if row.verdict == VOTE_TIE else _FIRST_WINS if row.verdict == first else _SECOND_WINS
    return Judgment(**common, score=value, normalized=value)
