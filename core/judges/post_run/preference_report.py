"""A pairwise run on pre-paired items, read back against the humans' votes.

Shared by ``dialjudge judge`` and the app. The statistics are in
:mod:`dialjudge.core.stats.preference`; this module finds each pair's votes in the
dataset (the ``preference`` rating of the pair loaders, or a JUDGE-BENCH pair's one
categorical metric, its labels read as A/B/tie), reads each asked order's verdict
from the stored judgments, and assembles one :class:`PreferenceReport`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ...errors import DataError
from ...loaders.preference import ALLOWED_TEXT, PREFERENCE, winner_label
from ...model import Dataset, Example
from ...stats.pairwise import word_count
from ...stats.preference import (
    TIE,
    A,
    Agreement,
    B,
    HumanAgreement,
    JudgedPair,
    LongerWins,
    OrderStats,
    OrderVerdict,
    TieCalibration,
    agreement,
    by_category,
    human_agreement,
    human_majority,
    longer_wins,
    order_stats,
    tie_calibrated_accuracy,
)
from ..prompts.templates import parse_template
from ..run.config import RunConfig
from ..run.pairwise import PairSetting, Verdict, plan_pairs, verdict_of
from ..run.prepaired import reply_id, side_of
from ..types import Judgment

#: Where a pair's category is looked for in Example.extra (the pair loaders; a JUDGE-BENCH instance field).
CATEGORY_KEYS = ("category", "domain", "task")


@dataclass(frozen=True)
class HumanSide:
    pairs: int
    #: Pairs whose label is a tie: voted (the top count is tie) and split (A and B share the top count).
    voted_ties: int
    split_ties: int
    several_votes: int
    with_ties: HumanAgreement
    without_ties: HumanAgreement
    longer: LongerWins
    quality: str


@dataclass(frozen=True)
class JudgeSide:
    judge: str
    pairs: tuple[JudgedPair, ...]
    with_ties: Agreement
    without_ties: Agreement
    tie_calibrated: TieCalibration
    order: OrderStats
    longer: LongerWins
    categories: dict[str, tuple[Agreement, Agreement]]
    #: Asked orders with no stored judgment yet, and failed judgments.
    missing: int
    failed: int


@dataclass(frozen=True)
class PreferenceReport:
    #: The pairwise run's pair setting; None for a pointwise run (each reply rated alone).
    setting: PairSetting | None
    humans: HumanSide
    judges: dict[str, JudgeSide]
    #: Pairs the loader left out, by reason (identical replies, ...).
    excluded_at_load: dict[str, int] = field(default_factory=dict)
    #: A pointwise run: the score difference within which the implied verdict is a tie.
    band: float = 0.0

    @property
    def n_pairs(self) -> int:
        return self.humans.pairs


def preference_quality(dataset: Dataset | Sequence[Example], quality: str | None = None) -> str:
    """The rating holding the humans' preference: ``quality``, else ``preference``, else the one
    categorical rating the pairs have."""
    examples = list(dataset)
    if quality:
        return quality
    names = {q for ex in examples for q in ex.ratings}
    if PREFERENCE in names:
        return PREFERENCE
    categorical = sorted(q for ex in examples for q, r in ex.ratings.items() if not r.scale.is_numeric)
    distinct = sorted(set(categorical))
    if len(distinct) == 1:
        return distinct[0]
    raise DataError("pre-paired items need one categorical rating of which reply the humans preferred; found "
                    + (", ".join(distinct) if distinct else "none") + " (name one with --quality)")


def votes_of(example: Example, quality: str) -> list[str]:
    """The pair's votes as A/B/tie; a label that names none of them is a DataError, never a guess."""
    rating = example.ratings.get(quality)
    if rating is None:
        return []
    extra = example.extra
    model_a, model_b = extra.get("model_a"), extra.get("model_b")
    out = []
    for k, value in enumerate(rating.scores):
        if value is None:
            continue
        label = winner_label(value, model_a=model_a, model_b=model_b)
        if label is None:
            raise DataError(f"vote {value!r} is not an allowed spelling: expected {ALLOWED_TEXT}",
                            record=example.id, field=f"{quality}[{k}]")
        out.append(label)
    return out


def category_of(example: Example) -> str | None:
    for source in (example.extra, example.extra.get("instance") or {}):
        if isinstance(source, Mapping):
            for key in CATEGORY_KEYS:
                if isinstance(source.get(key), str) and source[key]:
                    return str(source[key])
    return None


def human_side(examples: Sequence[Example], quality: str) -> HumanSide:
    votes = [votes_of(ex, quality) for ex in examples]
    majorities = [human_majority(v) for v in votes]
    skeleton = [_pair(ex, v, None, None) for ex, v in zip(examples, votes)]
    return HumanSide(
        pairs=len(examples),
        voted_ties=sum(1 for m in majorities if m.label == TIE and not m.split),
        split_ties=sum(1 for m in majorities if m.split),
        several_votes=sum(1 for v in votes if len(v) > 1),
        with_ties=human_agreement(votes, ties=True), without_ties=human_agreement(votes, ties=False),
        longer=longer_wins(skeleton, humans=True), quality=quality)


def _pair(ex: Example, votes: list[str], a_first: OrderVerdict | None, b_first: OrderVerdict | None) -> JudgedPair:
    assert ex.pair is not None
    majority = human_majority(votes)
    return JudgedPair(ex.id, ex.group_id, majority.label, word_count(ex.pair.response_a),
                      word_count(ex.pair.response_b), a_first, b_first, category_of(ex), majority.split)


def order_verdict(judgment: Judgment, choices: tuple[str, ...], first_side: str) -> OrderVerdict:
    """One asked order's verdict named by reply, with p(A) − p(B) where the answer has probabilities."""
    verdict = verdict_of(judgment, choices)
    if verdict is None:
        return OrderVerdict(None)
    second_side = B if first_side == A else A
    label = {Verdict.FIRST: first_side, Verdict.SECOND: second_side, Verdict.TIE: TIE}[verdict]
    margin = None
    if judgment.distribution:
        probs = [float(judgment.distribution.get(c, 0.0)) for c in choices]
        total = sum(probs)
        if total > 0:
            first_minus_second = (probs[0] - probs[1]) / total
            margin = first_minus_second if first_side == A else -first_minus_second
    return OrderVerdict(label, margin)


def preference_report(config: RunConfig, dataset: Dataset, table: Mapping[str, Mapping[str, Judgment]], *,
                      quality: str | None = None, n_boot: int = 1000, seed: int = 0) -> PreferenceReport:
    """The report of a pairwise run on pre-paired items (``table``: ``{judge: {item id: Judgment}}``)."""
    if config.pairs is None:
        raise ValueError("not a pairwise run")
    items = prepaired_selection(config, dataset)
    if not items:
        raise ValueError("not a run on pre-paired items")
    name = preference_quality(items, quality or config.quality)
    choices = parse_template(config.template_text, config.template_source or config.template).output.choices
    plan = plan_pairs(items, config.pairs)
    votes = {ex.id: votes_of(ex, name) for ex in items}
    judges = {}
    for judge, judgments in table.items():
        orders: dict[str, dict[str, OrderVerdict]] = {}
        missing = failed = 0
        for asked in plan.asked:
            judgment = judgments.get(asked.item_id)
            if judgment is None:
                missing += 1
                continue
            pair_id, side = side_of(asked.first)
            verdict = order_verdict(judgment, choices, side)
            failed += verdict.verdict is None
            orders.setdefault(pair_id, {})[side] = verdict
        pairs = tuple(_pair(ex, votes[ex.id], orders.get(ex.id, {}).get(A), orders.get(ex.id, {}).get(B))
                      for ex in items)
        judges[judge] = judge_side(judge, pairs, missing=missing, failed=failed, n_boot=n_boot, seed=seed)
    return PreferenceReport(config.pairs, human_side(items, name), judges, _excluded_at_load(dataset))


def judge_side(judge: str, pairs: tuple[JudgedPair, ...], *, missing: int, failed: int, n_boot: int,
               seed: int) -> JudgeSide:
    return JudgeSide(
        judge=judge, pairs=pairs,
        with_ties=agreement(pairs, ties=True, n_boot=n_boot, seed=seed),
        without_ties=agreement(pairs, ties=False, n_boot=n_boot, seed=seed),
        tie_calibrated=tie_calibrated_accuracy(pairs, seed=seed), order=order_stats(pairs),
        longer=longer_wins(pairs, humans=False), categories=by_category(pairs, n_boot=n_boot, seed=seed),
        missing=missing, failed=failed)


def _excluded_at_load(dataset: Dataset) -> dict[str, int]:
    excluded = dataset.meta.get("excluded") or {}
    return {str(k): int(v) for k, v in excluded.items()} if isinstance(excluded, dict) else {}


def implied_verdict(score_a: float | None, score_b: float | None, band: float) -> OrderVerdict:
    """A pointwise run's verdict on a pair: the reply with the higher 0-1 score, a tie within ``band``;
    the margin is the score difference. No verdict when either reply has no score."""
    if score_a is None or score_b is None:
        return OrderVerdict(None)
    margin = score_a - score_b
    return OrderVerdict(TIE if abs(margin) <= band else (A if margin > 0 else B), margin)


def implied_preference_report(config: RunConfig, dataset: Dataset, table: Mapping[str, Mapping[str, Judgment]], *,
                              band: float = 0.0, quality: str | None = None, n_boot: int = 1000,
                              seed: int = 0) -> PreferenceReport:
    """The report of a pointwise run on pre-paired items: each reply was rated alone, and the pair's
    verdict is the one its two scores imply (see :func:`implied_verdict`)."""
    if config.pairs is not None:
        raise ValueError("a pairwise run: use preference_report")
    if band < 0:
        raise ValueError(f"the tie band must be at least 0, not {band}")
    items = prepaired_selection(config, dataset)
    name = preference_quality(items, quality or config.quality)
    votes = {ex.id: votes_of(ex, name) for ex in items}
    judges = {}
    for judge, judgments in table.items():
        missing = failed = 0
        pairs = []
        for ex in items:
            scores = []
            for side in (A, B):
                judgment = judgments.get(reply_id(ex.id, side))
                if judgment is None:
                    missing += 1
                elif judgment.failed:
                    failed += 1
                scores.append(None if judgment is None or judgment.failed else judgment.normalized)
            majority = human_majority(votes[ex.id])
            assert ex.pair is not None
            pairs.append(JudgedPair(ex.id, ex.group_id, majority.label, word_count(ex.pair.response_a),
                                    word_count(ex.pair.response_b), category=category_of(ex),
                                    human_split=majority.split, direct=implied_verdict(scores[0], scores[1], band)))
        judges[judge] = judge_side(judge, tuple(pairs), missing=missing, failed=failed, n_boot=n_boot, seed=seed)
    return PreferenceReport(None, human_side(items, name), judges, _excluded_at_load(dataset), band=band)


def prepaired_selection(config: RunConfig, dataset: Dataset) -> list[Example]:
    """The pre-paired items of a run's selection (before they were opened into replies); empty when the
    run's items are not pre-paired."""
    import dataclasses

    replies = dataclasses.replace(config, pairs=None).select_items(dataset)
    if not replies or not all(_is_reply(ex) for ex in replies):
        return []
    wanted = {ex.extra["pair"] for ex in replies}
    return [ex for ex in dataset.examples if ex.id in wanted]


def _is_reply(ex: Example) -> bool:
    pair = ex.extra.get("pair")
    return isinstance(pair, str) and ex.id == reply_id(pair, str(ex.extra.get("side", "")))


def is_preference_run(config: RunConfig, dataset: Dataset) -> bool:
    """A pairwise run whose items are pre-paired."""
    return config.pairs is not None and bool(prepaired_selection(config, dataset))


def is_pointwise_preference_run(config: RunConfig, dataset: Dataset) -> bool:
    """A pointwise run whose items are the replies of pre-paired items."""
    return config.pairs is None and bool(prepaired_selection(config, dataset))


# --------------------------------------------------------------------------- text shared by the CLI and the app

#: The columns of :func:`agreement_rows`.
AGREEMENT_COLUMNS = ("who", "pairs", "agree, ties excluded", "κ, ties excluded", "agree, ties counted",
                     "κ, ties counted", "tie-calibrated", "flip under swap", "first-position wins",
                     "longer reply wins")


def share_text(part: int, whole: int) -> str:
    return "–" if not whole else f"{100 * part / whole:.1f}% ({part}/{whole})"


def _interval(ci: tuple[float, float] | None, percent: bool) -> str:
    if ci is None:
        return ""
    scale = 100 if percent else 1
    digits = 1 if percent else 2
    return f" [{scale * ci[0]:.{digits}f}, {scale * ci[1]:.{digits}f}]"


def _kappa(value: float | None, ci: tuple[float, float] | None) -> str:
    return "–" if value is None else f"{value:.3f}{_interval(ci, False)}"


def agreement_text(a: Agreement) -> str:
    return share_text(a.agree, a.n) + _interval(a.ci, True) if a.n else "–"


def agreement_rows(report: PreferenceReport) -> list[tuple[str, ...]]:
    """One row per judge, then the humans (see AGREEMENT_COLUMNS)."""
    rows: list[tuple[str, ...]] = []
    for name, judge in report.judges.items():
        o, tc = judge.order, judge.tie_calibrated
        rows.append((name, str(report.n_pairs), agreement_text(judge.without_ties),
                     _kappa(judge.without_ties.kappa, judge.without_ties.kappa_ci), agreement_text(judge.with_ties),
                     _kappa(judge.with_ties.kappa, judge.with_ties.kappa_ci), share_text(tc.correct, tc.n),
                     share_text(o.flips, o.both_orders), share_text(o.first_wins, o.decisive),
                     share_text(judge.longer.longer_wins, judge.longer.n)))
    h = report.humans
    human_kappa = "–" if h.without_ties.kappa is None else f"{h.without_ties.kappa:.3f}"
    human_kappa_ties = "–" if h.with_ties.kappa is None else f"{h.with_ties.kappa:.3f}"
    rows.append((f"humans ({h.quality})", str(h.pairs), _percent(h.without_ties.percent), human_kappa,
                 _percent(h.with_ties.percent), human_kappa_ties, "–", "–", "–",
                 share_text(h.longer.longer_wins, h.longer.n)))
    return rows


def _percent(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def agreement_notes(report: PreferenceReport) -> list[str]:
    """How to read the table: n, exclusions by reason, the rules."""
    h = report.humans
    if report.setting is None:
        asked = (f"each reply rated alone (pointwise): the higher score wins, a difference of at most "
                 f"{report.band:g} (0-1 scale) is a tie")
    elif report.setting.both_orders:
        asked = "asked in both orders"
    else:
        asked = f"asked in one order each, drawn with seed {report.setting.seed}"
    notes = [f"{report.n_pairs} pairs, {asked}. Human label = majority of the votes; "
             f"{h.voted_ties} pair(s) where most votes say tie, {h.split_ties} split pair(s) (A and B, or a label and "
             "tie, share the top count) counted as ties"]
    if report.excluded_at_load:
        notes.append("left out when loading: " + ", ".join(f"{n} {reason}" for reason, n in
                                                           report.excluded_at_load.items()))
    for name, judge in report.judges.items():
        parts = [f"{reason} {n}" for reason, n in judge.without_ties.excluded.items()]
        unit = judge.with_ties
        line = (f"{name}: ties excluded leaves out " + (", ".join(parts) if parts else "nothing")
                + f"; ties counted leaves out {judge.with_ties.excluded.get('no judge verdict', 0)} with no judge "
                f"verdict; 95% bootstrap intervals over {unit.units} {unit.unit}")
        if judge.order.one_order:
            line += f"; {judge.order.one_order} pairs judged in one order only"
        if judge.failed or judge.missing:
            line += f"; {judge.failed} failed and {judge.missing} not yet judged asked orders"
        tc = judge.tie_calibrated
        if tc.folds:
            line += ("; tie band ε chosen on one half, tested on the other: "
                     + ", ".join(f"ε = {f.epsilon:.3f} ({f.correct}/{f.tested_on})" for f in tc.folds))
        notes.append(line)
    notes.append("humans' agreement: chance that two votes on the same pair agree, over the "
                 f"{h.with_ties.pairs} pairs with several votes ({h.without_ties.pairs} once tie votes are dropped); "
                 "κ = Fleiss-style, chance from the pooled vote shares")
    notes.append("judge verdict of a pair asked in both orders: the reply it chose both times, else a tie. "
                 "flip under swap: pairs whose verdict changes when the replies swap places; first-position wins: "
                 "decisive verdicts won by the reply shown first (50% = no position preference); longer reply wins: "
                 "decisive pairs of replies of different length (words) won by the longer one, beside the humans' "
                 "own share. Tie-calibrated: Deutsch et al. (EMNLP 2023), tie when |p(A) − p(B)| ≤ ε")
    return notes


def category_rows(report: PreferenceReport) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for name, judge in report.judges.items():
        for category, (counted, excluded) in judge.categories.items():
            rows.append((name, category, str(counted.n + sum(counted.excluded.values())), agreement_text(excluded),
                         _kappa(excluded.kappa, None), agreement_text(counted), _kappa(counted.kappa, None)))
    return rows


CATEGORY_COLUMNS = ("judge", "category", "pairs", "agree, ties excluded", "κ, ties excluded", "agree, ties counted",
                    "κ, ties counted")


def pair_rows(report: PreferenceReport, judge: str) -> list[tuple[str, ...]]:
    """Per pair: the votes' label, the judge's verdict in each order and for the pair."""
    side = report.judges[judge]

    def text(order: OrderVerdict | None) -> str:
        if order is None:
            return "not asked"
        return "failed" if order.verdict is None else order.verdict

    return [(p.pair, (p.human or "–") + (" (split)" if p.human_split else ""), text(p.a_first), text(p.b_first),
             p.verdict or "–") for p in side.pairs]


PAIR_COLUMNS = ("pair", "humans", "judge, A shown first", "judge, B shown first", "judge verdict")

#: Why a pair is worth a look (the Review queue's flags).
WRONG_BOTH_ORDERS = "wrong in both orders"
FLIPS = "flips with the order"


def pairs_to_review(report: PreferenceReport, judge: str) -> list[tuple[str, str]]:
    """(pair id, reason) for the pairs a reader should look at: the judge contradicts the human label in
    both orders (each order's verdict differs from it), or its verdict changes when the replies swap."""
    out = []
    for p in report.judges[judge].pairs:
        if p.human is None:
            continue
        if p.flipped:
            out.append((p.pair, FLIPS))
        elif (p.a_first is not None and p.b_first is not None and p.a_first.verdict is not None
              and p.b_first.verdict is not None and p.a_first.verdict != p.human and p.b_first.verdict != p.human):
            out.append((p.pair, WRONG_BOTH_ORDERS))
    return out


__all__ = ["AGREEMENT_COLUMNS", "CATEGORY_COLUMNS", "PAIR_COLUMNS", "HumanSide", "JudgeSide", "PreferenceReport",
           "implied_preference_report", "implied_verdict", "is_pointwise_preference_run", "judge_side", "prepaired_selection",
           "agreement_notes", "agreement_rows", "category_of", "category_rows", "is_preference_run", "order_verdict",
           "pair_rows", "pairs_to_review", "preference_quality", "preference_report", "votes_of"]
