"""`dialjudge metrics` shows the "response length" baseline row and each metric's length bias,
checked against scipy on the token counts."""

from __future__ import annotations

import csv
import io

import pytest
from cli_helpers import run
from scipy import stats

from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.metrics import metric_info
from dialjudge.core.model import Aggregation
from dialjudge.core.stats.baselines import partial_correlation, token_count

SAMPLE = ("--dataset", "sample", "--quality", "overall", "--metrics", "bleu1", "--bootstrap", "0")


def test_the_length_row_is_spearman_of_token_counts_with_the_humans(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "metrics", *SAMPLE, "--format", "csv")
    assert code == 0, err
    rows = [r for r in csv.DictReader(io.StringIO(out)) if r["subset"] == "all"]
    assert [r["evaluator"] for r in rows] == ["BLEU-1", "response length", "human ceiling"]
    dataset = open_dataset("sample", remember=False)
    lengths = [token_count(ex.candidate) for ex in dataset]
    human = [ex.human("overall", Aggregation.MEAN) for ex in dataset]
    length_row = rows[1]
    assert int(length_row["n"]) == len(dataset) == 60  # every candidate has a length, references too
    assert float(length_row["spearman"]) == pytest.approx(stats.spearmanr(lengths, human).statistic)
    assert float(length_row["pearson"]) == pytest.approx(stats.pearsonr(lengths, human).statistic)


def test_the_terminal_table_adds_each_metrics_length_bias(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "metrics", *SAMPLE)
    assert code == 0, err
    assert "response length" in out and "Length bias — sample (Spearman ρ)" in out
    line = next(line for line in out.splitlines() if line.startswith("│BLEU-1") and "overall" in line)
    cells = [c.strip() for c in line.split("│")[1:-1]]

    # The same numbers from scipy: BLEU-1 scores the 48 items that have a reference.
    from dialjudge.core.metrics import score_examples

    dataset = open_dataset("sample", remember=False)
    scores = score_examples(dataset.examples, ["bleu1"])
    bleu = scores.values["bleu1"]
    items = [ex for ex in dataset if bleu.get(ex.id) is not None]
    x = [bleu[ex.id] for ex in items]
    y = [ex.human("overall", Aggregation.MEAN) for ex in items]
    z = [token_count(ex.candidate) for ex in items]
    rho_xz, rho_yz, rho_xy = (stats.spearmanr(a, b).statistic for a, b in ((x, z), (y, z), (x, y)))
    assert cells[0] == metric_info("bleu1").label and cells[2] == str(len(items)) == "48"
    assert cells[3:7] == [f"{v:.3f}" for v in (rho_xz, rho_yz, rho_xy, partial_correlation(rho_xy, rho_xz, rho_yz))]
