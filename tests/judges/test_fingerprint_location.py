"""A run of a shipped template or dataset has one fingerprint wherever dialjudge is installed."""

from __future__ import annotations

import dataclasses
from importlib.resources import files
from pathlib import Path

from dialjudge.core.config import JudgeConfig
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig, _install_independent
from dialjudge.core.judges.types import ScoringMode


def sample_run() -> RunConfig:
    dataset = open_dataset("sample", remember=False)
    return RunConfig.build(dataset, get_template("likert-1to5"), [JudgeConfig(name="fake", backend="fake")],
                           aspect="overall", quality="overall", mode=ScoringMode.LOGPROB, top_k=0)


def test_a_shipped_file_is_named_by_its_place_in_the_package() -> None:
    shipped = Path(str(files("dialjudge"))) / "prompts" / "templates" / "likert-1to5.toml"
    assert _install_independent(str(shipped)) == "dialjudge:prompts/templates/likert-1to5.toml"
    assert _install_independent(str(shipped.resolve())) == "dialjudge:prompts/templates/likert-1to5.toml"


def test_a_users_file_keeps_its_path(tmp_path) -> None:
    mine = tmp_path / "likert-mine.toml"
    assert _install_independent(str(mine)) == str(mine)
    assert _install_independent(None) is None and _install_independent("") == ""


def test_the_fingerprint_does_not_depend_on_where_the_package_lies(tmp_path) -> None:
    run = sample_run()
    assert run.template_source  # the shipped template's path in this checkout
    elsewhere = dataclasses.replace(run, template_source="dialjudge:prompts/templates/likert-1to5.toml")
    assert run.fingerprint == elsewhere.fingerprint
    # ...while a template read from another file is another run.
    other_file = dataclasses.replace(run, template_source=str(tmp_path / "likert-1to5.toml"))
    assert other_file.fingerprint != run.fingerprint
