"""`dialjudge check`: a CI gate over runs made through the judge use case on the bundled sets.

Two simulated truths: a fake judge scores from a hash (it agrees with the humans at ρ ≈ 0), a simulated
judge imitates them at ρ ≈ 0.8. A rule the truth clears holds, one it misses fails, and the figure in the
line is the agreement `dialjudge judge` prints (checked against scipy on the same items).
"""

from __future__ import annotations

import json
import re
import sqlite3
import statistics
from pathlib import Path

import pytest
from cli_helpers import run
from lxml import etree
from scipy.stats import spearmanr

from dialjudge.core.api import CompareRequest, Session, compare, open_dataset, run_judgments

SCHEMA = Path(__file__).parents[1] / "data" / "junit.xsd"


@pytest.fixture(autouse=True)
def judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "dialjudge.toml"
    config.write_text(
        '[judges.fa]\nbackend = "fake"\nmodel = "fake-a"\n'
        '[judges.sim]\nbackend = "fake"\nmodel = "sim"\n'
        'options = { agreement = 0.8, dataset = "sample", quality = "overall" }\n', encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))


def judge(capsys: pytest.CaptureFixture[str], *options: str) -> int:
    """A run of the judge use case (``dialjudge judge``) on the sample's overall quality; its run id."""
    code, _, err = run(capsys, "judge", "--dataset", "sample", "--template", "likert-1to5", "--aspect", "overall",
                       "--no-metrics", *options)
    assert code == 0, err
    return int(re.search(r"Run (\d+) finished", err)[1])  # type: ignore[index]


def agreement_row(capsys: pytest.CaptureFixture[str], run_id: int, judge_name: str) -> dict:
    """The judge's row of the agreement table `dialjudge judge` writes for the run (shown again: the CLI's numbers)."""
    code, out, err = run(capsys, "judge", "--dataset", "sample", "--template", "likert-1to5", "--aspect", "overall",
                         "--no-metrics", "--judge", judge_name, "--format", "json")
    assert code == 0, err
    assert f"run {run_id} had finished with exactly these settings" in err
    return next(r for r in json.loads(out)["results"] if r["evaluator"] == judge_name)


def test_a_rule_the_judge_misses_fails_in_one_line_and_one_it_clears_holds(
        capsys: pytest.CaptureFixture[str]) -> None:
    fake = judge(capsys, "--judge", "fa")
    code, out, err = run(capsys, "check", str(fake), "--quality", "Overall", "--min", "spearman=0.3")
    assert code == 1, err
    (line,) = [x for x in out.splitlines() if x.startswith("FAIL")]
    row = agreement_row(capsys, fake, "fa")
    assert line == (f"FAIL spearman ≥ 0.3 (lower CI bound) — run {fake} fa · overall: ρ = {row['spearman']:.3f} "
                    f"[{_short(row['spearman_lo'])},{_short(row['spearman_hi'])}], n = 60; lower bound "
                    f"{row['spearman_lo']:.3f} < 0.3")
    assert "gate failed: 0 of 1 checks hold" in out

    code, out, err = run(capsys, "check", str(fake), "--min", f"spearman={row['spearman_lo'] - 0.01:.4f}")
    assert code == 0, out + err
    assert out.startswith("ok   spearman ≥") and "gate passed: 1 of 1 checks hold" in out


def test_the_figure_is_the_judges_spearman_with_the_human_mean(capsys: pytest.CaptureFixture[str]) -> None:
    """Independently of dialjudge's statistics: scipy's ρ of the stored scores with the annotators' mean."""
    sim = judge(capsys, "--judge", "sim")
    code, out, _ = run(capsys, "check", str(sim), "--min", "spearman=0.3")
    assert code == 0, out  # the simulated truth is ρ ≈ 0.8: far above 0.3, with 12 contexts
    figure = float(re.search(r"ρ = (-?[\d.]+)", out)[1])  # type: ignore[index]
    dataset = open_dataset("sample")
    scores = run_judgments(Session(), sim)["sim"]
    items = [ex for ex in dataset if ex.id in scores]
    human = [statistics.fmean(float(v) for v in ex.ratings["overall"].present) for ex in items]
    rho = spearmanr([scores[ex.id].normalized for ex in items], human).statistic
    assert figure == pytest.approx(rho, abs=5e-4)


def test_the_lower_bound_decides_not_the_point_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    sim = judge(capsys, "--judge", "sim")
    row = agreement_row(capsys, sim, "sim")
    between = (row["spearman_lo"] + row["spearman"]) / 2  # above the bound, below the estimate
    code, out, _ = run(capsys, "check", str(sim), "--min", f"spearman={between:.4f}")
    assert code == 1 and "lower bound" in out and "<" in out


def test_every_judge_must_pass_unless_one_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    both = judge(capsys, "--judge", "fa", "--judge", "sim")
    code, out, _ = run(capsys, "check", str(both), "--min", "spearman=0.3")
    assert code == 1
    assert [x.split(" — ")[1].split(":")[0] for x in out.splitlines() if x.startswith(("ok", "FAIL"))] == [
        f"run {both} fa · overall", f"run {both} sim · overall"]
    assert "every judge of each run must pass each rule (--judge NAME checks one)" in out
    code, out, _ = run(capsys, "check", str(both), "--min", "spearman=0.3", "--judge", "sim")
    assert code == 0 and "fa ·" not in out
    code, _, err = run(capsys, "check", str(both), "--min", "spearman=0.3", "--judge", "nobody")
    assert code == 2 and f"run {both} has no judge 'nobody' (its judges: fa, sim)" in err


def test_the_gate_is_reproducible_with_its_seed(capsys: pytest.CaptureFixture[str]) -> None:
    sim = judge(capsys, "--judge", "sim")
    lines = {run(capsys, "check", str(sim), "--min", "kendall=0.2", "--seed", "7")[1] for _ in range(2)}
    assert len(lines) == 1
    other = run(capsys, "check", str(sim), "--min", "kendall=0.2", "--seed", "8")[1]
    assert other != next(iter(lines))  # the seed is the bootstrap's: another one moves the bounds


def test_kappa_and_agreement_on_a_label_quality_are_the_label_tables(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--dataset", "incar-kpi", "--judge", "fa", "--template", "inca-kpi",
                         "--kpi", "follow-up", "--no-metrics", "--format", "json")
    assert code == 0, err
    run_id = int(re.search(r"Run (\d+) finished", err)[1])  # type: ignore[index]
    label = next(r for r in json.loads(out)["results"] if r["evaluator"] == "fa" and r.get("labels"))
    code, out, _ = run(capsys, "check", str(run_id), "--min", "kappa=0.4", "--min", "agreement=10%")
    kappa_line, agreement_line = [x for x in out.splitlines() if x.startswith(("ok", "FAIL"))]
    assert code == 1 and kappa_line.startswith("FAIL kappa ≥ 0.4")
    assert f"κ = {label['kappa']:.3f} [{_short(label['kappa_lo'])},{_short(label['kappa_hi'])}]" in kappa_line
    assert f"agreement = {100 * label['percent_agreement']:.1f}%" in agreement_line
    assert agreement_line.startswith("ok" if label["percent_agreement_lo"] >= 0.1 else "FAIL")
    code, _, err = run(capsys, "check", str(run_id), "--min", "spearman=0.1", "--quality", "follow-up")
    assert code in (0, 1), err  # a two-label quality has correlations too
    fake = judge(capsys, "--judge", "fa")
    code, _, err = run(capsys, "check", str(fake), "--min", "kappa=0.4")
    assert code == 2 and "overall is numeric: use spearman, pearson or kendall" in err


def test_max_failures_counts_judgments_without_a_score(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "garbage.toml"
    config.write_text('[judges.g]\nbackend = "fake"\nmodel = "g"\noptions = { garbage_every = 10 }\n',
                      encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    run_id = judge(capsys, "--judge", "g", "--mode", "generate")
    judged = run_judgments(Session(), run_id)["g"]
    failed = sum(j.failed for j in judged.values())
    assert 0 < failed < len(judged)
    share = failed / len(judged)
    code, out, _ = run(capsys, "check", str(run_id), "--max-failures", f"{100 * share - 0.1:.2f}%")
    assert code == 1 and f"{failed} of {len(judged)} judgments without a score ({100 * share:.1f}%)" in out
    code, out, _ = run(capsys, "check", str(run_id), "--max-failures", f"{share:.4f}")
    assert code == 0, out


def test_no_worse_than_is_the_paired_test_of_runs_compare(capsys: pytest.CaptureFixture[str]) -> None:
    good = judge(capsys, "--judge", "sim")
    bad = judge(capsys, "--judge", "fa")
    code, out, _ = run(capsys, "check", str(bad), "--no-worse-than", str(good))
    assert code == 1, out
    assert f"significantly worse than run {good}" in out and "Δρ = -" in out
    # The comparison `runs compare` makes (its use case, with the gate's resamples and seed): the same Δ, CI and p.
    (paired,) = compare(Session(), CompareRequest(good, bad, qualities=("overall",), subsets=("all",),
                                                  paired_boot=1000, seed=0)).paired
    delta = paired.deltas["spearman"]
    assert (f"Δρ = {delta.delta:+.3f} [{_short(delta.ci_low)},{_short(delta.ci_high)}], p = {delta.p_value:.3g} "
            in out) and paired.decided("spearman")
    code, out, _ = run(capsys, "check", str(good), "--no-worse-than", str(bad))
    assert code == 0 and "not shown worse: better than the baseline" in out


def test_junit_xml_is_valid_against_the_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    both = judge(capsys, "--judge", "fa", "--judge", "sim")
    report = tmp_path / "gate.xml"
    code, out, _ = run(capsys, "check", str(both), "--min", "spearman=0.3", "--max-failures", "2%",
                       "--junit", str(report))
    assert code == 1
    schema = etree.XMLSchema(etree.parse(str(SCHEMA)))
    document = etree.parse(str(report))
    assert schema.validate(document), schema.error_log
    (suite,) = document.getroot().findall("testsuite")
    cases = suite.findall("testcase")
    assert (suite.get("tests"), suite.get("failures")) == ("4", "1") and len(cases) == 4
    (failure,) = suite.iter("failure")
    assert failure.get("message") == next(x for x in out.splitlines() if x.startswith("FAIL"))
    # The schema can fail: a suite without its count of tests is not a JUnit report.
    del suite.attrib["tests"]
    assert not schema.validate(document)


def test_an_unfinished_run_is_refused_with_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    run_id = judge(capsys, "--judge", "fa")
    for status in ("interrupted", "running", "awaiting"):
        with sqlite3.connect(store_path()) as db:  # what a killed process or a batch leaves
            db.execute("UPDATE runs SET status = ? WHERE id = ?", (status, run_id))
        code, out, err = run(capsys, "check", str(run_id), "--min", "spearman=0.3")
        assert code == 2 and out == "", out
        assert f"run {run_id} is {'interrupted' if status == 'running' else status}, not finished" in err


def test_bad_input_exits_2_with_the_rule_named(capsys: pytest.CaptureFixture[str]) -> None:
    run_id = judge(capsys, "--judge", "fa")
    for argv, message in ((["--min", "spearmann=0.3"], "--min 'spearmann=0.3': 'spearmann' is not one of"),
                          ([], "the gate has no rule"),
                          (["--min", "spearman=0.1", "--quality", "charm"], "has no quality 'charm'"),
                          (["--max-failures", "3"], "--max-failures '3': a share is at most 1")):
        code, _, err = run(capsys, "check", str(run_id), *argv)
        assert code == 2 and message in err and "Traceback" not in err, err
    code, _, err = run(capsys, "check", "999", "--min", "spearman=0.1")
    assert code == 2 and "no run with id 999" in err


def store_path() -> Path:
    store = Session().open_store()
    store.close()
    return store.path


def _short(x: float) -> str:
    """core.format's CI ends: .41, -.08."""
    text = f"{x:.2f}"
    return text.replace("0.", ".", 1) if abs(x) < 1 else text
