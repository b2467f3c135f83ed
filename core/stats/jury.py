"""A jury: several judges pooled into one, on a matrix of their scores (members x items).

After PoLL (Verga et al. 2024, "Replacing Judges with Juries"): a panel of judges with errors of their
own agrees with people better than each of them. Three ways to pool, each with abstentions (NaN: a
failed or unparseable judgment does not vote, and the rest decide):

* **majority**: each member votes the scale point nearest its score; the most votes win. A tie goes
  to the tied point nearest the mean of the tied points (on an ordinal scale, votes 2, 3 and 5 give
  3: the middle, not an end); where two are equally near (a pass/fail tie, or 2 and 4), to the one
  voted by the *first member listed* (so the user decides ahead, by the order of the members, whom
  such a tie follows; :data:`TIE_RULE`).
* **mean**: the mean of the members' scores (0-1) that voted.
* **learned**: a ridge regression of the human label on the members' scores, fitted on labelled
  items and **cross-fitted by context**: the contexts are dealt to folds, and an item's weights are
  fitted on the labelled items of the other folds, so no item (nor its context's other items) is
  weighted by its own label. An item of a context without labels gets the weights fitted on every
  label (it has none of its own to leak). A member that abstains on an item takes its mean score
  on the training items.

The jury's **confidence** on an item is the share of all its members whose own scale point equals
the jury's (a member that abstained counts as disagreeing): what selective trust
(:mod:`core.stats.selective`) thresholds.
"""

from __future__ import annotations

import enum
import zlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

#: How a majority tie is broken, in words (every report says it).
TIE_RULE = ("a tie goes to the tied point nearest the mean of the tied points; where two are equally near (a "
            "pass/fail tie), to the one voted by the first member listed")
#: Folds of contexts for the learned weights.
DEFAULT_FOLDS = 5
#: Ridge penalty of the learned weights (on 0-1 scores; small: it only keeps a singular fit finite).
RIDGE = 1e-3


class JuryMethod(str, enum.Enum):
    MAJORITY = "majority"
    MEAN = "mean"
    LEARNED = "learned"


@dataclass(frozen=True)
class JuryScores:
    """The jury's value per item (0-1; NaN where no member voted), its confidence and its voters."""

    values: np.ndarray
    confidence: np.ndarray
    voters: np.ndarray
    #: Items whose majority vote tied (broken by :data:`TIE_RULE`).
    ties: np.ndarray
    #: Learned method: the weights fitted on every label (intercept first); else empty.
    weights: tuple[float, ...] = ()
    folds: int = 0


def points_of(scores: ArrayLike, points: Sequence[float]) -> np.ndarray:
    """Each 0-1 score as the nearest of ``points`` (0-1 positions of the scale's points; halves up)."""
    x = np.asarray(scores, dtype=float)
    grid = np.asarray(sorted(points), dtype=float)
    out = np.full(x.shape, np.nan)
    ok = np.isfinite(x)
    if not ok.any():
        return out
    # Nearest point, a tie going to the higher one (halves round up, as pool.judge_label does).
    distance = np.abs(x[ok][..., None] - grid)
    nearest = distance.shape[-1] - 1 - np.argmin(distance[..., ::-1], axis=-1)
    out[ok] = grid[nearest]
    return out


def majority(scores: ArrayLike, points: Sequence[float]) -> JuryScores:
    """The majority vote of the members (rows) on every item (column), abstentions left out."""
    votes = points_of(scores, points)
    n_members, n_items = votes.shape
    values = np.full(n_items, np.nan)
    ties = np.zeros(n_items, dtype=bool)
    grid = np.asarray(sorted(points), dtype=float)
    counts = np.stack([(votes == p).sum(axis=0) for p in grid])  # points x items
    best = counts.max(axis=0)
    voted = best > 0
    for item in np.flatnonzero(voted):
        tied = grid[counts[:, item] == best[item]]
        if tied.size == 1:
            values[item] = tied[0]
            continue
        ties[item] = True
        distance = np.abs(tied - tied.mean())
        nearest = tied[np.isclose(distance, distance.min())]
        values[item] = next(v for v in votes[:, item] if np.isfinite(v) and v in nearest)
    return JuryScores(values, _confidence(votes, values), np.isfinite(votes).sum(axis=0), ties)


def mean(scores: ArrayLike, points: Sequence[float]) -> JuryScores:
    """The mean of the members' scores that voted."""
    x = np.asarray(scores, dtype=float)
    voters = np.isfinite(x).sum(axis=0)
    with np.errstate(invalid="ignore"):
        values = np.where(voters > 0, np.nansum(x, axis=0) / np.maximum(voters, 1), np.nan)
    return JuryScores(values, _confidence(points_of(x, points), points_of(values, points)), voters,
                      np.zeros(x.shape[1], dtype=bool))


def context_folds(groups: Sequence[str], folds: int = DEFAULT_FOLDS, seed: int = 0) -> np.ndarray:
    """Each item's fold, dealt by its context (a hash of the context's name and the seed: no item's
    fold depends on the others' order)."""
    return np.array([zlib.crc32(f"{seed}\x1f{g}".encode("utf-8")) % folds for g in groups], dtype=int)


def learned(scores: ArrayLike, labels: ArrayLike, groups: Sequence[str], points: Sequence[float], *,
            folds: int = DEFAULT_FOLDS, seed: int = 0) -> JuryScores:
    """Weights learned on the labelled items (``labels`` NaN where unlabelled; on 0-1), cross-fitted
    by context folds. Needs labelled items in at least two folds."""
    x = np.asarray(scores, dtype=float)
    y = np.asarray(labels, dtype=float)
    if y.shape != (x.shape[1],):
        raise ValueError(f"{y.size} labels for {x.shape[1]} items")
    fold = context_folds(groups, folds, seed)
    labelled = np.isfinite(y) & np.isfinite(x).any(axis=0)
    used = sorted(set(fold[labelled].tolist()))
    if len(used) < 2:
        raise ValueError("learned weights need labelled items in at least two context folds "
                         f"(have {int(labelled.sum())} labelled items in {len(used)})")
    values = np.full(x.shape[1], np.nan)
    voters = np.isfinite(x).sum(axis=0)
    in_labelled_context = np.isin(np.asarray(groups, dtype=object),
                                  np.asarray(sorted({g for g, lab in zip(groups, labelled) if lab}), dtype=object))
    for f in range(folds):
        # The items of this fold's labelled contexts get weights fitted on the other folds' labels only.
        target = (fold == f) & in_labelled_context & (voters > 0)
        if target.any():
            train = labelled & (fold != f)
            values[target] = _predict(x, y, train, target)
    rest = ~in_labelled_context & (voters > 0)
    if rest.any():
        values[rest] = _predict(x, y, labelled, rest)
    values = np.clip(values, 0.0, 1.0)
    weights = tuple(float(w) for w in _fit(x, y, labelled)[0])
    return JuryScores(values, _confidence(points_of(x, points), points_of(values, points)), voters,
                      np.zeros(x.shape[1], dtype=bool), weights, folds)


def _fit(x: np.ndarray, y: np.ndarray, train: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ridge weights (intercept first, unpenalised) on the training items, and each member's training mean
    (what an abstaining member is taken to say)."""
    xt = x[:, train]
    fill = np.array([np.nanmean(row) if np.isfinite(row).any() else 0.5 for row in xt])
    design = _design(xt, fill)
    penalty = RIDGE * np.eye(design.shape[1])
    penalty[0, 0] = 0.0
    weights = np.linalg.solve(design.T @ design + penalty, design.T @ y[train])
    return weights, fill


def _design(x: np.ndarray, fill: np.ndarray) -> np.ndarray:
    filled = np.where(np.isfinite(x), x, fill[:, None])
    return np.column_stack([np.ones(x.shape[1]), filled.T])


def _predict(x: np.ndarray, y: np.ndarray, train: np.ndarray, target: np.ndarray) -> np.ndarray:
    weights, fill = _fit(x, y, train)
    return _design(x[:, target], fill) @ weights


def _confidence(member_points: np.ndarray, jury_points: np.ndarray) -> np.ndarray:
    """Share of all members whose point is the jury's (abstaining members disagree); NaN without a verdict."""
    agree = (member_points == jury_points[None, :]).sum(axis=0) / member_points.shape[0]
    return np.where(np.isfinite(jury_points), agree, np.nan)


def pool(method: JuryMethod, scores: ArrayLike, points: Sequence[float], *, labels: ArrayLike | None = None,
         groups: Sequence[str] | None = None, folds: int = DEFAULT_FOLDS, seed: int = 0) -> JuryScores:
    """The jury by ``method`` (``labels`` and ``groups`` for the learned one)."""
    if method is JuryMethod.MAJORITY:
        return majority(scores, points)
    if method is JuryMethod.MEAN:
        return mean(scores, points)
    if labels is None or groups is None:
        raise ValueError("learned weights need labels and the items' contexts")
    return learned(scores, labels, groups, points, folds=folds, seed=seed)


__all__ = ["DEFAULT_FOLDS", "JuryMethod", "JuryScores", "TIE_RULE", "context_folds", "learned", "majority", "mean",
           "points_of", "pool"]
