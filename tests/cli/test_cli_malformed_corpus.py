"""Issue 33: the data contract, file by file (tests/data/malformed/). A structural fault stops
`datasets show` with exit code 2 and one message naming the file, the record (from 1, with its id)
or the line, and the field; a value fault is a counted exclusion with its reason, printed as
"left out at load" and named in a warning, while the quality keeps its scale."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.core.loaders import load_dataset
from dialjudge.core.model import Turn

CORPUS = Path(__file__).resolve().parents[1] / "data" / "malformed"
#: file -> the message after "dialjudge: error: <path>" (the whole rest of stderr).
ERRORS = {
    "jb_truncated.json": ", line 43: not valid JSON: Expecting property name enclosed in double quotes (column 4); "
                         "the file ends before its JSON does (truncated?)",
    "jb_missing_response.json": ", record 2 (id 2), field 'instance.response': missing required field (the file's "
                                "other instances give 'response'; an instance without one would be a whole dialogue)",
    "jb_missing_output_b.json": ", record 2 (id 'p2'), field 'instance.output_b': missing required field (a pairwise "
                                "instance needs both replies)",
    "jb_wrong_type.json": ", record 3 (id 3), field 'instance.response': expected a string, found a number",
    "jb_duplicate_id.json": ", record 3 (id 1), field 'id': duplicate id '1' (first in record 1)",
    "csv_ragged_row.csv": ", line 5: 3 cells but the header has 4 columns (a short row: a cell lost or a delimiter "
                          "inside an unquoted text?)",
    "csv_duplicate_id.csv": ", line 6, field 'id': duplicate id 'i1' (first on line 3)",
    "csv_mixed_encoding.csv": ": not UTF-8 text (bad byte at offset 71)",
    "usr_topical_chat_wrong_length.json": ", record 2 (id 'tc-001'), field 'responses[1].Overall': 2 values but 3 "
                                          "annotators",
    "fed_bad_context.json": ", record 2 (id 'fed-001'), field 'context': context line 1 does not start with 'User:' "
                            "or 'System:'",
    "pairs_short_row.csv": ", line 3: 3 cells but the header has 4 columns",
    "table_nested.jsonl": ", line 2, field 'candidate': expected a text, a number or a list of texts or turns, found "
                          "an object",
    "native_off_scale.jsonl": ", line 3 (id 'b'), field 'ratings.Overall.scores[0]': value 7 is outside the ordinal scale 1-5",
    "native_truncated.jsonl": ", line 3: not valid JSON: Unterminated string starting at (column 28)",
}

#: file -> (reason, count, the warning's place and value).
EXCLUSIONS = {
    "jb_nan.json": ("NaN or infinite", 1,
                    "record 1 (id 1), field 'annotations.coherence.individual_human_scores[0]': NaN"),
    "jb_between_points.json": ("between the scale's points", 1,
                               "record 2 (id 2), field 'annotations.coherence.individual_human_scores[0]': 4.5"),
    "jb_off_scale.json": ("outside the scale", 1,
                          "record 3 (id 3), field 'annotations.coherence.individual_human_scores[0]': 9"),
    "jb_wrong_type_score.json": ("not a number", 1,
                                 "record 3 (id 3), field 'annotations.coherence.individual_human_scores[0]': 'abc'"),
    "jb_missing_annotations.json": ("annotations missing", 1, "record 2 (id 2)"),
    "csv_stray_text.csv": ("not a number", 1, "line 5 (id 'i3'), field 'Overall:a1': 'abc'"),
    "csv_nan.csv": ("NaN or infinite", 1, "line 3 (id 'i1'), field 'Overall:a1': 'nan'"),
    "usr_topical_chat_off_scale.json": ("outside the scale", 1, "record 1 (id 'tc-000'), field 'responses[1].Overall[1]': 6"),
    "fed_string_value.json": ("not a number", 1, "record 2 (id 'fed-001'), field 'annotations.Overall[1]': 'good'"),
    "pairs_empty_winner.csv": ("empty verdict", 1, "line 3, field 'winner'"),
    "mt_bench_empty_winner.jsonl": ("empty verdict", 1, "line 2, field 'winner'"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_a_structural_fault_exits_2_with_one_message_naming_its_place(capsys: pytest.CaptureFixture[str],
                                                                      name: str) -> None:
    path = CORPUS / name
    code, out, err = run(capsys, "datasets", "show", str(path))
    assert code == 2
    assert err == f"dialjudge: error: {path}{ERRORS[name]}\n"  # once, and nothing else
    assert out == ""


@pytest.mark.parametrize("name", sorted(EXCLUSIONS))
def test_a_value_fault_is_a_counted_exclusion_with_its_reason(capsys: pytest.CaptureFixture[str], name: str) -> None:
    reason, count, place = EXCLUSIONS[name]
    path = CORPUS / name
    code, out, err = run(capsys, "datasets", "show", str(path))
    assert code == 0, err
    flat = " ".join(out.split())
    assert f"left out at load values counted as missing: {reason} {count}" in flat
    assert f"warning: {reason}: {count} counted as missing — {place}" in flat
    assert load_dataset(path).meta["value_exclusions"] == {reason: count}


def test_a_stray_text_leaves_the_scale_and_the_correlations_alone(capsys: pytest.CaptureFixture[str]) -> None:
    """One "abc" among 1-5 ratings made the quality "categorical: 1, 2, 3, 4, 5, abc" and every figure "–"."""
    code, out, err = run(capsys, "--width", "250", "datasets", "stats", str(CORPUS / "csv_stray_text.csv"))
    assert code == 0, err
    header = next(line for line in out.splitlines() if line.startswith("┃quality"))
    names = [c.strip() for c in header.split("┃")[1:-1]]
    row = next(line for line in out.splitlines() if line.startswith("│Overall"))
    cells = dict(zip(names, (c.strip() for c in row.split("│")[1:-1])))
    assert cells["scale"] == "ordinal 1-5" and cells["items"] == "8"
    assert cells["Krippendorff α"] != "–"  # computed on the numbers; the text is no rating
    # The 8-item file's two raters share fewer items than the pairwise figures ask for: that, not the
    # stray text, is why they are "–" (issue 33's minimum of shared items).
    assert "no two annotators share 10 items" in " ".join(out.split())
    assert "left out at load: values counted as missing: not a number 1" in " ".join(out.split())


@pytest.mark.parametrize(("name", "clean"), [("csv_bom.csv", 8), ("csv_stray_rater.csv", 8)])
def test_a_bom_and_a_stray_rater_load_without_exclusions(name: str, clean: int) -> None:
    dataset = load_dataset(CORPUS / name)
    assert len(dataset) == clean and "value_exclusions" not in dataset.meta
    assert [ex.id for ex in dataset][0] == "i0"  # the BOM is not part of the first column's name
    if name == "csv_stray_rater.csv":  # one vote of a third rater: kept as it is, never dropped or spread
        assert [ex.ratings["Overall"].scores[2] for ex in dataset].count(None) == 7


MULTI_LINE = "Fix this function:\n\n    def f(x):\n        return x +\n\nA: keep the name.\nB: and the docstring."


@pytest.mark.parametrize("name", ["jb_multi_line_prompt.json", "pairs_multi_line_prompt.csv"])
def test_a_multi_line_prompt_is_one_turn_byte_for_byte(name: str) -> None:
    (pair,) = load_dataset(CORPUS / name).examples
    assert pair.context == (Turn("", MULTI_LINE),)
    if name.endswith(".csv"):
        assert pair.pair is not None and pair.pair.response_b == "  y\n\n z"
