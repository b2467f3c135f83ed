"""A template that never shows the judge the reply is refused before a run starts, naming what is missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges

from dialjudge.core.judges.prompts.templates import shipped_template_dir


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
