"""Pre-paired preference data (issue 21): a run on pairs, read against the humans' votes.

A front end asks :func:`on_prepaired_items` whether a run judged pre-paired items (a pairwise run
asking each pair, or a pointwise run rating each reply); :func:`preference_plan_text` says what such
a run will ask; :func:`preference_report_of` (or :func:`stored_preference_report`) computes the
agreement table, :func:`versus` compares two runs on the same pairs, and :func:`pair_summary` says
what a pair set holds. The rows and notes are laid out here so that every front end shows the same.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from ..errors import ConfigError, DataError
from ..judges.post_run.preference_report import (
    AGREEMENT_COLUMNS,
    CATEGORY_COLUMNS,
    PAIR_COLUMNS,
    PreferenceReport,
    agreement_notes,
    agreement_rows,
    category_rows,
    human_side,
    implied_preference_report,
    is_pointwise_preference_run,
    is_preference_run,
    pair_rows,
    pairs_to_review,
    preference_quality,
    preference_report,
    prepaired_selection,
    share_text,
    votes_of,
)
from ..judges.run.config import RunConfig
from ..judges.run.pairwise import plan_pairs
from ..judges.store.run_store import RunStore
from ..judges.types import Judgment
from ..model import Dataset, Example
from ..stats.preference import PairedAgreement, compare_agreement, human_majority


@dataclass(frozen=True)
class PreferenceRequest:
    """How to read a run on pairs: which rating holds the votes (None: found), the tie band of a
    pointwise run's implied verdict (0-1 scale), and the bootstrap."""

    quality: str | None = None
    tie_band: float = 0.0
    n_boot: int = 1000
    seed: int = 0

    def __post_init__(self) -> None:
        if self.tie_band < 0:
            raise ConfigError(f"--tie-band must be at least 0, not {self.tie_band}")


def on_prepaired_items(config: RunConfig, dataset: Dataset) -> bool:
    """The run judged pre-paired items (asked as pairs, or each reply rated alone)."""
    return is_preference_run(config, dataset) or is_pointwise_preference_run(config, dataset)


def preference_plan_text(config: RunConfig, dataset: Dataset) -> str | None:
    """What a pairwise run on pre-paired items will ask, before it starts; None for any other run."""
    if not is_preference_run(config, dataset):
        return None
    assert config.pairs is not None
    plan = plan_pairs(prepaired_selection(config, dataset), config.pairs)
    orders = "both orders" if config.pairs.both_orders else f"one order each, drawn with seed {config.pairs.seed}"
    return (f"pairwise: {plan.pairs} pre-paired pairs with the humans' votes, {orders}: {plan.judgments_per_judge} "
            "judgments per judge")


def preference_report_of(config: RunConfig, dataset: Dataset, judgments: Mapping[str, Mapping[str, Judgment]],
                         request: PreferenceRequest) -> PreferenceReport:
    """The agreement table of a run on pre-paired items."""
    if config.pairs is not None:
        return preference_report(config, dataset, judgments, quality=request.quality, n_boot=request.n_boot,
                                 seed=request.seed)
    return implied_preference_report(config, dataset, judgments, band=request.tie_band, quality=request.quality,
                                     n_boot=request.n_boot, seed=request.seed)


def stored_preference_report(store: RunStore, run_id: int, dataset: Dataset,
                             request: PreferenceRequest) -> PreferenceReport:
    config = store.runs.get_run(run_id).run_config
    if not on_prepaired_items(config, dataset):
        raise ConfigError(f"run {run_id} did not judge the pre-paired items of {dataset.name}")
    return preference_report_of(config, dataset, store.judgments.load_judgments(run_id), request)


@dataclass(frozen=True)
class VersusRow:
    judge: str
    other_judge: str
    pairwise: bool
    other_pairwise: bool
    paired: PairedAgreement


#: The columns of :func:`versus_rows`.
VERSUS_COLUMNS = ("this run", "versus", "pairs", "agree (this)", "agree (versus)", "difference, points",
                  "only this / only versus right", "McNemar p")


def versus(report: PreferenceReport, store: RunStore, other_run: int, dataset: Dataset,
           request: PreferenceRequest) -> list[VersusRow]:
    """This report's judges against run ``other_run``'s on the same pairs (ties counted): each judge
    against the other run's judge of the same name, else its first."""
    theirs = stored_preference_report(store, other_run, dataset, request)
    rows = []
    for name, mine in report.judges.items():
        their_name = name if name in theirs.judges else next(iter(theirs.judges), None)
        if their_name is None:
            continue
        paired = compare_agreement(mine.pairs, theirs.judges[their_name].pairs, n_boot=request.n_boot,
                                   seed=request.seed)
        rows.append(VersusRow(name, their_name, report.setting is not None, theirs.setting is not None, paired))
    return rows


def versus_rows(rows: list[VersusRow], run_id: int, other_run: int) -> list[tuple[str, ...]]:
    how = {True: "pairwise", False: "pointwise"}
    out: list[tuple[str, ...]] = []
    for row in rows:
        p = row.paired
        ci = "" if p.ci is None else f" [{100 * p.ci[0]:+.1f}, {100 * p.ci[1]:+.1f}]"
        out.append((f"{row.judge} (run {run_id}, {how[row.pairwise]})",
                    f"{row.other_judge} (run {other_run}, {how[row.other_pairwise]})", str(p.n),
                    share_text(p.agree_x, p.n), share_text(p.agree_y, p.n),
                    "–" if p.difference is None else f"{100 * p.difference:+.1f}{ci}", f"{p.only_x} / {p.only_y}",
                    "–" if p.p_value is None else f"{p.p_value:.3g}"))
    return out


def versus_notes(rows: list[VersusRow]) -> list[str]:
    unit = rows[0].paired.unit if rows else "pairs"
    return ["pairs both runs gave a verdict on; difference = this run's agreement minus the other's, 95% paired "
            f"bootstrap interval over {unit}; McNemar's exact test treats pairs as independent"]


#: The columns of :func:`pair_vote_rows`: :data:`PAIR_COLUMNS` with the pair's votes after its id.
PAIR_VOTE_COLUMNS = (PAIR_COLUMNS[0], "votes", *PAIR_COLUMNS[1:])
#: The order votes are counted in.
_VOTE_ORDER = ("A", "B", "tie")


def pair_vote_rows(report: PreferenceReport, judge: str, dataset: Dataset) -> list[tuple[str, ...]]:
    """:func:`pair_rows` with every human vote of the pair counted after its id ("2 A, 1 tie"), so a reader
    sees how the humans' label came about; "–" for a pair no longer in ``dataset``."""
    quality = report.humans.quality
    examples = {ex.id: ex for ex in dataset.examples}
    out = []
    for row in pair_rows(report, judge):
        example = examples.get(row[0])
        counts = Counter(votes_of(example, quality)) if example is not None else Counter()
        votes = ", ".join(f"{counts[v]} {v}" for v in _VOTE_ORDER if counts[v]) or "–"
        out.append((row[0], votes, *row[1:]))
    return out


def pair_label(example: Example, quality: str) -> str | None:
    """The pair's human label by the majority rule of :mod:`core.stats.preference` ("A", "B", "tie", or
    "tie (split)" where A and B share the top count); None for a rating that is not the pair's votes."""
    if example.pair is None or quality not in example.ratings:
        return None
    try:
        majority = human_majority(votes_of(example, quality))
    except DataError:
        return None
    if majority.label is None:
        return None
    return majority.label + (" (split)" if majority.split else "")


def pair_summary_lines(dataset: Dataset) -> list[str]:
    """What a pair set holds: its pairs, how to judge them, the human label's ties and the humans'
    agreement; empty for a set with no pairs."""
    items = [ex for ex in dataset if ex.is_pairwise]
    if not items:
        return []
    lines = [f"{len(items)} pairwise items (a prompt, two responses and the humans' preference): judge them with a "
             "pairwise template (e.g. --template pairwise-plain), or rate each reply alone with a pointwise one"]
    try:
        humans = human_side(items, preference_quality(items))
    except DataError as exc:
        return [*lines, f"the votes cannot be read as A, B or tie: {exc}"]
    agreement = humans.with_ties
    lines.append(f"human label = majority of the votes: {humans.voted_ties} pair(s) voted tie, {humans.split_ties} "
                 f"split (counted as ties); {humans.several_votes} pair(s) with several votes, whose two votes agree "
                 + ("–" if agreement.percent is None else f"{100 * agreement.percent:.1f}%")
                 + " of the time (κ " + ("–" if agreement.kappa is None else f"{agreement.kappa:.3f}") + ")")
    return lines


__all__ = ["AGREEMENT_COLUMNS", "CATEGORY_COLUMNS", "PAIR_COLUMNS", "PAIR_VOTE_COLUMNS", "VERSUS_COLUMNS", "PreferenceReport",
           "PreferenceRequest", "VersusRow", "agreement_notes", "agreement_rows", "category_rows",
           "on_prepaired_items", "pair_label", "pair_rows", "pair_vote_rows", "pair_summary_lines", "pairs_to_review", "preference_plan_text",
           "preference_report_of", "stored_preference_report", "versus", "versus_notes", "versus_rows"]
