"""Null comparisons on real human labels: two fake judges unrelated to the humans (the true Δ is 0).

    PYTHONPATH=src python -m bench.null_comparisons            # 1,000 draws on 18 and 60 items
    PYTHONPATH=src python -m bench.null_comparisons --draws 200

The first 18 items (3 contexts) and the first 60 items (10 contexts) of USR Topical-Chat, with
their pooled Overall labels; each draw gives both judges new scores, in two settings:

* "same scale": both judges score on one 1-5 scale (uniform, with decimals), independently: two
  unrelated fake judges that are exchangeable, the null the randomization test is exact for;
* "1-5 vs p(yes)": judge A on a 1-5 scale, judge B a p(yes), as two templates would: the swap
  carries a context's scale along, and the test is conservative there.
 Counted: draws whose verdict claims a difference,
and draws that print p < 0.001, for the verdict dialjudge prints now (``verdict_line``: the
randomization test over contexts, nothing below MIN_CONTEXTS) and for the rule it used before
(a plain percentile bootstrap CI of Δρ over contexts excluding 0, with its bootstrap p-value).
The data is read from ../shared/data (or $DIALJUDGE_SHARED_DATA).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from dialjudge.core.stats import bootstrap as bs
from dialjudge.core.stats.paired import bootstrap_p_value, paired_comparison, verdict_line


def usr_labels(n_items: int) -> tuple[dict[str, float], dict[str, str]]:
    from dialjudge.core.loaders import read_usr
    from dialjudge.core.model import Aggregation
    from dialjudge.core.stats.human import human_labels

    root = Path(os.environ.get("DIALJUDGE_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    examples = read_usr(root / "usr" / "usr_topical_chat.json").examples[:n_items]
    labels = human_labels(examples, "Overall", Aggregation.MEAN).values
    human = {item: float(v) for item, v in labels.items() if v is not None}
    return human, {ex.id: ex.group_id for ex in examples}


SETTINGS = ("same scale", "1-5 vs p(yes)")


def count(n_items: int, draws: int, seed: int, n_boot: int = 2000, setting: str = SETTINGS[0]) -> dict[str, int]:
    human, groups = usr_labels(n_items)
    ids = list(human)
    rng = np.random.default_rng(seed)
    out = {"draws": draws, "contexts": len({groups[i] for i in ids}), "claimed": 0, "p<0.001": 0,
           "old claimed": 0, "old p<0.001": 0}
    y = np.array([human[i] for i in ids])
    for draw in range(draws):
        a = {i: float(rng.uniform(1, 5)) for i in ids}
        b = {i: float(rng.uniform(1, 5)) if setting == SETTINGS[0] else float(rng.random()) for i in ids}
        comparison = paired_comparison(a, b, human, groups, n_boot=n_boot, seed=draw)
        line = verdict_line(comparison)
        out["claimed"] += comparison.decided("spearman")
        out["p<0.001"] += "p = < 0.001" in line
        # The rule before: a plain percentile CI over contexts excluding 0, and the bootstrap p-value.
        rs = bs.resample(len(ids), [groups[i] for i in ids], n_boot=n_boot, seed=draw)
        x_a, x_b = np.array([a[i] for i in ids]), np.array([b[i] for i in ids])
        deltas = bs.weighted_spearman(x_b, y, rs.item_weights, rs.memo) - bs.weighted_spearman(x_a, y, rs.item_weights,
                                                                                              rs.memo)
        low, high, _ = bs.percentile_interval(deltas, 0.95)
        out["old claimed"] += bool(low > 0 or high < 0)
        out["old p<0.001"] += bootstrap_p_value(deltas) < 0.001
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.null_comparisons", description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--boot", type=int, default=2000, help="bootstrap resamples (runs compare's default)")
    parser.add_argument("--settings", default=",".join(SETTINGS), help="same scale, 1-5 vs p(yes), or both")
    args = parser.parse_args(argv)
    print("| judges | items | contexts | draws | claims a difference (now) | p < 0.001 (now) | claims (before) | "
          "p < 0.001 (before) |")
    print("|---|---|---|---|---|---|---|---|")
    for setting in args.settings.split(","):
        for n_items in (18, 60):
            c = count(n_items, args.draws, args.seed + n_items, args.boot, setting)
            share = c["claimed"] / c["draws"]
            error = (0.05 * 0.95 / c["draws"]) ** 0.5
            print(f"| {setting} | {n_items} | {c['contexts']} | {c['draws']} | {c['claimed']} ({share:.1%}; "
                  f"MC error at 5%: ±{error:.1%}) | {c['p<0.001']} | {c['old claimed']} "
                  f"({c['old claimed'] / c['draws']:.1%}) | {c['old p<0.001']} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
