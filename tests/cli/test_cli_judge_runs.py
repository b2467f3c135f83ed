"""`dialjudge judge` with fake judges from a config file, then `dialjudge runs list|show|export|compare|delete`."""

from __future__ import annotations

import csv
import json
import re
import textwrap
from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.prompts.templates import shipped_template_dir
from dialjudge.core.judges.run.config import template_text_hash
from dialjudge.core.model import majority_vote
from shared_data import shared_data_dir

OLD_LINE = "Please output a score."
NEW_LINE = "Please output one number only."


@pytest.fixture(autouse=True)
def fake_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config with two fake judges (different seeds, so different answers) and a user template folder."""
    shipped = (shipped_template_dir() / "adv-0to1.toml").read_text(encoding="utf-8")
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "adv-edit.toml").write_text(
        shipped.replace('name = "adv-0to1"', 'name = "adv-edit"').replace(OLD_LINE, NEW_LINE), encoding="utf-8")
    config = tmp_path / "dialjudge.toml"
    config.write_text(textwrap.dedent(f"""
        [data]
        dirs = ["{shared_data_dir()}"]

        [templates]
        dirs = ["templates"]

        [judges.fa]
        backend = "fake"
        model = "fake-a"

        [judges.fb]
        backend = "fake"
        model = "fake-b"
        seed = 1
    """), encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    return config



def flat(text: str) -> str:
    return " ".join(text.split())


def table_rows(out: str) -> list[list[str]]:
    return [[c.strip() for c in line.split("│")[1:-1]] for line in out.splitlines() if line.startswith("│")]


def first_table_rows(out: str) -> list[list[str]]:
    """Rows of the first table printed (the sample also gets open and closed tables after it)."""
    return table_rows(out[: out.index("└") + 1])


JUDGE_SAMPLE = ("judge", "--judge", "fa", "--mode", "generate", "--aspect", "coherence", "--limit", "8",
                "--bootstrap", "50")


def test_judge_then_every_runs_command(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = run(capsys, *JUDGE_SAMPLE, "--no-metrics")
    assert code == 0, err
    assert "Run 1 (finished" in err and "8/8" in err
    rows = {row[0]: row for row in first_table_rows(out) if row[0]}
    assert set(rows) == {"fa", "response length", "human ceiling"}
    assert rows["fa"][3:] == ["8", "0", "0"]  # --limit 8: the 52 items never requested are not "excluded"
    assert "run 1: template adv-0to1, mode generate, aspect coherence, few-shot none" in flat(out)

    code, out, _ = run(capsys, "runs", "list")
    assert code == 0
    (listed,) = table_rows(out)
    adv_hash = template_text_hash((shipped_template_dir() / "adv-0to1.toml").read_text(encoding="utf-8"))
    assert listed[0] == "1" and listed[3:] == ["finished", "sample", "coherence", f"adv-0to1 #{adv_hash}",
                                               "generate", "fa", "8/8", "0"]

    code, out, _ = run(capsys, "runs", "show", "1")
    assert code == 0
    assert "Run 1 — finished" in out
    assert "sample (all)" in out
    assert re.search(r"aspect / KPI / quality\s+coherence / – / coherence", out)
    assert re.search(r"^mode\s+generate\s*$", out, re.M)  # top-K only matters in logprob mode
    assert "8 of 8 (0 failed)" in out
    versions = re.search(r"^versions\s+(.*)$", out, re.M)
    assert versions and {"dialjudge", "sacrebleu", "rouge-score", "nltk", "llama-cpp-python"} <= {
        part.split()[0] for part in versions.group(1).split(", ")}
    assert OLD_LINE in out  # the template text the run used

    code, out, _ = run(capsys, "runs", "export", "1", "--format", "jsonl")
    assert code == 0
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 8
    assert {(r["run_id"], r["judge"], r["mode"]) for r in records} == {(1, "fa", "generate")}
    assert all(0.0 <= r["normalized"] <= 1.0 and r["error"] is None for r in records)
    sample_ids = [ex.id for ex in open_dataset("sample").examples[:8]]
    assert sorted(r["item_id"] for r in records) == sorted(sample_ids)

    target = tmp_path / "run1.csv"
    code, out, err = run(capsys, "runs", "export", "1", "--output", str(target))
    assert code == 0 and out == "" and f"wrote 8 judgments to {target}" in err
    with target.open(encoding="utf-8") as handle:
        exported = list(csv.DictReader(handle))
    assert [r["item_id"] for r in exported] == [r["item_id"] for r in records]

    # A second run with an edited template: the comparison shows the moved correlations and the edit.
    code, _, err = run(capsys, *JUDGE_SAMPLE, "--no-metrics", "--template", "adv-edit")
    assert code == 0 and "Run 2 (finished" in err
    code, out, _ = run(capsys, "runs", "compare", "1", "2")
    assert code == 0
    assert "Run 1 → run 2 (sample)" in out
    # The subsets are core's choice, as in the app's compare dialog: the whole set, then its open and closed parts.
    rows = [row for row in table_rows(out) if row[0] == "fa"]
    assert [row[2] for row in rows] == ["all"] * 3 + ["open"] * 3 + ["closed"] * 3
    deltas = [row for row in rows if row[2] == "all"]
    assert [row[3] for row in deltas] == ["pearson", "spearman", "kendall"]
    assert all(row[7] == "8/8" for row in deltas)
    assert any(row[6] not in ("+0.000", "-0.000") for row in deltas)
    assert "template.name" in out and '"adv-edit"' in out
    assert "Prompt diff" in out
    lines = out.splitlines()
    assert any(line.startswith("-") and line.endswith(OLD_LINE) for line in lines)
    assert any(line.startswith("+") and line.endswith(NEW_LINE) for line in lines)

    code, _, err = run(capsys, "runs", "delete", "1")
    assert code == 0 and "deleted run 1" in err
    _, out, _ = run(capsys, "runs", "list")
    assert [row[0] for row in table_rows(out)] == ["2"]
    gone = (("runs", "delete", "1"), ("runs", "show", "1"), ("runs", "export", "1"), ("runs", "compare", "1", "2"))
    for argv in gone:
        code, out, err = run(capsys, *argv)
        assert code == 2 and "Traceback" not in err, argv
        assert len(err.strip().splitlines()) == 1 and re.search(r"no run (with id )?1\b", err), argv


def test_judge_beside_the_metrics_in_csv(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *JUDGE_SAMPLE, "--judge", "fb", "--format", "csv")
    assert code == 0
    rows = [r for r in csv.DictReader(out.splitlines()) if r["subset"] == "all"]
    names = [r["evaluator"] for r in rows]
    assert names[:1] == ["BLEU-1"] and names[-5:] == ["fa", "fb", "pool", "response length", "human ceiling"]
    assert {r["quality"] for r in rows} == {"coherence"}
    assert rows[-5]["n"] == "8" and rows[-5]["spearman"] != rows[-4]["spearman"]


def test_kpi_run_prints_the_max_vote_agreement_with_kappa(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--dataset", "incar-kpi", "--template", "inca-kpi",
                         "--kpi", "harmful-input", "--judge", "fa", "--judge", "fb", "--no-metrics",
                         "--bootstrap", "50")
    assert code == 0, err
    assert "incar-kpi [tag:kpi:harmful-input] — turn level" in flat(out)
    assert "Agreement with max-voted humans — harmful-input" in out
    header = next(line for line in out.splitlines() if line.startswith("┃judge"))
    assert "Cohen's κ" in header and "% agreement" in header
    section = out[out.index("Agreement with max-voted humans"):]
    rows = {row[0]: row for row in table_rows(section[:section.index("└") + 1])
            if row and row[0] in ("fa", "fb", "Max-Vote (2 judges)")}
    assert set(rows) == {"fa", "fb", "Max-Vote (2 judges)"}

    # Recompute each judge's agreement and kappa from the exported judgments.
    _, exported, _ = run(capsys, "runs", "export", "1", "--format", "jsonl")
    judgments = [json.loads(line) for line in exported.splitlines()]
    dataset = open_dataset("incar-kpi")
    human = {ex.id: majority_vote(ex.ratings["harmful-input"].present).value for ex in dataset
             if "kpi:harmful-input" in ex.tags}
    assert len(human) == 15
    votes = {judge: {j["item_id"]: float(round(j["normalized"])) for j in judgments if j["judge"] == judge}
             for judge in ("fa", "fb")}
    assert set(votes["fa"]) == set(votes["fb"]) == set(human)
    # Two judges that disagree tie, and a tie goes to the smaller label.
    votes["Max-Vote (2 judges)"] = {i: min(votes["fa"][i], votes["fb"][i]) for i in human}
    assert votes["fa"] != votes["fb"]
    for name, by_item in votes.items():
        pairs = [(by_item[i], float(human[i])) for i in human]
        observed = sum(a == b for a, b in pairs) / len(pairs)
        p_judge = sum(a for a, _ in pairs) / len(pairs)
        p_human = sum(b for _, b in pairs) / len(pairs)
        expected = p_judge * p_human + (1 - p_judge) * (1 - p_human)
        kappa = (observed - expected) / (1 - expected)
        assert rows[name][1:] == ["15", f"{100 * observed:.1f}", f"{kappa:.3f}"], name


def test_repeats_print_the_stability_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, *JUDGE_SAMPLE, "--no-metrics", "--repeats", "2")
    assert code == 0
    assert "Stability over repeats" in out
    row = next(row for row in table_rows(out) if row[0] == "fa" and len(row) == 7)
    assert row[1:3] == ["2", "8"]


@pytest.mark.parametrize(("argv", "fragment"), [
    (("judge", "--judge", "fa"), "template 'adv-0to1' needs an aspect"),
    (("judge", "--judge", "gpt9", "--aspect", "coherence"), "no judge named 'gpt9'"),
    (("judge", "--judge", "fa", "--aspect", "coherence", "--persona", "pirate"), "no persona named 'pirate'"),
    (("judge", "--judge", "fa", "--template", "nope"), "no template named 'nope'"),
    (("judge", "--judge", "fa", "--aspect", "coherence", "--mode", "yesno"), "does not support mode 'yesno'"),
    (("judge", "--judge", "fa", "--aspect", "coherence", "--subset", "opn"), "unknown subset 'opn'"),
    (("runs", "show", "7"), "no run with id 7"),
])
def test_judge_mistakes_are_one_line_with_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                                 fragment: str) -> None:
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dialjudge: error: ") and fragment in lines[0], err


def test_dialog_only_data_is_reported_at_dialog_level(capsys: pytest.CaptureFixture[str], shared_data: Path) -> None:
    if not (shared_data / "fed" / "fed_data.json").is_file():
        pytest.skip("fed/fed_data.json is absent from the shared data folder")
    code, out, err = run(capsys, "judge", "--dataset", "fed-dialog", "--template", "fed-fewshot-dialog",
                         "--judge", "fa", "--aspect", "coherent", "--limit", "10", "--no-metrics",
                         "--bootstrap", "50", "--format", "csv")
    assert code == 0, err
    rows = {r["evaluator"]: r for r in csv.DictReader(out.splitlines())}
    assert {r["level"] for r in rows.values()} == {"dialog"}
    assert rows["fa"]["quality"] == "Coherent" and rows["fa"]["n"] == "10"


def test_random_fewshot_draws_report_mean_and_std_over_the_draws(capsys: pytest.CaptureFixture[str]) -> None:
    from dialjudge.core.api.reports import draw_spread
    from dialjudge.core.judges.store.run_store import RunStore

    code, out, err = run(capsys, "judge", "--dataset", "sample", "--template", "likert-1to5", "--aspect", "overall",
                         "--judge", "fa", "--fewshot", "random:2", "--fewshot-draws", "3", "--no-metrics",
                         "--bootstrap", "50")
    assert code == 0, err
    assert "few-shot draw random:2\n" in err and "random:2@1" in err and "random:2@2" in err
    assert "Random few-shot draws" in out
    runs = RunStore().runs.list_runs()
    assert len(runs) == 3
    seeds = sorted(r.config["fewshot"]["seed"] for r in runs)
    assert seeds == [0, 1, 2]
    spread = draw_spread(RunStore(), [r.id for r in runs], open_dataset("sample"), "overall")
    (only,) = spread
    assert len(only.spearman) == 3
    mean, std = only.spearman_mean_std
    assert f"{mean:.3f} ± {std:.3f}" in out


def test_fewshot_draws_need_random_selection(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--dataset", "sample", "--template", "likert-1to5", "--aspect", "overall",
                         "--judge", "fa", "--fewshot", "bm25-context:2", "--fewshot-draws", "3")
    assert code == 2 and "several few-shot draws need random:K few-shot" in err


def test_the_default_mode_is_logprob_where_the_template_supports_it(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--judge", "fa", "--aspect", "coherence", "--limit", "4",
                         "--bootstrap", "0", "--no-metrics")
    assert code == 0, err
    # logprob with the expected value over every valid score (top-K 0), so no top-K in the note
    assert "run 1: template adv-0to1, mode logprob, aspect coherence" in flat(out)
    code, out, _ = run(capsys, "runs", "export", "1", "--format", "jsonl")
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == 4 and {r["mode"] for r in records} == {"logprob"}
    assert all(r["error"] is None for r in records)
