"""`dialjudge judge` and `datasets stats` on JUDGE-BENCH label qualities (issue 14), with a fake judge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.loaders import read_judge_bench
from dialjudge.core.stats.label_agreement import compare_labels
from judge_bench_files import SAFETY, labelled, safety_set, write_set


@pytest.fixture(autouse=True)
def fake_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa")



def exported(capsys: pytest.CaptureFixture[str], run_id: str = "1") -> list[dict]:
    code, out, _ = run(capsys, "runs", "export", run_id, "--format", "jsonl")
    assert code == 0
    return [json.loads(line) for line in out.splitlines()]


@pytest.mark.parametrize("mode", ["yesno", "generate"])
def test_yes_no_judge_on_a_yes_no_set_is_compared_in_every_format(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, mode: str) -> None:
    path = safety_set(tmp_path)
    common = ("judge", "--dataset", str(path), "--template", "label-yesno", "--mode", mode, "--judge", "fa",
              "--bootstrap", "50")
    code, out, err = run(capsys, *common, "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    judge, ceiling = result["results"]
    # The same numbers, recomputed from the stored judgments with core's comparison.
    judgments = {j["item_id"]: j for j in exported(capsys)}
    labels = {i: ("Yes" if j["normalized"] >= 0.5 else "No") for i, j in judgments.items()}
    probs = {i: j["normalized"] for i, j in judgments.items()} if mode == "yesno" else None
    expected = compare_labels(read_judge_bench(path).examples, "safety", labels, probabilities=probs,
                              positive="Yes", n_boot=50)
    assert judge["n"] == expected.n == 5 and judge["tie_excluded"] == 1 and judge["ties"] == 1
    assert judge["percent_agreement"] == pytest.approx(expected.percent_agreement.value)
    assert judge["kappa"] == pytest.approx(expected.kappa.value, nan_ok=True)
    assert judge["confusion"] == [list(row) for row in expected.confusion]
    assert (judge["auc"] is None) == (mode == "generate")
    assert ceiling["kind"] == "ceiling" and ceiling["annotators"] == "3"
    # The terminal table: same run (resumed), exit 0, every statistic named.
    code, out, err = run(capsys, *common)
    assert code == 0, err
    assert "% agreement" in out and "Cohen's κ" in out and "ROC-AUC" in out and "Confusion matrix" in out
    assert "human majority ties among the judged items: 1" in out
    for fmt in ("csv", "markdown", "latex"):
        code, out, err = run(capsys, *common, "--format", fmt)
        assert code == 0 and out.strip(), (fmt, err)


def test_a_template_without_labels_says_why_and_still_exits_0(capsys: pytest.CaptureFixture[str],
                                                             tmp_path: Path) -> None:
    path = safety_set(tmp_path)
    code, out, err = run(capsys, "judge", "--dataset", str(path), "--template", "likert-1to5", "--aspect",
                         "coherence", "--judge", "fa", "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    assert "label-choice" in json.loads(out)["meta"]["reason"]
    assert "No comparison with the human labels" in err
    assert len(exported(capsys)) == 6  # the judgments are stored all the same


def test_label_choice_on_three_labels_and_the_limit_counts_only_judged_items(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    annotations = [{"metric": "severity", "category": "categorical", "labels_list": ["none", "mild", "severe"]}]
    instances = [labelled(f"m{k}", f"A: q{k}", f"r{k}", "severity", votes)
                 for k, votes in enumerate([["none", "none"], ["mild", "severe", "severe"], ["none"], ["mild"] * 3,
                                            ["severe"], ["none", "mild"]])]
    path = write_set(tmp_path, "severity", annotations, instances)
    code, out, err = run(capsys, "judge", "--dataset", str(path), "--template", "label-choice", "--mode", "logprob",
                         "--judge", "fa", "--limit", "4", "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    judge = json.loads(out)["results"][0]
    assert judge["n"] + judge["excluded"] == 4  # not 6: the two items never requested are not "excluded"
    assert judge["labels"] == ["none", "mild", "severe"] and len(judge["confusion"]) == 3
    assert judge["auc"] is None


def test_yes_label_names_the_label_and_is_recorded(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    annotations = [{"metric": "verdict", "category": "categorical", "labels_list": ["unsafe", "safe"]}]
    instances = [labelled(f"v{k}", f"A: q{k}", f"r{k}", "verdict", votes)
                 for k, votes in enumerate([["safe"], ["unsafe"], ["safe", "safe"], ["unsafe", "safe", "unsafe"]])]
    path = write_set(tmp_path, "verdict", annotations, instances)
    base = ("judge", "--dataset", str(path), "--template", "label-yesno", "--mode", "yesno", "--judge", "fa",
            "--bootstrap", "0")
    code, out, err = run(capsys, *base)
    assert code == 0 and "--yes-label" in out  # the comparison says what is missing
    code, out, err = run(capsys, *base, "--yes-label", "maybe")
    assert code == 2 and "'maybe' is not a label of 'verdict'" in err
    code, out, err = run(capsys, *base, "--yes-label", "safe", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["results"][0]["mapping"] == "judge answer yes = 'safe', no = 'unsafe'"
    from dialjudge.core.judges.store.run_store import RunStore

    with RunStore() as store:
        latest = max(store.runs.list_runs(), key=lambda r: r.id)
    assert latest.config["yes_label"] == "safe"


def test_pointwise_templates_judge_each_reply_of_a_pairwise_set(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    annotations = [{"metric": "preference", "category": "categorical", "labels_list": ["A", "B"]}]
    instances = [{"id": "p1", "instance": {"input": "q", "output_a": "a", "output_b": "b"},
                  "annotations": {"preference": {"individual_human_scores": ["A", "B", "A"]}}}]
    path = write_set(tmp_path, "pairs", annotations, instances)
    code, out, err = run(capsys, "judge", "--dataset", str(path), "--template", "label-yesno", "--mode", "yesno",
                         "--judge", "fa")
    assert code == 0, err
    assert "each reply rated alone (pointwise)" in out and "│humans (preference)" in out


def test_datasets_stats_prints_label_statistics_and_aggregate_only(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    code, out, err = run(capsys, "datasets", "stats", str(safety_set(tmp_path)))
    assert code == 0, err
    row = next(line for line in out.splitlines() if line.startswith("│safety"))
    cells = [c.strip() for c in row.split("│")[1:-1]]
    # Pairs (1,2) (1,3) (2,3) share 6, 5 and 5 items: fewer than 10, so no pairwise figure (the core tests
    # check its value with the minimum lowered); alpha is shown, the note says why the pairs are not.
    assert cells[3:6] == ["6", "3", "–"] and cells[-1] == "1" and cells[8] != "–"
    assert "pairwise κ and % agreement: 3 annotator pairs sharing fewer than 10 items" in " ".join(out.split())
    instances = [{"id": f"t{k}", "instance": f"text {k}", "annotations": {"safety": {"majority_human": lab}}}
                 for k, lab in enumerate(["Yes", "No"])]
    code, out, _ = run(capsys, "datasets", "stats", str(write_set(tmp_path, "agg", SAFETY, instances)))
    assert "1 aggregate label, no individual raters" in out and "the human ceiling cannot be computed" in out


def test_a_binary_quality_file_holds_correlations_and_labels(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--dataset", "incar-kpi", "--template", "inca-kpi", "--kpi",
                         "harmful-input", "--judge", "fa", "--no-metrics", "--bootstrap", "20", "--format", "json")
    assert code == 0, err
    records = json.loads(out)["results"]
    assert {r["table"] for r in records} == {"correlation", "labels"}
    judge = next(r for r in records if r["table"] == "labels" and r["kind"] == "evaluator")
    labels = {j["item_id"]: float(round(j["normalized"])) for j in exported(capsys)}
    from dialjudge.core.dataset_catalogue import open_dataset

    items = [ex for ex in open_dataset("incar-kpi") if ex.id in labels]
    expected = compare_labels(items, "harmful-input", labels, n_boot=0)
    assert judge["n"] == expected.n == 15
    assert judge["kappa"] == pytest.approx(expected.kappa.value)
    assert judge["confusion"] == [list(row) for row in expected.confusion]
