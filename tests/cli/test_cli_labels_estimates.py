"""`dialjudge runs alt-test` and `runs estimate` on USR Topical-Chat, with a random and a simulated good judge."""

from __future__ import annotations

import dataclasses
import json
import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from cli_helpers import run

from dialjudge.core.api import (
    EngineOptions,
    RunRequest,
    open_dataset,
    plan_run,
)
from dialjudge.core.api import labels_estimates as le
from dialjudge.core.api.runs import (
    build_backends,
    execute_run,
)
from dialjudge.core.config import JudgeConfig, load_config
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.model import Aggregation
from dialjudge.core.stats.alt_test import alt_test
from shared_data import require_file, shared_data_dir


@pytest.fixture(autouse=True)
def usr_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    require_file(shared_data_dir(), "usr/usr_topical_chat.json")
    config = tmp_path / "dialjudge.toml"
    config.write_text(textwrap.dedent(f"""
        [data]
        dirs = ["{shared_data_dir()}"]

        [judges.fa]
        backend = "fake"
        model = "fake-a"
    """), encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    return config


def simulated_run(quality: str, noise: float, seed: int = 0) -> int:
    """A stored run whose judge knows the pooled human label up to Gaussian noise (share of the scale)."""
    config = load_config()
    dataset = open_dataset("usr-topicalchat", config)
    config = dataclasses.replace(config, judges={**config.judges, "sim": JudgeConfig("sim", "fake", model="sim")})
    plan = plan_run(RunRequest(template="likert-1to5", judges=("sim",), mode="logprob", quality=quality,
                               aspect="overall"), dataset, config)
    scale = dataset.qualities[quality]
    rng = np.random.default_rng(seed)
    noises = {ex.id: rng.normal(0, noise) for ex in dataset.examples}

    def score(item_id: str, prompt: str) -> float:
        unit = scale.normalize(float(dataset.get(item_id).human(quality, Aggregation.MEAN)))  # type: ignore[arg-type]
        return float(np.clip(1 + 4 * (unit + noises[item_id]), 1, 5))

    backends = build_backends(plan.config, make=lambda jc: FakeBackend(name=jc.name, score_fn=score))
    with RunStore() as store:
        return execute_run(plan.config, dataset, store, backends, options=EngineOptions(resume=False)).run_id


def random_run(capsys: pytest.CaptureFixture[str]) -> int:
    code, _, err = run(capsys, "judge", "--dataset", "usr-topicalchat", "--template", "likert-1to5", "--aspect",
                       "overall", "--quality", "Overall", "--judge", "fa", "--mode", "logprob", "--no-metrics",
                       "--bootstrap", "0")
    assert code == 0, err
    with RunStore() as store:
        return store.runs.list_runs()[0].id


def test_alt_test_of_a_random_and_a_good_judge(capsys: pytest.CaptureFixture[str]) -> None:
    bad = random_run(capsys)
    code, out, err = run(capsys, "runs", "alt-test", str(bad))
    assert code == 0, err
    text = " ".join(out.split())
    assert "Alternative annotator test" in text and "the judge FAILS" in text
    assert "human ceiling" in text and "ε = 0.1 (crowd annotators" in text

    good = simulated_run("Overall", noise=0.05)
    code, out, err = run(capsys, "runs", "alt-test", str(good), "--format", "json")
    assert code == 0, err
    payload = json.loads(out)
    (test,) = payload["meta"]["tests"]
    assert test["verdict"] == "passes" and test["winning_rate"] >= 0.5
    assert test["epsilon"] == 0.1 and test["fdr"] == "by" and test["measure"] == "neg_rmse"
    # USR Topical-Chat: five annotators, three per item.
    assert {r["annotator"] for r in payload["results"]} == {"sm", "me", "er", "fl", "yf"}

    code, out, _ = run(capsys, "runs", "alt-test", str(good), "--epsilon", "0.2", "--fdr", "bh")
    assert "ε = 0.2 (set by hand)" in " ".join(out.split()) and "Benjamini–Hochberg" in out


def _annotators_by_name(dataset: Any, quality: str) -> dict[str, dict[str, float]]:
    """The raw ratings, annotator -> item -> rating: what the alternative annotator test leaves out in turn."""
    humans: dict[str, dict[str, float]] = {}
    for ex in dataset.examples:
        rating = ex.ratings[quality]
        for name, value in zip(rating.annotators, rating.scores):
            if value is not None:
                humans.setdefault(name, {})[ex.id] = float(value)
    return humans


def test_alt_test_says_how_it_met_the_annotators_scale_and_rounds_on_request(
        capsys: pytest.CaptureFixture[str]) -> None:
    """USR's Overall is rated on whole points 1-5; a continuous judge cannot tie an annotator exactly."""
    good = simulated_run("Overall", noise=0.2, seed=3)
    code, out, err = run(capsys, "runs", "alt-test", str(good))
    assert code == 0, err
    text = " ".join(out.split())
    assert "the judge's score: as it is (continuous)" in text and "caution: the judge's score falls between" in text
    code, out, err = run(capsys, "runs", "alt-test", str(good), "--round-to-scale", "--format", "json")
    assert code == 0, err
    (test,) = json.loads(out)["meta"]["tests"]
    assert test["judge_values"] == "rounded" and test["caution"] is None
    # Independently: the same test on the judge's scores rounded half up to the points 1..5.
    config = load_config()
    dataset = open_dataset("usr-topicalchat", config)
    with RunStore() as store:
        (report,) = le.alt_test_for_run(store, good, round_to_scale=True)
        judgments = store.judgments.load_judgments(good)["sim"]
    judge = {i: float(min(5, max(1, np.floor(1 + 4 * j.normalized + 0.5)))) for i, j in judgments.items()
             if j.normalized is not None}
    humans = _annotators_by_name(dataset, "Overall")
    direct = alt_test(judge, humans, measure="neg_rmse", epsilon=0.1)
    assert [(t.annotator, t.p_value) for t in report.result.tested] == \
        [(t.annotator, pytest.approx(t.p_value)) for t in direct.tested]


def test_alt_test_glue_matches_the_statistic_on_the_raw_numbers() -> None:
    good = simulated_run("Overall", noise=0.2, seed=3)
    config = load_config()
    dataset = open_dataset("usr-topicalchat", config)
    with RunStore() as store:
        (report,) = le.alt_test_for_run(store, good)
        judgments = store.judgments.load_judgments(good)["sim"]
    # Independently: judge scores from 0-1 back to 1-5, annotators by name from the raw ratings.
    judge = {i: 1 + 4 * j.normalized for i, j in judgments.items() if j.normalized is not None}
    humans = _annotators_by_name(dataset, "Overall")
    direct = alt_test(judge, humans, measure="neg_rmse", epsilon=0.1)
    assert [(t.annotator, t.p_value) for t in report.result.tested] == \
        [(t.annotator, pytest.approx(t.p_value)) for t in direct.tested]


def test_estimate_with_50_drawn_labels(capsys: pytest.CaptureFixture[str]) -> None:
    good = simulated_run("Overall", noise=0.05)
    code, out, err = run(capsys, "runs", "estimate", str(good), "--labelled", "50", "--seed", "1")
    assert code == 0, err
    text = " ".join(out.split())
    assert "judge-assisted (PPI++)" in text and "labels only" in text
    assert "50 of 360 items drawn at random (seed 1)" in text and "reference (every label)" in text
    code, out, err = run(capsys, "runs", "estimate", str(good), "--labelled", "50", "--seed", "1", "--format", "json")
    records = {r["method"]: r for r in json.loads(out)["results"]}
    only, ppi = records["labels only"], records["PPI++"]
    assert ppi["width"] < 0.7 * only["width"]  # a good judge narrows the interval
    assert ppi["low"] <= ppi["reference"] <= ppi["high"]
    assert only["n_labelled"] == ppi["n_labelled"] == 50 and ppi["n_unlabelled"] == 310
    code, out, err = run(capsys, "runs", "estimate", str(good), "--labelled", "50", "--active", "--format", "json")
    assert code == 0, err
    active = {r["method"]: r for r in json.loads(out)["results"]}["active (IPW)"]
    assert active["n_labelled"] + active["n_unlabelled"] == 360
    assert active["low"] <= active["reference"] <= active["high"]
    code, _, err = run(capsys, "runs", "estimate", str(good), "--reviews", "--active")
    assert code != 0 and "give --labelled N" in err


def test_estimate_from_a_labels_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    good = simulated_run("Overall", noise=0.1)
    labels = tmp_path / "labels.csv"
    dataset = open_dataset("usr-topicalchat", load_config())
    ids = [ex.id for ex in dataset.examples][:8]
    rows = [("item_id", "label")] + [(i, str(2 + k % 3)) for k, i in enumerate(ids)]
    labels.write_text("\n".join(",".join(r) for r in rows), encoding="utf-8")
    code, out, err = run(capsys, "runs", "estimate", str(good), "--labels", str(labels), "--format", "json")
    assert code == 0, err
    records = {r["method"]: r for r in json.loads(out)["results"]}
    values = [2 + k % 3 for k in range(8)]
    assert records["labels only"]["estimate"] == pytest.approx(np.mean(values))
    assert records["labels only"]["n_labelled"] == 8
    assert records["labels only"]["reference"] is None


def test_pass_fail_quality_gets_rogan_gladen_and_a_subset_difference(capsys: pytest.CaptureFixture[str]) -> None:
    good = simulated_run("Uses Knowledge", noise=0.15)
    code, out, err = run(capsys, "runs", "estimate", str(good), "--quality", "Uses Knowledge", "--labelled", "100",
                         "--bootstrap", "500")
    assert code == 0, err
    text = " ".join(out.split())
    assert "Pass rate of Uses Knowledge" in text and "Rogan–Gladen" in text and "sensitivity" in text
    dataset = open_dataset("usr-topicalchat", load_config())
    systems = sorted({t.split(":", 1)[1] for ex in dataset.examples for t in ex.tags if t.startswith("system:")})
    if len(systems) >= 2:
        code, out, err = run(capsys, "runs", "estimate", str(good), "--quality", "Uses Knowledge", "--labelled",
                             "30", "--subset", f"system:{systems[0]}", "--versus-subset", f"system:{systems[1]}")
        assert code == 0, err
        assert "Difference" in out


def test_estimate_refuses_what_it_cannot_do(capsys: pytest.CaptureFixture[str]) -> None:
    good = simulated_run("Overall", noise=0.1)
    code, _, err = run(capsys, "runs", "estimate", str(good), "--labelled", "400")
    assert code != 0 and "--labelled must be between 2 and 358" in " ".join(err.split())
    code, _, err = run(capsys, "runs", "estimate", str(good), "--reviews")
    assert code != 0 and "no reviews with an own rating" in " ".join(err.split())


def test_reviews_are_labels(capsys: pytest.CaptureFixture[str]) -> None:
    good = simulated_run("Overall", noise=0.1)
    dataset = open_dataset("usr-topicalchat", load_config())
    with RunStore() as store:
        for k, ex in enumerate(dataset.examples[:12]):
            store.reviews.set_review(good, ex.id, "fine", own_rating=float(1 + k % 5))
    code, out, err = run(capsys, "runs", "estimate", str(good), "--reviews", "--format", "json")
    assert code == 0, err
    records = {r["method"]: r for r in json.loads(out)["results"]}
    assert records["labels only"]["estimate"] == pytest.approx(np.mean([1 + k % 5 for k in range(12)]))
    assert not math.isnan(records["PPI++"]["estimate"])


def test_label_next_then_reviews_then_the_active_estimate(capsys: pytest.CaptureFixture[str]) -> None:
    good = simulated_run("Overall", noise=0.1)
    code, out, err = run(capsys, "runs", "label-next", str(good), "--budget", "30", "--seed", "4", "--format", "json")
    assert code == 0, err
    proposed = json.loads(out)["results"]
    assert [r["order"] for r in proposed] == list(range(1, len(proposed) + 1))
    assert all(0.0 < r["probability"] <= 1.0 for r in proposed)
    probabilities = [r["probability"] for r in proposed]
    assert probabilities == sorted(probabilities, reverse=True)  # most uncertain first
    dataset = open_dataset("usr-topicalchat", load_config())
    truth = {ex.id: float(ex.human("Overall", Aggregation.MEAN)) for ex in dataset.examples}  # type: ignore[arg-type]
    with RunStore() as store:
        for r in proposed[:-1]:
            store.reviews.set_review(good, r["item_id"], "fine", own_rating=truth[r["item_id"]])
    args = ("runs", "estimate", str(good), "--reviews", "--active-budget", "30", "--seed", "4")
    code, out, err = run(capsys, *args)
    assert code == 0, err
    assert "1 of the" in " ".join(out.split()) and "the active estimate waits for them" in " ".join(out.split())
    with RunStore() as store:
        last = proposed[-1]["item_id"]
        store.reviews.set_review(good, last, "fine", own_rating=truth[last])
    code, out, err = run(capsys, *args, "--format", "json")
    assert code == 0, err
    records = {r["method"]: r for r in json.loads(out)["results"]}
    active = records["active (IPW)"]
    # Every item is in the estimate: the proposed ones with their labels, the others through the judge alone.
    assert active["n_labelled"] == len(proposed) and active["n_unlabelled"] == 360 - len(proposed)
    assert active["low"] <= np.mean(list(truth.values())) <= active["high"]
    notes = " ".join(json.loads(out)["meta"]["notes"])
    assert "not a uniform draw" in notes
