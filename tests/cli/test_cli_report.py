"""`dialjudge report` and `runs export --format html`: the file is written (exit 0); bad input is one line
and exit 2, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run, use_fake_judges


@pytest.fixture(autouse=True)
def two_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    use_fake_judges(tmp_path, monkeypatch, "fa", "fb")
    for judge in ("fa", "fb"):
        code, _, err = run(capsys, "judge", "--judge", judge, "--template", "likert-1to5", "--aspect", "overall",
                           "--limit", "20", "--no-metrics", "--bootstrap", "0")
        assert code == 0, err


def test_report_of_two_runs_writes_one_file_with_every_section(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    out = tmp_path / "deep" / "report.html"
    code, _, err = run(capsys, "report", "1", "2", "--output", str(out), "--no-metrics", "--bootstrap", "50")
    assert code == 0, err
    assert f"wrote {out}" in err and "leaderboard, paired" in err
    text = out.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>") and 'id="agreement-run2-0"' in text


@pytest.mark.parametrize(("argv", "message"), [
    (("report", "7", "--output", "r.html"), "no run with id 7"),
    (("report", "1", "--output", "r.html", "--quality", "charm"), "--quality charm"),
    (("report", "1", "1", "--output", "r.html"), "run 1 is named twice"),
    (("report", "1", "--output", "r.html", "--dataset", "usr-nowhere"), "usr-nowhere"),
])
def test_bad_input_is_one_message_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...],
                                             message: str) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, *argv)
    assert code == 2
    assert err.startswith("dialjudge: error:") and message in err and "Traceback" not in err
    assert not (tmp_path / "r.html").exists()


def test_a_missing_output_or_run_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (("report", "1"), ("report", "--output", "r.html"), ("report", "one", "--output", "r.html")):
        with pytest.raises(SystemExit) as exit_:
            run(capsys, *argv)
        assert exit_.value.code == 2
        assert "usage: dialjudge report" in capsys.readouterr().err


def test_runs_export_writes_the_same_report(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "run1.html"
    code, _, err = run(capsys, "runs", "export", "1", "--format", "html", "--output", str(out))
    assert code == 0, err
    assert 'id="items-data"' in out.read_text(encoding="utf-8")
    code, printed, err = run(capsys, "runs", "export", "1", "--format", "html")
    assert code == 0, err
    assert printed.startswith("<!DOCTYPE html>") and 'id="agreement-run1-0"' in printed
