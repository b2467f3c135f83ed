"""What the CLI tests share: running a command in-process, and a config of fake judges."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from dialjudge.cli.main import main

#: Two fake judges with different seeds, so they give different answers.
FAKE_JUDGES = {"fa": 'backend = "fake"\nmodel = "fake-a"\n', "fb": 'backend = "fake"\nmodel = "fake-b"\nseed = 1\n'}


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``dialjudge ARGV`` in this process: (exit code, stdout, stderr)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def use_fake_judges(folder: Path, monkeypatch: pytest.MonkeyPatch, *names: str, preamble: str = "") -> Path:
    """Write a config with the named fake judges (after ``preamble``) and point dialjudge at it."""
    config = folder / "dialjudge.toml"
    tables = "".join(f"\n[judges.{name}]\n{FAKE_JUDGES[name]}" for name in names)
    config.write_text(textwrap.dedent(preamble) + tables, encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    return config
