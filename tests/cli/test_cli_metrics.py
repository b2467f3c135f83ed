"""`dialjudge metrics`: the reference-metric table on real USR data, in every format, and its errors."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.cli.main import main
from dialjudge.core.metrics import metric_ids, metric_info
from shared_data import require_file


def metric_labels() -> list[str]:
    """The nine labels; METEOR's names the variant available here ("METEOR (exact+stem)" without WordNet)."""
    return [metric_info(m).label for m in metric_ids()]

USR = ("--dataset", "usr-topicalchat", "--quality", "Overall", "--bootstrap", "50")


@pytest.fixture
def usr(shared_data: Path) -> Path:
    return require_file(shared_data, "usr/usr_topical_chat.json")



def table_rows(out: str) -> dict[str, list[str]]:
    """The header and the first line of each row of a rich table, by their first cell."""
    rows = {}
    for line in out.splitlines():
        if line[:1] in ("│", "┃"):
            cells = [c.strip() for c in line.replace("┃", "│").split("│")[1:-1]]
            if cells[0]:
                rows[cells[0]] = cells
    return rows


def flat(text: str) -> str:
    """Text with runs of whitespace as one space: rich wraps a long title to the table's width."""
    return " ".join(text.split())


def test_table_on_usr(capsys: pytest.CaptureFixture[str], usr: Path) -> None:
    code, out, err = run(capsys, "metrics", *USR)
    assert code == 0, err
    assert "Reference-based metrics vs humans — usr-topicalchat — turn level" in flat(out)
    rows = table_rows(out[:out.index("Length bias")])  # the agreement table; the length bias table follows
    assert list(rows)[1:] == [*metric_labels(), "response length", "human ceiling"]  # after the header row
    assert rows["response length"][3] == "360"  # the references have a length too
    assert rows["Evaluator"][1:3] == ["Overall r", "Overall ρ"]
    assert rows["BLEU-4"][3:] == ["300", "60", "0"]  # n, excluded (the references), failed
    assert rows["human ceiling"][3] == "360"
    assert "bootstrap: 50 resamples" in flat(out)


def test_csv_parses_and_matches_json(capsys: pytest.CaptureFixture[str], usr: Path) -> None:
    code, out, _ = run(capsys, "metrics", *USR, "--format", "csv")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["evaluator"] for r in rows] == [*metric_labels(), "response length", "human ceiling"]
    assert all(r["quality"] == "Overall" and r["level"] == "turn" and r["subset"] == "all" for r in rows)
    assert rows[-1]["is_ceiling"] == "True"

    code, out, _ = run(capsys, "metrics", *USR, "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["meta"]["dataset"] == "usr-topicalchat"
    assert any("resamples" in note for note in data["meta"]["notes"])
    assert [r["evaluator"] for r in data["results"]] == [*metric_labels(), "response length", "human ceiling"]
    for row, record in zip(rows, data["results"]):
        assert float(row["spearman"]) == record["spearman"]
        assert int(row["n"]) == record["n"]


def test_markdown_and_latex(capsys: pytest.CaptureFixture[str], usr: Path) -> None:
    code, out, _ = run(capsys, "metrics", *USR, "--format", "markdown")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "**Reference-based metrics vs humans — usr-topicalchat — turn level**"
    assert lines[2] == "| Evaluator | Overall r | Overall ρ | n | excluded | failed |"
    assert lines[3].startswith("|---|")
    assert lines[4].startswith("| BLEU-1 | ")
    assert any(line.startswith("| human ceiling | ") for line in lines)

    code, out, _ = run(capsys, "metrics", *USR, "--format", "latex", "--kendall")
    assert code == 0
    assert r"\begin{tabular}{lrrrr}" in out and r"\end{tabular}" in out
    assert r"$\tau$" in out
    assert "chrF++ & " in out


def test_output_writes_the_file_and_nothing_to_stdout(capsys: pytest.CaptureFixture[str], usr: Path,
                                                       tmp_path: Path) -> None:
    target = tmp_path / "usr.csv"
    code, out, err = run(capsys, "metrics", *USR, "--format", "csv", "--output", str(target))
    assert code == 0 and out == ""
    assert f"wrote {target}" in err
    rows = list(csv.DictReader(target.open(encoding="utf-8")))
    assert len(rows) == 11  # nine metrics, the length row, the ceiling

    # The table format written to a file is Markdown.
    md = tmp_path / "usr.md"
    assert run(capsys, "metrics", *USR, "--output", str(md))[0] == 0
    assert md.read_text(encoding="utf-8").startswith("**Reference-based metrics")


def test_subset_narrows_the_items_and_shows_in_the_title(capsys: pytest.CaptureFixture[str], usr: Path) -> None:
    code, out, _ = run(capsys, "metrics", *USR, "--subset", "system:Original Ground Truth", "--metrics", "bleu4")
    assert code == 0
    # The subset is data, not terminal markup: it must be printed as typed.
    assert "usr-topicalchat [system:Original Ground Truth] — turn level" in flat(out)
    rows = table_rows(out.split("Length bias")[0])
    assert rows["BLEU-4"][1:4] == ["–", "–", "0"]  # the references themselves are never scored
    assert rows["human ceiling"][3] == "60"

    code, out, _ = run(capsys, "metrics", *USR, "--subset", "non-adversarial", "--format", "csv")
    assert {r["subset"] for r in csv.DictReader(io.StringIO(out))} == {"non-adversarial"}


def test_system_level(capsys: pytest.CaptureFixture[str], usr: Path) -> None:
    code, out, _ = run(capsys, "metrics", *USR, "--level", "system", "--format", "csv", "--metrics", "bleu4,meteor")
    assert code == 0
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["evaluator"] for r in rows] == ["BLEU-4", metric_info("meteor").label, "response length",
                                             "human ceiling"]
    assert {r["level"] for r in rows} == {"system"}
    assert rows[0]["n"] == "5"  # five systems have scored candidates

    code, out, _ = run(capsys, "metrics", *USR, "--level", "both", "--format", "markdown", "--metrics", "bleu4")
    assert "— turn level**" in out and "— system level**" in out


def test_sample_runs_without_the_shared_data(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "metrics", "--quality", "overall", "--metrics", "bleu1,chrf++", "--bootstrap", "50",
                       "--format", "csv")
    assert code == 0
    records = list(csv.DictReader(io.StringIO(out)))
    rows = [r for r in records if r["subset"] == "all"]
    assert [r["evaluator"] for r in rows] == ["BLEU-1", "chrF++", "response length", "human ceiling"]
    assert rows[0]["n"] == "48" and rows[0]["excluded"] == "12"
    # The sample holds open- and closed-ended items, so each is also reported on its own.
    assert list(dict.fromkeys(r["subset"] for r in records)) == ["all", "open", "closed"]
    bleu = {r["subset"]: int(r["n"]) for r in records if r["evaluator"] == "BLEU-1"}
    assert bleu["open"] + bleu["closed"] == bleu["all"]


@pytest.mark.parametrize(("argv", "fragments"), [
    (("--dataset", "usr-topical"), ("no dataset named 'usr-topical'", "usr-topicalchat")),
    (("--quality", "Overal"), ("sample has no quality 'Overal'", "overall")),
    (("--subset", "opn"), ("unknown subset 'opn'",)),
    (("--subset", "level:utterance"), ("unknown subset 'level:utterance'",)),
    (("--metrics", "bleu5"), ("unknown metric 'bleu5'",)),
    (("--format", "csv", "--output", "/nonexistent-dir/x.csv"), ("/nonexistent-dir/x.csv", "cannot write")),
])
def test_mistakes_are_one_line_with_exit_2(capsys: pytest.CaptureFixture[str], argv: tuple[str, ...],
                                           fragments: tuple[str, ...]) -> None:
    code, out, err = run(capsys, "metrics", "--bootstrap", "50", *argv)
    assert code == 2 and out == ""
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dialjudge: error: "), err
    assert all(f in lines[0] for f in fragments), lines[0]


def test_argparse_rejects_an_unknown_format(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["metrics", "--format", "html"])
    assert info.value.code == 2
    assert "invalid choice: 'html'" in capsys.readouterr().err
