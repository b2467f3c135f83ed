"""JUDGE-BENCH's table convention (core.stats.judge_bench_protocol), computed by hand on a small file."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from scipy import stats

from dialjudge.core.loaders import read_judge_bench
from dialjudge.core.stats.judge_bench_protocol import (
    CATEGORICAL,
    GRADED,
    categorical_result,
    graded_result,
    summarise,
)
from dialjudge.core.stats.label_agreement import compare_labels
from judge_bench_files import small_protocol_set as small_set


def test_spearman_per_graded_metric_kappa_per_categorical_and_mean_sd_by_hand(tmp_path: Path) -> None:
    examples = read_judge_bench(small_set(tmp_path)).examples
    # coherence: human means a..e = 1..5; the judge could not be read on d.
    # Kept a, b, c, e: human ranks 1 2 3 4, judge ranks 1 3 2 4 -> Σd² = 2 -> ρ = 1 - 6·2/(4·15) = 0.8.
    coherence = graded_result(examples, "coherence", {"a": 0.1, "b": 0.3, "c": 0.2, "d": None, "e": 0.9},
                              dataset="small", judge="j")
    assert (coherence.value, coherence.n, coherence.unparsed, coherence.judged) == (pytest.approx(0.8), 4, 1, 5)
    assert coherence.category == GRADED and coherence.statistic == "spearman"
    # fluency: human means 2 4 5 1 3 (ranks 2 4 5 1 3), judge ranks 4 3 5 1 2 -> Σd² = 6 -> ρ = 1 - 36/120 = 0.7.
    fluency = graded_result(examples, "fluency", {"a": 0.5, "b": 0.4, "c": 0.9, "d": 0.1, "e": 0.2},
                            dataset="small", judge="j")
    assert (fluency.value, fluency.n, fluency.unparsed) == (pytest.approx(0.7), 5, 0)
    # The same ρ from scipy, independently of dialjudge's pairing.
    assert fluency.value == pytest.approx(stats.spearmanr([2, 4, 5, 1, 3], [0.5, 0.4, 0.9, 0.1, 0.2]).statistic)

    # safety: majorities Y Y N N Y N; the judge says Y N N N Y and f is unparsed (None), never a random label.
    # Kept 5: p_o = 4/5; p_e = (3/5)(2/5) + (2/5)(3/5) = 0.48 -> κ = 0.32 / 0.52.
    judge_labels = {"a": "Yes", "b": "No", "c": "No", "d": "No", "e": "Yes", "f": None}
    safety = categorical_result(compare_labels(examples, "safety", judge_labels, evaluator="j", n_boot=0),
                                dataset="small")
    assert (safety.value, safety.n, safety.unparsed, safety.judged) == (pytest.approx(0.32 / 0.52), 5, 1, 6)
    assert safety.category == CATEGORICAL and safety.statistic == "kappa" and safety.metric == "safety"

    by_category = {s.category: s for s in summarise([coherence, safety, fluency])}
    graded = by_category[GRADED]
    assert graded.mean == pytest.approx(0.75)
    assert graded.sd == pytest.approx(math.sqrt(2 * 0.05 ** 2 / 1))  # sample sd (n - 1) of 0.8 and 0.7
    assert (graded.metrics, graded.undefined, graded.unparsed) == (2, 0, 1)
    categorical = by_category[CATEGORICAL]
    assert categorical.mean == pytest.approx(0.32 / 0.52) and categorical.sd is None  # one metric: no sd
    assert (categorical.metrics, categorical.unparsed) == (1, 1)


def test_an_undefined_metric_is_counted_not_averaged(tmp_path: Path) -> None:
    examples = read_judge_bench(small_set(tmp_path)).examples
    constant = graded_result(examples, "coherence", dict.fromkeys("abcde", 0.5), dataset="small", judge="j")
    assert constant.value is None and "constant" in (constant.reason or "")
    all_unparsed = graded_result(examples, "fluency", dict.fromkeys("abcde"), dataset="small", judge="j")
    assert all_unparsed.value is None and all_unparsed.unparsed == 5
    (summary,) = summarise([constant, all_unparsed])
    assert summary.mean is None and summary.sd is None and (summary.metrics, summary.undefined) == (0, 2)
