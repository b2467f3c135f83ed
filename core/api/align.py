"""Aligning a judge to the user's corrections: ``dialjudge align RUN`` and Review's align key.

``open_align`` reads the run, the corrections (a labels file, or the own ratings given in Review)
and the notes (a notes file, or the review notes), splits the run's contexts so that no
corrected context is held out (:mod:`core.tuning.align_split`), proposes the variants
(:mod:`core.tuning.align`) and builds the tuning search over them; ``await handle.run()`` (or
``run_to_end``) judges and gives the :class:`AlignReport`. The corrections, notes and the
winner's template are stored together as one JSON record in ``<data dir>/alignments/``; with
``save_as`` the winner's template is also saved (with the same provenance) among the user's
templates. docs/align.md describes it all.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from ..config import user_data_dir
from ..errors import ConfigError, DataError, DialjudgeError
from ..judges.prompts.templates import parse_template
from ..judges.store.run_store import RunStore
from ..model import Aggregation, Dataset, Example, is_label_quality
from ..stats.human import human_labels
from ..tuning.align import (
    MIN_CORRECTIONS,
    START,
    Corrections,
    align_space,
    align_variants,
    check_labels,
    correction_pool,
    persona_direction,
    provenance_header,
    variant_text,
)
from ..tuning.align_report import COLUMNS, FORMATS, AlignReport, render_align
from ..tuning.align_split import correction_split, leaked_contexts
from ..tuning.search import SearchEvent, TuningSearch
from ..tuning.space import Variant
from ..tuning.winner import save_winner as save_winner_file
from .judging import _Handle
from .reports import judged_items
from .session import Session
from .stored import dataset_of_run

__all__ = ["AlignHandle", "AlignReport", "AlignRequest", "COLUMNS", "FORMATS", "Corrections", "align",
           "open_align", "read_notes_file", "render_align"]


@dataclass(frozen=True)
class AlignRequest:
    run_id: int
    #: item id -> the user's label on the run quality's scale; None: the own ratings given in Review.
    labels: Mapping[str, float] | None = None
    labels_source: str = ""
    #: What the user wrote about the judge; None: the run's review notes.
    notes: tuple[str, ...] | None = None
    #: The run's judge to align (default: its first).
    judge: str | None = None
    #: Few-shot examples per prompt.
    k: int = 3
    #: A persona to try; None: the one the corrections point to; "none": no persona variant.
    persona: str | None = None
    seed: int = 0
    n_boot: int = 1000
    #: Save the winner's template under this name in the user's templates folder.
    save_as: str | None = None
    #: Where the alignment record goes (None: ``<data dir>/alignments``).
    record_folder: Path | None = None


class _AlignJob:
    """The search over the aligned variants, and the report and record made from its result."""

    def __init__(self, search: TuningSearch, request: AlignRequest, corrections: Corrections, *, n_labelled: int,
                 n_unknown: int, skipped: tuple[str, ...], examples: list[Example],
                 text_of: Callable[[Variant], str]) -> None:
        self.search, self.request, self.corrections = search, request, corrections
        self._n_labelled, self._n_unknown, self._skipped = n_labelled, n_unknown, skipped
        self._examples, self._text_of = examples, text_of

    def cancel(self) -> None:
        self.search.cancel()

    async def run(self) -> AlignReport:
        tuning = await self.search.run()
        leaked = leaked_contexts(tuning.split, self._examples, self.corrections.labels)
        if leaked:  # the split module guarantees it; a report must never rest on a leaky split
            raise DialjudgeError(f"corrected contexts reached the held-out split: {sorted(leaked)[:3]}")
        winner = tuning.variant(tuning.winner)
        report = AlignReport(self.request.run_id, self.corrections, tuning, self._n_labelled, self._n_unknown,
                             self._skipped, winner_template=self._text_of(winner))
        template_path = None
        if self.request.save_as:
            win = tuning.heldout_of(tuning.winner)
            provenance = {"aligned run": self.request.run_id, "corrections digest": self.corrections.digest,
                          "corrections": f"{len(self.corrections.labels)} labels, {len(self.corrections.notes)} "
                                         f"notes ({self.corrections.source})",
                          "held-out spearman": f"{win.heldout_text() if win else '–'}",
                          "verdict": report.verdict}
            template_path = str(save_winner_file(report.winner_template, winner, self.request.save_as,
                                                 provenance=provenance))
        folder = self.request.record_folder or user_data_dir() / "alignments"
        path = folder / f"run{self.request.run_id}-{self.corrections.digest}.json"
        report = replace(report, record_path=str(path), template_path=template_path)
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report.to_dict(), indent=2, ensure_ascii=False), encoding="utf-8")
        return report


class AlignHandle(_Handle[AlignReport]):
    """An alignment search (:func:`open_align`): ``run_to_end()`` or ``await run()``; ``cancel()``."""


def open_align(session: Session, request: AlignRequest, *, dataset: Dataset | None = None,
               on_event: Callable[[SearchEvent], None] | None = None, close_backends: bool = True) -> AlignHandle:
    """The alignment of run ``request.run_id``'s judge, checked before anything is judged. ``close_backends``:
    False where the session's judges stay open after it (the judge process's: ``core/api/run_worker.py``)."""
    store = session.open_store()
    try:
        job = _prepare(store, session, request, dataset, on_event, close_backends)
    except BaseException:
        store.close()
        raise
    return AlignHandle(job, store)


def align(session: Session, request: AlignRequest, *, dataset: Dataset | None = None,
          on_event: Callable[[SearchEvent], None] | None = None) -> AlignReport:
    """:func:`open_align` run to its end on this thread."""
    return open_align(session, request, dataset=dataset, on_event=on_event).run_to_end()


def read_notes_file(path: Path) -> tuple[str, ...]:
    """Rubric notes: a text file, one note per paragraph (blank lines between them)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"{path}: cannot read the notes: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise DataError(f"{path}: the notes are not UTF-8 text") from None
    notes = tuple(" ".join(p.split()) for p in text.split("\n\n") if p.strip())
    if not notes:
        raise DataError(f"{path}: no notes (the file is empty)")
    return notes


def _prepare(store: RunStore, session: Session, request: AlignRequest, current: Dataset | None,
             on_event: Callable[[SearchEvent], None] | None, close_backends: bool) -> _AlignJob:
    record = store.runs.get_run(request.run_id)
    config = record.run_config
    if config.pairs is not None:
        raise ConfigError(f"run {request.run_id} judged pairs; align works on runs that rate one response at a time")
    quality = config.quality
    dataset = dataset_of_run(config, session.config, current=current)
    if not quality or quality not in dataset.qualities:
        raise ConfigError(f"run {request.run_id} names no human-rated quality of {dataset.name} to align to")
    if is_label_quality(dataset.qualities[quality]):
        raise ConfigError(f"run {request.run_id} rates the label quality {quality!r}; align ranks variants by "
                          "correlation, so it needs a rated (ordinal or numeric) quality")
    scale = dataset.qualities[quality]
    judged = judged_items(config, dataset)
    corrections = _corrections(store, request)
    item_ids = {ex.id for ex in judged.examples}
    labels = {i: v for i, v in corrections.labels.items() if i in item_ids}
    n_unknown = len(corrections.labels) - len(labels)
    check_labels(labels, scale, corrections.source)
    if len(labels) < MIN_CORRECTIONS:
        raise ConfigError(f"{corrections.source}: {len(labels)} corrections on items of run {request.run_id}"
                          + (f" ({n_unknown} more are not its items)" if n_unknown else "")
                          + f"; align needs at least {MIN_CORRECTIONS}")
    corrections = replace(corrections, labels=labels)
    pooled = human_labels(judged.examples, quality, Aggregation.MEAN).values
    rated = {i for i, v in pooled.items() if v is not None and not (isinstance(v, float) and math.isnan(v))}
    split = correction_split(judged.examples, labels, rated=rated, seed=request.seed)

    judge = request.judge or config.judges[0].name
    if judge not in {j.name for j in config.judges}:
        raise ConfigError(f"run {request.run_id} has no judge {judge!r} (judges: "
                          f"{', '.join(j.name for j in config.judges)})")
    persona_now = next((p.name for p in config.personas if p is not None), "none")
    start = Variant(name=START, template=config.template, aspect=config.aspect, persona=persona_now,
                    fewshot=str(config.fewshot), mode=config.mode.value, top_k=config.top_k, judge=judge)
    template = parse_template(config.template_text, config.template)
    persona = request.persona
    if persona is None:
        persona = persona_direction(_judge_units(store, request.run_id, judge), labels, scale)
    variants, skipped = align_variants(start, template, corrections, k=request.k, seed=request.seed,
                                       persona=None if persona == "none" else persona)
    space = align_space(variants, quality=quality, n_tuning_contexts=len(split.tuning), seed=request.seed,
                        n_boot=request.n_boot)
    header = provenance_header(corrections, request.run_id)

    def template_of(variant: Variant) -> tuple[str, str]:
        return variant_text(template, variant, header)

    search = TuningSearch(space, judged, session.config, store, make_backend=session.make_backend,
                          on_event=on_event, split=split,
                          fewshot_pool=correction_pool(judged.examples, quality, scale, labels),
                          tuning_labels=labels, template_of=template_of, baseline_competes=False,
                          close_backends=close_backends)
    return _AlignJob(search, request, corrections, n_labelled=len(labels), n_unknown=n_unknown,
                     skipped=tuple(skipped), examples=list(judged.examples),
                     text_of=lambda v: template_of(v)[1])


def _corrections(store: RunStore, request: AlignRequest) -> Corrections:
    """The request's labels and notes, or those the user gave run ``run_id`` in Review."""
    reviews = store.reviews.reviews(request.run_id)
    # The same note written on several items is one note (it goes into every prompt once).
    notes = request.notes if request.notes is not None else tuple(
        dict.fromkeys(r.note.strip() for r in reviews.values() if r.note.strip()))
    if request.labels is not None:
        return Corrections(dict(request.labels), notes, request.labels_source or "labels given")
    labels = {item: float(r.own_rating) for item, r in reviews.items() if r.own_rating is not None}
    if not labels:
        raise ConfigError(f"run {request.run_id} has no reviews with your own rating: rate items in Review, or "
                          "give a labels file (--labels FILE)")
    return Corrections(labels, notes, f"your own ratings in Review of run {request.run_id}")


def _judge_units(store: RunStore, run_id: int, judge: str) -> dict[str, float]:
    """The run's 0-1 scores of ``judge`` (its first column: the judge, or the judge with a persona)."""
    table = store.judgments.load_judgments(run_id)
    column = table.get(judge) or next((c for name, c in table.items() if name.split("@")[0] == judge), {})
    return {item: float(j.normalized) for item, j in column.items() if j.normalized is not None}
