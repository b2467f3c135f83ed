"""`dialjudge runs compare` on runs that judged pairs: pre-paired runs (judged here with the fake judge,
and imported verdicts) and within-context pairwise runs print a verdict from the paired test on the pairs
both judged, the rule named, instead of a traceback or empty rows."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges
from scipy.stats import binomtest

from dialjudge.core.api import (
    CompareRequest,
    Session,
    compare,
)
from dialjudge.core.api.pair_runs import PAIR_JOIN

DATA = Path(__file__).parent.parent / "data"
PAIRS = str(DATA / "judge_bench_pairs.json")


@pytest.fixture(autouse=True)
def fake_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa")


def cells(out: str, who: str) -> list[str]:
    line = next(line for line in out.splitlines() if line.strip("│ ").startswith(who))
    return [cell.strip() for cell in line.strip().strip("│").split("│")]


def test_an_imported_and_a_native_pre_paired_run(capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    assert run(capsys, "runs", "import", str(DATA / "imports" / "pair_verdicts.csv"), "--dataset", PAIRS)[0] == 0
    assert run(capsys, "judge", "--dataset", PAIRS, "--template", "pairwise-plain", "--judge", "fa",
               "--bootstrap", "0")[0] == 0
    code, out, err = run(capsys, "runs", "compare", "1", "2")
    assert code == 0, err
    assert "Traceback" not in out + err
    # alpha is right on all 6 pairs (hand-counted in tests/imports/test_import_verdicts.py).
    alpha = cells(out, "run 1 alpha → run 2 fa")
    assert alpha[1] == "6" and alpha[2] == "100.0%"
    # One pair per prompt: the swap test is McNemar's exact test on the pairs only one side gets right.
    test = next(t for t in compare(Session(), CompareRequest(1, 2)).pair_verdicts if "alpha" in t.name_y)
    only_alpha, only_fa = test.agreement.only_y, test.agreement.only_x
    assert test.p_value == pytest.approx(binomtest(only_alpha, only_alpha + only_fa, 0.5).pvalue)
    assert alpha[6] == f"{test.p_value:.3g}"
    text = " ".join(out.split())
    assert "conservative rule" in text and "swapped within each prompt" in text
    assert ("agrees better" in text) or ("no difference shown" in text)


def test_a_pointwise_run_on_pairs_against_a_pairwise_one(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "judge", "--dataset", PAIRS, "--template", "pairwise-plain", "--judge", "fa",
               "--bootstrap", "0")[0] == 0
    assert run(capsys, "judge", "--dataset", PAIRS, "--template", "likert-1to5", "--aspect", "overall", "--judge",
               "fa", "--bootstrap", "0")[0] == 0
    code, out, err = run(capsys, "runs", "compare", "1", "2")
    assert code == 0, err
    assert "6 pairs both judged" in out


def test_two_within_context_pairwise_runs(capsys: pytest.CaptureFixture[str]) -> None:
    common = ("--judge", "fa", "--mode", "pairwise", "--aspect", "coherence", "--pairs", "2", "--no-metrics",
              "--bootstrap", "0")
    assert run(capsys, "judge", "--template", "pairwise-plain", *common)[0] == 0
    assert run(capsys, "judge", "--template", "pairwise-aspect", *common)[0] == 0
    code, out, err = run(capsys, "runs", "compare", "1", "2")
    assert code == 0, err
    comparison = compare(Session(), CompareRequest(1, 2))
    (test,) = comparison.pair_verdicts
    # 12 contexts x 2 pairs, every pair with a human verdict from the mean ratings (no n 0/0).
    assert test.agreement.n == 24 and test.units == 12 and test.exact
    assert " ".join(test.verdict().split()) in " ".join(out.split())
    # The p-value by brute force: every sign flip of the per-context differences in pairs called right.
    pairs_a = {p.pair: p for p in _pairs(1)}
    pairs_b = {p.pair: p for p in _pairs(2)}
    per_context: dict[object, int] = {}
    for pair_id, p in pairs_a.items():
        q = pairs_b[pair_id]
        per_context[p.prompt] = per_context.get(p.prompt, 0) + int(q.verdict == p.human) - int(p.verdict == p.human)
    values = list(per_context.values())
    observed = abs(sum(values))
    flips = [abs(sum(s * v for s, v in zip(signs, values))) for signs in itertools.product((1, -1), repeat=12)]
    assert test.p_value == pytest.approx(sum(f >= observed for f in flips) / len(flips))


def _pairs(run_id: int) -> list:
    """Run ``run_id``'s pairs as the comparison reads them (the judge fa, the sample's coherence)."""
    from dialjudge.core.api.pair_runs import judged_pairs
    from dialjudge.core.dataset_catalogue import open_dataset
    from dialjudge.core.judges.store.run_store import RunStore

    with RunStore() as store:
        record = store.runs.get_run(run_id)
        return judged_pairs(record.run_config, open_dataset("sample"), store.judgments.load_judgments(run_id),
                            "coherence")["fa"]


def test_a_pointwise_run_against_a_within_context_pairwise_run(capsys: pytest.CaptureFixture[str]) -> None:
    common = ("--judge", "fa", "--aspect", "coherence", "--no-metrics", "--bootstrap", "0")
    assert run(capsys, "judge", "--template", "adv-0to1", *common)[0] == 0
    assert run(capsys, "judge", "--template", "pairwise-plain", "--mode", "pairwise", "--pairs", "2", *common)[0] == 0
    code, out, err = run(capsys, "runs", "compare", "1", "2")
    assert code == 0, err
    (test,) = compare(Session(), CompareRequest(1, 2)).pair_verdicts
    assert test.agreement.n == 24
    # The pointwise side's agreement, computed here: the higher score against the higher mean rating.
    from dialjudge.core.dataset_catalogue import open_dataset
    from dialjudge.core.judges.store.run_store import RunStore
    from dialjudge.core.model import Aggregation
    from dialjudge.core.run_columns import run_scores
    from dialjudge.core.stats.human import human_labels

    with RunStore() as store:
        scores = run_scores(store, 1, with_pool=False)[0]["fa"]
    labels = human_labels(open_dataset("sample").examples, "coherence", Aggregation.MEAN).values
    right = 0
    for p in _pairs(2):
        a, b = p.pair.split(PAIR_JOIN)
        judge = (scores[a] > scores[b]) - (scores[a] < scores[b])
        human = (labels[a] > labels[b]) - (labels[a] < labels[b])
        right += judge == human
    assert test.agreement.agree_y == right  # run 1 is the A side (y)
    assert "run 1 → run 2" in out
