"""`--map COLUMN=FIELD` on the command line, end to end through the main entry: a CSV with other column
names opens with the right ratings, mistakes are one-line errors naming what is valid, and the file
remembers its mapping."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.cli.main import build_parser

CSV = """item,history,reply,gold,rater1,rater2
x1,A: hi,how are you,fine thanks,4,5
x2,A: yo,sup,hey,2,
x3,A: hm,ok,okay,1,3
x4,A: so,right,yes,5,5
"""
MAP = ["--map", "item=id", "--map", "history=context", "--map", "reply=candidate", "--map", "gold=reference",
       "--map", "rater1=Overall:r1", "--map", "rater2=Overall:r2"]


@pytest.fixture
def other_names(tmp_path: Path) -> Path:
    path = tmp_path / "other.csv"
    path.write_text(CSV, encoding="utf-8")
    return path


def one_line_error(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dialjudge: error: ") and "Traceback" not in err, err
    return lines[0]


def test_every_command_that_opens_a_dataset_takes_map() -> None:
    parser = build_parser()
    for argv in (["datasets", "show", "f.csv"], ["datasets", "stats", "f.csv"], ["metrics"], ["judge"],
                 ["tune", "--dataset", "f.csv", "--space", "s.toml"], ["adversarial", "make", "--from", "f.csv",
                                                                      "--out", "o.jsonl"], []):
        args = parser.parse_args([*argv, "--map", "a=candidate", "--map", "b=Overall:x"])
        assert args.column_map == ["a=candidate", "b=Overall:x"], argv


def test_without_a_mapping_the_error_says_how_and_lists_the_columns(capsys, other_names: Path) -> None:
    code, _, err = run(capsys, "datasets", "show", str(other_names))
    line = one_line_error(err)
    assert code == 2
    assert "--map COLUMN=FIELD" in line and "(the file's columns: item, history, reply, gold, rater1, rater2)" in line


def test_show_and_stats_with_a_mapping(capsys, other_names: Path) -> None:
    code, out, err = run(capsys, "datasets", "show", str(other_names), *MAP)
    assert code == 0, err
    assert "4 (4 turn level, 0 dialog level)" in out and "4 items have references" in out
    overall = next(line for line in out.splitlines() if line.startswith("│Overall"))
    assert "ordinal 1–5" in overall and "2 / 2 │" in overall  # two raters in the set, two per item; one missing value
    code, out, err = run(capsys, "datasets", "stats", str(other_names), *MAP)
    assert code == 0, err
    lines = out.splitlines()
    header = next(line for line in lines if "LOO Pearson" in line)
    row = next(line for line in lines if line.startswith("│Overall"))
    cells = [c.strip() for c in row.split("│")[1:-1]]
    pearson_cell = dict(zip([h.strip() for h in header.split("┃")[1:-1]], cells))["LOO Pearson"]
    # The mapped columns reach the ceiling: both annotators rated x1, x3 and x4, 3 items shared, fewer than
    # the 10 two annotators must share, so no ceiling is shown, and the note says why.
    assert cells[0] == "Overall" and pearson_cell == "–"
    assert "no two annotators share 10 items: no leave-one-out agreement" in out


def test_the_file_remembers_its_mapping(capsys, other_names: Path) -> None:
    assert run(capsys, "datasets", "show", str(other_names), *MAP)[0] == 0
    code, out, err = run(capsys, "datasets", "show", str(other_names))
    assert code == 0, err
    assert "4 (4 turn level, 0 dialog level)" in out
    # Never implicit: the summary says which mapping read the file.
    assert "columns mapped  item=id, history=context, reply=candidate, gold=reference, rater1=Overall:r1" in out


@pytest.mark.parametrize("extra, fragments", [
    (["--map", "reply=answer"], ("unknown field 'answer'", "candidate", "QUALITY:ANNOTATOR")),
    (["--map", "rating1=Overall:r1"], ("'rating1'", "the file's columns: item, history, reply, gold, rater1, rater2")),
    (["--map", "reply=candidate", "--map", "reply=context"], ("column 'reply' is mapped twice",)),
    (["--map", "reply=candidate", "--map", "gold=candidate"], ("field 'candidate' is given to two columns",)),
    (["--map", "reply"], ("expected COLUMN=FIELD",)),
])
def test_mistakes_are_one_line_errors(capsys, other_names: Path, extra: list[str], fragments: tuple[str, ...]) -> None:
    code, _, err = run(capsys, "datasets", "show", str(other_names), *extra)
    line = one_line_error(err)
    assert code == 2
    for fragment in fragments:
        assert fragment in line


def test_metrics_read_the_mapped_file(capsys, other_names: Path) -> None:
    code, out, err = run(capsys, "metrics", "--dataset", str(other_names), *MAP, "--metrics", "bleu1")
    assert code == 0, err
    assert "BLEU-1" in out and "Overall" in out
