"""`dialjudge runs protocol judge-bench`: runs of a JUDGE-BENCH file's metrics as JUDGE-BENCH's table,
with a fake judge; every number recomputed from the exported judgments."""

from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges
from scipy import stats

from dialjudge.core.judges.store.run_store import RunStore
from judge_bench_files import PROTOCOL_VOTES, small_protocol_set


@pytest.fixture(autouse=True)
def fake_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa")


def judge_every_metric(capsys: pytest.CaptureFixture[str], path: Path) -> dict[str, dict]:
    """Runs 1 and 2 (the graded metrics) and 3 (the categorical one); the safety run's own label report."""
    for quality in ("coherence", "fluency"):
        code, _, err = run(capsys, "judge", "--dataset", str(path), "--quality", quality, "--template", "likert-1to5",
                           "--aspect", "coherence", "--mode", "generate", "--judge", "fa", "--bootstrap", "0")
        assert code == 0, err
    code, out, err = run(capsys, "judge", "--dataset", str(path), "--quality", "safety", "--template", "label-choice",
                         "--mode", "generate", "--judge", "fa", "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    return json.loads(out)["results"][0]


def exported_scores(capsys: pytest.CaptureFixture[str], run_id: int) -> dict[str, float | None]:
    code, out, _ = run(capsys, "runs", "export", str(run_id), "--format", "jsonl")
    assert code == 0
    return {row["item_id"]: row["normalized"] for row in map(json.loads, out.splitlines())}


def test_the_table_matches_an_independent_computation_in_json_csv_and_markdown(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = small_protocol_set(tmp_path)
    safety = judge_every_metric(capsys, path)
    code, out, err = run(capsys, "runs", "protocol", "judge-bench", "1", "2", "3", "--format", "json")
    assert code == 0, err
    result = json.loads(out)
    assert any("never replaced by random labels" in note for note in result["meta"]["notes"])
    metrics = {r["metric"]: r for r in result["results"] if r["row"] == "metric"}
    expected_rho = {}
    for run_id, quality, votes in ((1, "coherence", 0), (2, "fluency", 1)):
        judged = exported_scores(capsys, run_id)
        items = [i for i, v in PROTOCOL_VOTES.items() if v[votes] is not None and judged.get(i) is not None]
        humans = [statistics.fmean(PROTOCOL_VOTES[i][votes]) for i in items]  # type: ignore[arg-type]
        expected_rho[quality] = stats.spearmanr([judged[i] for i in items], humans).statistic
        assert metrics[quality]["value"] == pytest.approx(expected_rho[quality])
        assert metrics[quality]["n"] == len(items) and metrics[quality]["statistic"] == "spearman"
        assert metrics[quality]["unparsed"] == sum(v is None for v in judged.values())
    # κ is the one the run's own label report gives (compare_labels, checked against a hand computation there).
    assert metrics["safety"]["value"] == pytest.approx(safety["kappa"])
    assert metrics["safety"]["n"] == safety["n"] and metrics["safety"]["unparsed"] == safety["failed"]
    summaries = {r["category"]: r for r in result["results"] if r["row"] == "dataset"}
    rhos = list(expected_rho.values())
    assert summaries["graded"]["mean"] == pytest.approx(statistics.fmean(rhos))
    assert summaries["graded"]["sd"] == pytest.approx(statistics.stdev(rhos))
    assert summaries["categorical"]["mean"] == pytest.approx(safety["kappa"]) and summaries["categorical"]["sd"] is None

    code, out, err = run(capsys, "runs", "protocol", "judge-bench", "1", "2", "3", "--format", "csv")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert len(rows) == 5 and float(rows[0]["mean"]) == pytest.approx(statistics.fmean(rhos))
    code, out, err = run(capsys, "runs", "protocol", "judge-bench", "1", "2", "3", "--format", "markdown")
    assert code == 0, err
    assert "| small | graded | fa | spearman |" in out and "never replaced by random labels" in out
    code, out, err = run(capsys, "runs", "protocol", "judge-bench", "1", "2", "3", "--format", "latex")
    assert code == 0, err
    assert r"\begin{tabular}" in out and "never replaced by random labels" in out
    code, out, err = run(capsys, "runs", "protocol", "judge-bench", "1", "2", "3")
    assert code == 0, err
    assert "graded: ρ mean ± sd" in out and "unparsed" in out


def test_two_runs_of_one_metric_are_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = small_protocol_set(tmp_path)
    judge_every_metric(capsys, path)
    code, _, err = run(capsys, "runs", "protocol", "judge-bench", "1", "1")
    assert code != 0 and "one run per metric" in err


def test_judge_with_the_protocol_makes_one_run_per_metric_and_shows_the_same_table(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = small_protocol_set(tmp_path)
    code, out, err = run(capsys, "judge", "--dataset", str(path), "--protocol", "judge-bench", "--template",
                         "likert-1to5", "--aspect", "coherence", "--mode", "generate", "--judge", "fa", "--format", "json")
    assert code == 0, err
    made = json.loads(out)["results"]
    by_metric = {r["metric"]: r for r in made if r["row"] == "metric"}
    assert set(by_metric) == {"coherence", "fluency", "safety"}
    assert {r["category"] for r in made if r["row"] == "dataset"} == {"graded", "categorical"}
    # Each metric has its own run, the categorical one judged with label-choice.
    runs = sorted(r["run"] for r in by_metric.values())
    assert runs == [1, 2, 3]
    code, out, _ = run(capsys, "runs", "show", str(by_metric["safety"]["run"]))
    assert code == 0 and "label-choice" in out
    # The same table from the stored runs.
    code, out, err = run(capsys, "runs", "protocol", "judge-bench", *map(str, runs), "--format", "json")
    assert code == 0, err
    assert {json.dumps(r, sort_keys=True) for r in json.loads(out)["results"]} == {
        json.dumps(r, sort_keys=True) for r in made}


def test_the_protocol_refuses_a_file_that_is_not_judge_bench(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "judge", "--dataset", str(Path(__file__).parents[1] / "data" / "ratings_standard.csv"),
                       "--protocol", "judge-bench", "--judge", "fa")
    assert code != 0 and "needs a JUDGE-BENCH file" in err


def test_unparsed_answers_are_counted_and_left_out_never_replaced(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa", preamble='[judges.flaky]\nbackend = "fake"\nmodel = "fake-flaky"\n'
                                                          'options = { garbage_every = 2 }\n')
    path = small_protocol_set(tmp_path)
    code, out, err = run(capsys, "judge", "--dataset", str(path), "--protocol", "judge-bench", "--quality", "coherence",
                         "--quality", "safety", "--template", "likert-1to5", "--mode", "generate", "--judge", "flaky",
                         "--format", "json")
    assert code == 0, err
    rows = json.loads(out)["results"]
    by_metric = {r["metric"]: r for r in rows if r["row"] == "metric"}
    for metric, rated in (("coherence", 5), ("safety", 6)):
        judged = exported_scores(capsys, by_metric[metric]["run"])
        unparsed = sum(v is None for v in judged.values())
        assert unparsed > 0  # every second request returned text no parser can read
        assert by_metric[metric]["unparsed"] == unparsed and by_metric[metric]["judged"] == rated
        assert by_metric[metric]["n"] <= rated - unparsed  # left out, not replaced by a label
    summaries = {r["category"]: r for r in rows if r["row"] == "dataset"}
    assert summaries["graded"]["unparsed"] == by_metric["coherence"]["unparsed"]


def test_a_categorical_metric_judged_with_a_score_template_says_why_in_its_row(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = small_protocol_set(tmp_path)
    code, _, err = run(capsys, "judge", "--dataset", str(path), "--quality", "safety", "--template", "likert-1to5",
                       "--aspect", "coherence", "--judge", "fa", "--bootstrap", "0", "--format", "json")
    assert code == 0, err
    code, out, err = run(capsys, "runs", "protocol", "judge-bench", "1", "--format", "json")
    assert code == 0, err
    (summary, metric) = json.loads(out)["results"]
    assert metric["value"] is None and "label-choice" in metric["reason"] and metric["judged"] == 6
    assert summary["mean"] is None and summary["undefined"] == 1


def test_the_protocol_scores_as_judge_bench_did_unless_told_and_names_the_mode(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Issue 33: --protocol judge-bench scored with probability-weighted means by default, without saying so."""
    path = small_protocol_set(tmp_path)
    code, out, err = run(capsys, "judge", "--dataset", str(path), "--protocol", "judge-bench", "--template",
                         "likert-1to5", "--aspect", "coherence", "--judge", "fa", "--format", "json")
    assert code == 0, err
    document = json.loads(out)
    runs = sorted({r["run"] for r in document["results"] if r["row"] == "metric"})
    with RunStore() as store:
        assert {store.runs.get_run(r).run_config.mode.value for r in runs} == {"generate"}
    assert "scoring: generate (the answer parsed from the generated text), as JUDGE-BENCH's protocol scores" in \
        document["meta"]["notes"]
