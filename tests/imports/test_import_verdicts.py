"""Pairwise verdicts on pre-paired data (core.imports.formats.verdicts, core.imports.pairwise): the
hand-written tests/data/imports/pair_verdicts.csv with its counts checked by hand, and a round trip:
a native pairwise run written out as verdicts and imported gives the same preference report."""

from __future__ import annotations

import asyncio
import csv
from collections.abc import Mapping
from pathlib import Path

import pytest

from dialjudge.core.config import JudgeConfig
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.errors import ConfigError
from dialjudge.core.imports import ImportOptions, ImportRefused, import_run, prepare_import
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.post_run.preference_report import agreement_rows, is_preference_run, preference_report
from dialjudge.core.judges.prompts.templates import load_templates
from dialjudge.core.judges.run.config import JudgeSpec, RunConfig
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.pairwise import PairSetting
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.judges.types import Judgment, ScoringMode
from dialjudge.core.loaders import load_dataset
from dialjudge.core.model import Dataset

DATA = Path(__file__).resolve().parents[1] / "data"
FILE = DATA / "imports" / "pair_verdicts.csv"


@pytest.fixture(scope="module")
def pairs() -> Dataset:
    return load_dataset(DATA / "judge_bench_pairs.json")


@pytest.fixture()
def store(tmp_path: Path) -> RunStore:
    return RunStore(tmp_path / "runs.sqlite3")


def test_the_hand_written_file_counts_every_problem_by_name(pairs: Dataset, store: RunStore) -> None:
    # 12 rows of alpha (p1-p6, both orders) and 5 of beta: p1 A-first twice (the second a duplicate),
    # p2 B-first "maybe" (no verdict), p9 (no such pair) and p3 without the reply shown first.
    result = import_run(store, FILE, pairs)
    report = result.report
    assert (report.format, report.rows, report.matched_rows, report.items, report.dataset_items) == (
        "verdicts", 17, 15, 6, 6)
    assert report.judges == ["alpha", "beta"]
    assert report.unmatched == ["line 17 (p9)"]
    assert report.duplicates == ["line 15 (p1, beta, A first; first at line 14)"]
    assert report.unknown_verdicts == ["line 16 (p2, beta): 'maybe'"] and report.out_of_scale == []
    assert report.without_order == ["line 18 (p3, beta)"]
    # beta has 3 of the 12 asked orders (p1 A-first, p2 B-first, p3 taken as A-first).
    assert len(report.items_without_score) == 9 and "p2 (beta, A shown first)" in report.items_without_score

    run = store.runs.get_run(result.run_id)
    config = run.run_config
    assert config.imported is not None and config.imported["format"] == "verdicts"
    assert config.template == "pairwise-plain" and is_preference_run(config, pairs)
    stored = store.judgments.load_judgments(result.run_id)
    # The value per asked order: 1 = the reply shown first wins, 0 = the second, 0.5 = tie.
    assert {k: j.normalized for k, j in stored["alpha"].items() if k.startswith("p3#")} == {
        "p3#A>p3#B": 1.0, "p3#B>p3#A": 1.0}
    assert stored["alpha"]["p1#B>p1#A"].normalized == 0.0 and stored["alpha"]["p4#B>p4#A"].normalized == 0.5
    assert stored["beta"]["p2#B>p2#A"].failed

    report_ = preference_report(config, pairs, stored, n_boot=0)
    alpha = report_.judges["alpha"]
    # Humans: p1 A, p2 B, p3 tie, p4 tie (split), p5 B, p6 B. alpha: p1 A, p2 B, p3 flips (tie), p4 tie,
    # p5 B, p6 B: all 6 agree with ties counted; ties excluded leaves p1, p2, p5, p6, all agreeing.
    assert (alpha.with_ties.n, alpha.with_ties.agree) == (6, 6)
    assert (alpha.without_ties.n, alpha.without_ties.agree) == (4, 4)
    # One flip (p3); decisive orders: p1 x2, p2 x2, p3 x2, p5 x2, p6 x2 = 10, of which the first shown won
    # p1 once, p2 once, p3 twice, p5 once, p6 once = 6.
    assert (alpha.order.both_orders, alpha.order.flips, alpha.order.decisive, alpha.order.first_wins) == (6, 1, 10, 6)
    beta = report_.judges["beta"]
    assert (beta.missing, beta.failed) == (9, 1)


def test_strict_refuses_the_file_and_names_the_first_problem(pairs: Dataset) -> None:
    with pytest.raises(ImportRefused, match=r"rows matching no item: 1 — line 17 \(p9\)"):
        prepare_import(FILE, pairs, ImportOptions(strict=True))


def test_verdicts_need_pre_paired_items_and_a_pairwise_template(pairs: Dataset, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no pre-paired items"):
        prepare_import(FILE, open_dataset("sample", remember=False))
    with pytest.raises(ConfigError, match="not pairwise"):
        prepare_import(FILE, pairs, ImportOptions(template="label-yesno"))
    clean = tmp_path / "alpha.csv"
    clean.write_text("".join(line for line in FILE.read_text().splitlines(keepends=True)
                             if ",beta," not in line))
    plan = prepare_import(clean, pairs, ImportOptions(strict=True))
    assert plan.report.problems() == [] and plan.total == 12


#: The fake judge's verdict by reply with A shown first, then with B shown first.
SCRIPT = {"p1": ("A", "A"), "p2": ("B", "A"), "p3": ("tie", "tie"), "p4": ("A", "tie"), "p5": ("B", "B"),
          "p6": ("A", "A")}


def test_json_lines_with_other_column_names_and_no_judge_column(pairs: Dataset, tmp_path: Path) -> None:
    path = tmp_path / "gpt-judge.jsonl"
    path.write_text('{"id": "p1", "winner": "model_a", "order": "BA"}\n'
                    '{"id": "p1", "winner": "Response A", "order": "AB"}\n'
                    '{"id": "p2", "winner": "tie (bothbad)", "order": "B"}\n')
    plan = prepare_import(path, pairs)
    assert plan.report.format == "verdicts" and plan.report.judges == ["gpt-judge"]
    assert plan.report.fields == {"pair id": "id", "verdict": "winner", "shown first": "order"}
    # "Response A" is one of the spellings the pair loaders accept (case and spacing aside).
    assert {j.item_id: j.normalized for j in plan.judgments} == {"p1#B>p1#A": 0.0, "p1#A>p1#B": 1.0,
                                                                 "p2#B>p2#A": 0.5}
    # p2 has no A-first verdict; p1 both orders: named, not failed.
    assert plan.report.items_without_score == ["p2 (gpt-judge, A shown first)"] and plan.total == 4


def _scripted(item_id: str, prompt: str) -> float:
    """SCRIPT as the value of an asked order: 1 (the reply shown first wins), 0 (the second) or 0.5."""
    first, _ = item_id.split(">")
    pair, side = first.rsplit("#", 1)
    verdict = SCRIPT[pair][0 if side == "A" else 1]
    return 0.5 if verdict == "tie" else 1.0 if verdict == side else 0.0


def _as_verdicts(judgments: Mapping[str, Mapping[str, Judgment]], path: Path) -> None:
    """A stored pairwise run written out as a verdicts file: the value per asked order turned into the
    reply it names (an independent translation, not the report's)."""
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["pair_id", "judge", "shown_first", "verdict"])
        for judge, by_item in judgments.items():
            for item_id, judgment in by_item.items():
                first, second = (part.rsplit("#", 1)[1] for part in item_id.split(">"))
                value = judgment.normalized
                verdict = "tie" if value == 0.5 else first if value == 1.0 else second
                writer.writerow([item_id.split("#", 1)[0], judge, first, verdict])


def test_a_native_run_written_as_verdicts_and_imported_gives_the_same_report(pairs: Dataset, store: RunStore,
                                                                             tmp_path: Path) -> None:
    cfg = RunConfig.build(pairs, load_templates()["pairwise-plain"],
                          [JudgeSpec.of(JudgeConfig(name="fake", backend="fake"))], mode=ScoringMode.GENERATE,
                          pairs=PairSetting())
    summary = asyncio.run(RunEngine(cfg, pairs, {"fake": FakeBackend(score_fn=_scripted)}, store).run())
    native = preference_report(cfg, pairs, store.judgments.load_judgments(summary.run_id), n_boot=200, seed=3)
    path = tmp_path / "fake_verdicts.csv"
    _as_verdicts(store.judgments.load_judgments(summary.run_id), path)
    result = import_run(store, path, pairs, ImportOptions(strict=True))
    imported_config = store.runs.get_run(result.run_id).run_config
    imported = preference_report(imported_config, pairs, store.judgments.load_judgments(result.run_id), n_boot=200,
                                 seed=3)
    mine, theirs = native.judges["fake"], imported.judges["fake"]
    assert theirs.with_ties == mine.with_ties and theirs.without_ties == mine.without_ties
    assert theirs.order == mine.order and theirs.categories == mine.categories
    assert (theirs.missing, theirs.failed) == (0, 0)
    assert agreement_rows(imported) == agreement_rows(native)
    # Not a trivial report: p2 and p4 flip; p1, p3 (tie), p4 (tie), p5 agree with the humans, p2 and p6 not.
    assert mine.order.flips == 2 and (mine.with_ties.n, mine.with_ties.agree) == (6, 4)


def test_an_empty_verdict_is_named_as_such(pairs: Dataset, store: RunStore, tmp_path: Path) -> None:
    """Issue 33: an empty verdict was reported as "a value outside the scale"."""
    path = tmp_path / "empty.csv"
    path.write_text("pair_id,verdict\np1,A\np2,\np3,B\n", encoding="utf-8")
    report = import_run(store, path, pairs).report
    assert report.empty_verdicts == ["line 3 (p2, empty)"] and report.out_of_scale == []
    assert "empty verdicts: 1 — line 3 (p2, empty)" in report.summary_lines()


def test_importing_the_same_file_again_shows_the_run_it_made(pairs: Dataset, store: RunStore) -> None:
    """Issue 33: a second import of the same bytes with the same settings made a second run."""
    first = import_run(store, FILE, pairs)
    again = import_run(store, FILE, pairs)
    assert (again.run_id, again.shown_again, first.shown_again) == (first.run_id, True, False)
    assert [r.id for r in store.runs.list_runs()] == [first.run_id]
