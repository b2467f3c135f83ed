"""`dialjudge metrics --profile nlg-eval` reproduces Yeh et al. 2021 ("A Comprehensive Assessment of
Dialog Evaluation Metrics"), turn level, Pearson/Spearman against the mean Overall rating, the
ground truth as the reference (300 Topical-Chat and 240 PersonaChat items)."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.metrics.families.meteor_jar import meteor_jar_unavailable
from shared_data import require_file

#: Yeh et al. 2021, Table (USR data, turn level): metric -> (Pearson, Spearman).
PUBLISHED = {
    "usr-topicalchat": {"BLEU-4": (0.216, 0.296), "METEOR": (0.336, 0.391), "ROUGE-L": (0.275, 0.287)},
    "usr-personachat": {"BLEU-4": (0.135, 0.090), "METEOR": (0.253, 0.271), "ROUGE-L": (0.066, 0.038)},
}
FILES = {"usr-topicalchat": "usr/usr_topical_chat.json", "usr-personachat": "usr/usr_persona_chat.json"}
N_ITEMS = {"usr-topicalchat": 300, "usr-personachat": 240}
ROWS = {"BLEU-4": "BLEU-4 (nlg-eval)", "METEOR": "METEOR 1.5 (nlg-eval)", "ROUGE-L": "ROUGE-L (nlg-eval)"}


@pytest.mark.parametrize("dataset", sorted(PUBLISHED))
def test_nlg_eval_profile_reproduces_yeh_et_al(capsys: pytest.CaptureFixture[str], shared_data: Path,
                                               dataset: str) -> None:
    require_file(shared_data, FILES[dataset])
    code, out, err = run(capsys, "metrics", "--dataset", dataset, "--quality", "Overall", "--profile", "nlg-eval",
                         "--bootstrap", "0", "--format", "csv")
    assert code == 0, err
    rows = {r["evaluator"]: r for r in csv.DictReader(io.StringIO(out))}
    meteor_missing = meteor_jar_unavailable()
    for metric, (pearson, spearman) in PUBLISHED[dataset].items():
        row = rows[ROWS[metric]]
        assert "profile:nlg-eval" in row["signature"]
        if metric == "METEOR" and meteor_missing is not None:
            assert row["pearson"] == "" and row["reason"] == meteor_missing
            continue
        assert int(row["n"]) == N_ITEMS[dataset]
        assert (round(float(row["pearson"]), 3), round(float(row["spearman"]), 3)) == (pearson, spearman), metric
    # The default profile's rows are not in this table: the two are never mixed silently.
    assert "BLEU-4" not in rows and "METEOR" not in rows


def test_unknown_profile_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "metrics", "--profile", "coco")
    assert "invalid choice: 'coco'" in capsys.readouterr().err


def test_judge_tables_and_the_run_record_carry_the_profile(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa")
    code, out, err = run(capsys, "judge", "--dataset", "sample", "--judge", "fa", "--mode", "generate",
                         "--aspect", "coherence", "--limit", "8", "--bootstrap", "0", "--profile", "nlg-eval",
                         "--format", "csv")
    assert code == 0, err
    rows = [r for r in csv.DictReader(io.StringIO(out)) if r["subset"] == "all"]
    names = [r["evaluator"] for r in rows]
    assert names[0] == "BLEU-1 (nlg-eval)" and "fa" in names and "BLEU-1" not in names
    assert all("profile:nlg-eval" in r["signature"] for r in rows if "(nlg-eval)" in r["evaluator"])
    # The run record keeps both profiles' signatures: its table may be shown with either.
    environment = RunStore().runs.list_runs()[-1].config["environment"]
    assert "nlg-eval-bleu4" in environment["metric_signatures"] and "bleu4" in environment["metric_signatures"]
