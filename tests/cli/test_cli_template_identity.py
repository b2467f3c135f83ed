"""Templates have identity: runs show the template's content hash beside its name; a template that never
shows the judge the reply is refused before a run starts, naming what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.judges.prompts.templates import shipped_template_dir
from dialjudge.core.judges.run.config import template_text_hash


@pytest.fixture(autouse=True)
def fake_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "templates").mkdir()
    return use_fake_judges(tmp_path, monkeypatch, "fa", preamble='[templates]\ndirs = ["templates"]\n')


def test_judge_refuses_a_template_without_response(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    text = (shipped_template_dir() / "likert-1to5.toml").read_text(encoding="utf-8")
    assert "{response}" in text
    blind = tmp_path / "templates" / "blind.toml"
    blind.write_text(text.replace('name = "likert-1to5"', 'name = "blind"').replace("{response}", "(hidden)"),
                     encoding="utf-8")
    code, out, err = run(capsys, "judge", "--dataset", "sample", "--template", "blind", "--aspect", "overall",
                         "--judge", "fa", "--mode", "logprob")
    assert code == 2 and out == ""
    assert "no message shows the reply being judged: use {response}" in err and "blind.toml" in err


def test_runs_of_two_templates_with_one_name_show_different_hashes(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    shipped = (shipped_template_dir() / "likert-1to5.toml").read_text(encoding="utf-8")
    argv = ("judge", "--dataset", "sample", "--template", "likert-1to5", "--aspect", "overall", "--judge", "fa",
            "--mode", "logprob", "--limit", "3")
    assert run(capsys, *argv)[0] == 0
    edited = shipped.replace("{response}", "{response}\n(Be strict.)", 1)
    (tmp_path / "templates" / "likert-1to5.toml").write_text(edited, encoding="utf-8")  # a user override
    assert run(capsys, *argv)[0] == 0
    code, out, _ = run(capsys, "runs", "list")
    assert code == 0
    original, changed = template_text_hash(shipped), template_text_hash(edited)
    assert original != changed
    assert f"likert-1to5 #{original}" in out and f"likert-1to5 #{changed}" in out
    code, out, _ = run(capsys, "runs", "show", "2")
    assert f"likert-1to5 #{changed}" in out


def test_an_identical_finished_run_is_shown_again_not_repeated(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ("judge", "--dataset", "sample", "--template", "likert-1to5", "--aspect", "overall", "--judge", "fa",
            "--mode", "logprob", "--limit", "4")
    assert run(capsys, *argv)[0] == 0
    code, _, err = run(capsys, *argv)
    assert code == 0 and "run 1 had finished with exactly these settings: shown again" in " ".join(err.split())
    assert run(capsys, *argv, "--fresh")[0] == 0
    assert run(capsys, *argv, "--name", "copy")[0] == 0  # a named run is a new run
    from dialjudge.core.judges.store.run_store import RunStore

    with RunStore() as store:
        runs = store.runs.list_runs()
        assert [(r.id, r.name, r.judgments) for r in reversed(runs)] == [(1, "", 4), (2, "", 4), (3, "copy", 4)]


def test_runs_export_counts_only_the_items_the_run_asked(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import csv

    assert run(capsys, "judge", "--dataset", "sample", "--template", "likert-1to5", "--aspect", "overall",
               "--judge", "fa", "--mode", "logprob", "--limit", "6")[0] == 0
    assert run(capsys, "runs", "export", "1", "--to", str(tmp_path / "out"))[0] == 0
    with (tmp_path / "out" / "run-1-agreement.csv").open(encoding="utf-8", newline="") as f:
        row = next(r for r in csv.DictReader(f) if r["evaluator"] == "fa" and r["subset"] == "all")
    # --limit 6: the 54 items never asked are no exclusion ("not scored"); the 6 asked are all compared.
    assert (row["n"], row["excluded"], row["not_scored"]) == ("6", "0", "0")
