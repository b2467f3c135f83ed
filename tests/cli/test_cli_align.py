"""`dialjudge align` end to end (issue 38): a simulated judge on USR Topical-Chat (the bundled sample where the
shared data is absent), 30 labels, the real command; a held-out verdict with a CI is printed, and no labelled
context is in the held-out split."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.model import Aggregation
from dialjudge.core.stats.human import human_labels
from shared_data import shared_data_dir


def _dataset() -> tuple[str, str]:
    """USR Topical-Chat when the shared data holds it, else the bundled sample (name, quality)."""
    if (shared_data_dir() / "usr" / "usr_topical_chat.json").is_file():
        return "usr-topicalchat", "Overall"
    return "sample", "overall"


def test_align_prints_a_heldout_verdict_with_a_ci_and_holds_out_no_labelled_context(
        capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name, quality = _dataset()
    config = tmp_path / "dialjudge.toml"
    config.write_text(f'[data]\ndirs = ["{shared_data_dir()}"]\n\n[judges.sim]\nbackend = "fake"\n'
                      f'options = {{ agreement = 0.4, correction_gain = 0.3, dataset = "{name}", quality = "{quality}" }}\n',
                      encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    code, _out, err = run(capsys, "judge", "--dataset", name, "--template", "likert-1to5", "--judge", "sim",
                          "--mode", "logprob", "--quality", quality, "--bootstrap", "0", "--no-metrics",
                          "--format", "json")
    assert code == 0, err
    dataset = open_dataset(name, remember=False)
    human = human_labels(dataset.examples, quality, Aggregation.MEAN).values
    contexts = sorted({ex.group_id for ex in dataset.examples})
    # 30 labels in a third of the contexts at most, so held-out contexts remain on the small sample too.
    chosen = set(random.Random(3).sample(contexts, max(2, len(contexts) // 3)))
    pool = [ex.id for ex in dataset.examples if ex.group_id in chosen]
    labelled = random.Random(4).sample(pool, min(30, len(pool)))
    labels = tmp_path / "labels.csv"
    labels.write_text("item_id,label\n" + "".join(f"{i},{round(human[i])}\n" for i in labelled), encoding="utf-8")

    code, out, err = run(capsys, "align", "1", "--labels", str(labels), "--bootstrap", "200")
    assert code == 0, err
    text = " ".join(out.split())
    # The paired verdict of the winner against the starting judge on held-out contexts, with its interval.
    assert re.search(r"Verdict: (better|worse|no difference shown)\. .*95% CI \[[-+]\d\.\d+, [-+]\d\.\d+\]", text)
    assert "Held-out spearman of the winner" in text and "overfitting gap" in text

    # The stored record: the corrections, the winner's template (with their digest), and the split.
    records = list((Path(os.environ["DIALJUDGE_DATA_DIR"]) / "alignments").glob("run1-*.json"))
    assert len(records) == 1
    report = json.loads(records[0].read_text(encoding="utf-8"))
    digest = report["corrections"]["digest"]
    assert f"corrections {digest}" in report["winner_template"]
    assert len(report["corrections"]["labels"]) == len(labelled)
    split = report["split"]
    group = {ex.id: ex.group_id for ex in dataset.examples}
    labelled_contexts = {group[i] for i in labelled}
    assert labelled_contexts == set(split["tuning"])
    assert not labelled_contexts & set(split["heldout"])
    assert set(split["heldout"]) == set(contexts) - labelled_contexts
    winner, start = (next(r for r in report["heldout"] if r[key]) for key in ("winner", "start"))
    assert winner["variant"] != start["variant"] == "start"
    for row in (winner, start):
        assert row["ci_low"] <= row["held_out"] <= row["ci_high"]
        assert row["gap"] == pytest.approx(row["search_split"] - row["held_out"])
