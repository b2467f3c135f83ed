"""The search spaces shipped with dialjudge are found by name, wherever dialjudge is installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from dialjudge.core.errors import ConfigError
from dialjudge.core.tuning.space import load_space, packaged_spaces


def test_the_example_space_is_found_by_name_from_any_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # outside a checkout: prompts/search/example.toml is no path here
    assert "example" in packaged_spaces()
    by_name = load_space("example")
    assert len(by_name.variants) >= 2
    for spelling in ("example.toml", "prompts/search/example.toml"):
        assert load_space(spelling).variants == by_name.variants


def test_a_file_of_that_name_wins_and_an_unknown_name_lists_the_shipped_ones(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError, match=r"the spaces shipped with dialjudge, by name: .*example"):
        load_space("no-such-space")
    (tmp_path / "example.toml").write_text("not = [valid", encoding="utf-8")
    with pytest.raises(ConfigError, match="not valid TOML"):  # the user's own file is read, not the shipped one
        load_space("example.toml")
