"""Runs that judged pairs, compared on the pairs both judged: the verdicts ``runs compare`` prints for
pairwise runs within contexts and for runs on pre-paired replies (judged here or imported).

A pre-paired run's pairs carry the humans' votes; a within-context pairwise run's pairs get the humans'
verdict from their pooled ratings of the two responses (the higher mean wins, equal means tie). Each
run's judge then has a verdict per pair by the conservative rule, and two runs are compared by the
paired permutation test of :mod:`core.stats.pair_verdict_test`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..errors import ConfigError, DataError
from ..judges.post_run.pairwise_report import asked_verdicts, candidate_items
from ..judges.post_run.preference_report import (
    implied_preference_report,
    implied_verdict,
    is_pointwise_preference_run,
    is_preference_run,
    preference_report,
)
from ..judges.prompts.templates import parse_template
from ..judges.run.config import RunConfig
from ..judges.run.pairwise import plan_pairs
from ..judges.types import Judgment
from ..model import Aggregation, Dataset
from ..stats.human import human_labels
from ..stats.pair_verdict_test import RULE_TEXT, TEST_TEXT, PairVerdictTest, pair_verdict_test
from ..stats.pairwise import HUMAN_TIE, human_pair_verdicts
from ..stats.preference import TIE, A, B, JudgedPair, OrderVerdict

#: Joins a within-context pair's two response ids into its pair id (a character no id holds).
PAIR_JOIN = "\x1f"


def judges_pairs(config: RunConfig, dataset: Dataset) -> bool:
    """The run judged pairs: pairwise within contexts, or pre-paired replies (asked as pairs or rated alone)."""
    return config.pairs is not None or is_pointwise_preference_run(config, dataset)


def judged_pairs(config: RunConfig, dataset: Dataset, table: Mapping[str, Mapping[str, Judgment]],
                 quality: str | None = None) -> dict[str, list[JudgedPair]]:
    """Per judge, every pair the run asked, with the humans' label and the judge's verdict in each order."""
    if is_preference_run(config, dataset):
        report = preference_report(config, dataset, table, quality=quality, n_boot=0)
        return {judge: list(side.pairs) for judge, side in report.judges.items()}
    if is_pointwise_preference_run(config, dataset):
        report = implied_preference_report(config, dataset, table, quality=quality, n_boot=0)
        return {judge: list(side.pairs) for judge, side in report.judges.items()}
    if config.pairs is None:
        raise ConfigError("not a run on pairs")
    return _context_pairs(config, dataset, table, quality or config.quality)


def _context_pairs(config: RunConfig, dataset: Dataset, table: Mapping[str, Mapping[str, Judgment]],
                   quality: str | None) -> dict[str, list[JudgedPair]]:
    if not quality:
        raise ConfigError("the run names no human-rated quality to compare its verdicts with: give --quality")
    scale = dataset.qualities.get(quality)
    if scale is None or not scale.is_numeric:
        raise DataError(f"{dataset.name}: {quality!r} is not a numeric rating of {dataset.name}'s responses")
    assert config.pairs is not None
    candidates = candidate_items(config, dataset)
    plan = plan_pairs(candidates, config.pairs)
    choices = parse_template(config.template_text, config.template_source or config.template).output.choices
    labels = human_labels(candidates, quality, Aggregation.MEAN).values
    ratings = {item: (None if value is None else float(value)) for item, value in labels.items()}
    context_of: dict[tuple[str, str], str] = {}
    for asked in plan.asked:
        context_of.setdefault(_key(asked.first, asked.second), asked.context)
    human = human_pair_verdicts(ratings, sorted(context_of))
    out: dict[str, list[JudgedPair]] = {}
    for judge, judgments in table.items():
        verdicts, _ = asked_verdicts(plan, judgments, choices)
        orders: dict[tuple[str, str], dict[str, OrderVerdict]] = {}
        for v in verdicts:
            a, b = _key(v.first, v.second)
            label = None if v.verdict is None else TIE if v.verdict == "tie" else (A if v.winner == a else B)
            orders.setdefault((a, b), {})[A if v.first == a else B] = OrderVerdict(label)
        pairs = []
        for (a, b), context in context_of.items():
            h = human.get(frozenset((a, b)))
            label = None if h is None else TIE if h == HUMAN_TIE else (A if h == a else B)
            in_order = orders.get((a, b), {})
            pairs.append(JudgedPair(f"{a}{PAIR_JOIN}{b}", context, label, 0, 0, a_first=in_order.get(A),
                                    b_first=in_order.get(B)))
        out[judge] = pairs
    return out


def implied_pairs(scores: Mapping[str, Mapping[str, float | None]], asked: Sequence[JudgedPair]
                  ) -> dict[str, list[JudgedPair]]:
    """A run that scored responses one by one, on the pairs another run asked (ids ``a PAIR_JOIN b``): per judge,
    the verdict its two scores imply (the higher wins; equal scores tie), as for pointwise runs on
    pre-paired replies."""
    out: dict[str, list[JudgedPair]] = {}
    for judge, column in scores.items():
        pairs = []
        for p in asked:
            first, _, second = p.pair.partition(PAIR_JOIN)
            verdict = implied_verdict(column.get(first), column.get(second), 0.0)
            pairs.append(JudgedPair(p.pair, p.prompt, p.human, p.length_a, p.length_b, direct=verdict))
        out[judge] = pairs
    return out


def _key(first: str, second: str) -> tuple[str, str]:
    return (first, second) if first <= second else (second, first)


def compare_pair_runs(pairs_a: Mapping[str, Sequence[JudgedPair]], pairs_b: Mapping[str, Sequence[JudgedPair]],
                      run_a: int, run_b: int, *, n_boot: int = 1000, seed: int = 0) -> list[PairVerdictTest]:
    """Judges of the same name in both runs, else every judge of run A against every judge of run B, on
    the pairs both judged; positive differences favour run B."""
    shared = [(name, name) for name in pairs_a if name in pairs_b]
    if not shared:
        shared = [(a, b) for a in pairs_a for b in pairs_b]
    out = []
    for judge_a, judge_b in shared:
        plain = len(shared) == 1 and (judge_a == judge_b or len(pairs_a) == len(pairs_b) == 1)
        out.append(pair_verdict_test(pairs_b[judge_b], pairs_a[judge_a],
                                     name_x=f"run {run_b}" if plain else f"run {run_b} {judge_b}",
                                     name_y=f"run {run_a}" if plain else f"run {run_a} {judge_a}",
                                     n_boot=n_boot, seed=seed))
    return out


#: The columns of :func:`pair_comparison_rows`.
PAIR_COMPARISON_COLUMNS = ("judge", "pairs both judged", "agree (A run)", "agree (B run)", "Δ (B − A)", "95% CI", "p")


def pair_comparison_rows(tests: Sequence[PairVerdictTest]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for t in tests:
        a = t.agreement
        diff = "–" if a.difference is None else f"{100 * a.difference:+.1f} pts"
        ci = "–" if a.ci is None else f"[{100 * a.ci[0]:+.1f}, {100 * a.ci[1]:+.1f}]"
        rows.append((f"{t.name_y} → {t.name_x}", str(a.n), _share(a.agree_y, a.n), _share(a.agree_x, a.n), diff, ci,
                     "–" if t.p_value != t.p_value else f"{t.p_value:.3g}"))
    return rows


def _share(part: int, whole: int) -> str:
    return "–" if not whole else f"{100 * part / whole:.1f}%"


def pair_comparison_notes() -> list[str]:
    return [f"rule: {RULE_TEXT}", f"test: {TEST_TEXT}; the CI is a bootstrap over prompts (pairs when each prompt "
            "has one)"]


__all__ = ["PAIR_COMPARISON_COLUMNS", "compare_pair_runs", "judged_pairs", "judges_pairs", "pair_comparison_notes",
           "pair_comparison_rows"]
