"""`dialjudge judge --constrain [--reasoning]`: documented, refused where it cannot work, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges


@pytest.fixture(autouse=True)
def fake_judges(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return use_fake_judges(tmp_path, monkeypatch, "fa")


def test_help_documents_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        run(capsys, "judge", "--help")
    out = " ".join(capsys.readouterr().out.split())
    assert "--constrain generate mode (implied): hold every answer to the template's answer format" in out
    assert "--reasoning with --constrain: one line of free reasoning first" in out


@pytest.mark.parametrize("argv, fragment", [
    (("--reasoning",), "--reasoning goes with --constrain"),
    (("--constrain", "--mode", "logprob"), "constrained answers are for mode generate"),
    # --constrain implies generate mode (adv-0to1 would otherwise run in logprob); the fake judge cannot.
    (("--constrain",), "judge 'fa': its backend cannot constrain answers"),
    (("--constrain", "--reasoning"), "judge 'fa': its backend cannot constrain answers"),
])
def test_mistakes_are_one_line_with_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                           fragment: str) -> None:
    code, out, err = run(capsys, "judge", "--dataset", "sample", "--judge", "fa", "--aspect", "coherence",
                         "--limit", "2", *argv)
    assert code == 2 and out == "", (code, out, err)
    lines = err.strip().splitlines()
    assert lines[-1].startswith("dialjudge: error: ") and fragment in lines[-1], err
    assert "Traceback" not in err
