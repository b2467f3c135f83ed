"""The run store for large runs (issue 23): batched writes, the listing counted from indexes, pages,
judgments of given items, score columns, and judgment exports streamed with the same bytes as before."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import math
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_engine import config, judge, make_dataset, render

from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.run.engine import RunEngine
from dialjudge.core.judges.run.options import EngineOptions
from dialjudge.core.judges.store import judgment_rows, run_store
from dialjudge.core.judges.store import runs as store_runs
from dialjudge.core.judges.store.run_store import EXPORT_COLUMNS, JudgmentWrite, RunStore
from dialjudge.core.judges.types import BackendResult, JudgeRequest, Judgment, ScoringMode
from dialjudge.core.report import to_csv, to_jsonl
from dialjudge.core.run_export import ExportError, export_run, write_judgments


def judgment(item: str, judge_name: str = "j", repeat: int = 0, score: float | None = 4.0, **kw: Any) -> Judgment:
    kw.setdefault("raw_output", "4")
    return Judgment(item_id=item, judge=judge_name, mode=ScoringMode.LOGPROB, prompt_hash="h" + item,
                    score=score, normalized=None if score is None else (score - 1) / 4, repeat=repeat, **kw)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    s = RunStore(tmp_path / "runs.sqlite3")
    yield s
    s.close()


#: Values an export must carry through untouched or neutralise: formulas, a number written as text,
#: line breaks of every kind, quotes, commas, non-ASCII, Markdown/HTML, empty and missing values.
AWKWARD = ["=HYPERLINK(\"http://x\",\"y\")", "-0.25", "+1 and more", "@SUM(A1)", "\tTab first", "\rCR first",
           "line one\r\nline two\rthree\nfour", 'a "quoted", comma', "ünïcödé — 中文 🙂", "<b>*bold*</b> | pipe",
           "", "-", "plain"]


def awkward_run(store: RunStore) -> int:
    run_id = store.runs.create_run(config(judge("a")).to_dict(), "fp-awkward", name="awkward")
    writes = []
    for k, text in enumerate(AWKWARD):
        for judge_name in ("b-judge", "a-judge"):
            failed = k % 4 == 3
            writes.append(JudgmentWrite(judgment(
                f"item-{text[:6]}-{k}", judge_name, repeat=k % 2, score=None if failed else 1.0 + k % 5,
                raw_output=text, reasoning=text if k % 3 else None, relevancy=text[::-1] or None,
                error="no score: " + text if failed else None,
                distribution=None if failed else {"1": 0.25, "2": 0.75, "=3": 0.0},
                top_logprobs=None if k % 5 == 0 else [(text or "x", -0.5), ("2", -1.25)],
                sampling={"temperature": 0.0, "seed": k, "stop": ["\n", text]},
                latency_s=math.inf if k == 2 else 0.125 * k,  # an infinity: null in JSON, as to_jsonl writes it
                prompt_tokens=10 + k, evaluated_tokens=k, completion_tokens=1, cached=k % 2 == 0,
                valid_mass=None if k % 3 == 0 else 0.5 + k / 100, valid_in_top=None if k % 3 == 0 else 2,
                mass_is_lower_bound=k % 2 == 1), cache_key=f"key-{k}-{judge_name}", request_failed=failed))
    store.judgments.add_judgments(run_id, writes)
    return run_id


def rows_as_before(path: Path, run_id: int) -> list[dict[str, Any]]:
    """export_rows as it was written before issue 23, on a plain connection of the test's own."""
    db = sqlite3.connect(path)
    db.row_factory = sqlite3.Row
    out = []
    for row in db.execute("SELECT * FROM judgments WHERE run_id = ? ORDER BY judge, item_id, repeat", (run_id,)):
        record = {c: row[c] for c in EXPORT_COLUMNS}
        for flag in ("cached", "mass_lower_bound", "request_failed"):
            record[flag] = bool(record[flag])
        out.append(record)
    db.close()
    return out


@pytest.mark.parametrize("fmt, generic", [("csv", to_csv), ("jsonl", to_jsonl)])
def test_a_streamed_judgment_export_has_the_bytes_of_the_generic_writer(
        store: RunStore, tmp_path: Path, fmt: str, generic: Any) -> None:
    run_id = awkward_run(store)
    expected = generic(rows_as_before(store.path, run_id))
    reference = tmp_path / f"reference.{fmt}"
    reference.write_text(expected, encoding="utf-8")  # as the exports were written before
    streamed = tmp_path / f"streamed.{fmt}"
    assert write_judgments(store, run_id, streamed, fmt) == len(AWKWARD) * 2
    assert streamed.read_bytes() == reference.read_bytes()
    assert store.judgments.export_rows(run_id) == rows_as_before(store.path, run_id)
    assert not list(tmp_path.glob("*.part"))


def test_the_app_export_of_judgments_neutralises_formulas_and_keeps_every_row(store: RunStore, tmp_path: Path) -> None:
    run_id = awkward_run(store)
    result = export_run(store, run_id, make_dataset(2, 2), tmp_path / "out", ["judgments-csv", "judgments-jsonl"])
    csv_path, jsonl_path = result.paths
    text = csv_path.read_text(encoding="utf-8")
    assert "'=HYPERLINK" in text and "'@SUM(A1)" in text and "'+1 and more" in text
    assert ",-0.25," in text or ",-0.25\n" in text  # a number written as text is left as it is
    lines = jsonl_path.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(AWKWARD) * 2
    first = json.loads(lines[0])
    assert list(first) == list(EXPORT_COLUMNS)
    assert {json.loads(line)["raw_output"] for line in lines} == set(AWKWARD)  # JSON keeps the text exactly


def test_an_export_of_a_run_without_judgments_or_of_no_run_is_an_error(store: RunStore, tmp_path: Path) -> None:
    empty = store.runs.create_run(config(judge("a")).to_dict(), "fp-empty")
    with pytest.raises(ExportError, match="no judgments yet"):
        export_run(store, empty, make_dataset(1, 1), tmp_path, ["judgments-csv"])
    with pytest.raises(run_store.StoreError, match="no run with id 999"):
        write_judgments(store, 999, tmp_path / "x.csv", "csv")


def test_a_batch_stores_as_single_writes_do(store: RunStore) -> None:
    run_id = store.runs.create_run({}, "fp")
    written = store.judgments.add_judgments(run_id, [
        JudgmentWrite(judgment("a"), "ka", False, BackendResult(raw_output="4"), "model"),
        JudgmentWrite(judgment("b", score=None, error="timeout"), "kb", True, None, "model"),
    ])
    assert written == 2
    assert store.cache.cached_responses(["ka", "kb", "kc"]).keys() == {"ka"}
    # Again: the scored one is kept, the failed request replaced; the count says which were written.
    assert store.judgments.add_judgments(run_id, [JudgmentWrite(judgment("a", score=1.0)),
                                        JudgmentWrite(judgment("b", score=2.0))]) == 1
    by_item = store.judgments.load_judgments(run_id)["j"]
    assert (by_item["a"].score, by_item["b"].score) == (4.0, 2.0)
    assert store.judgments.add_judgments(run_id, []) == 0


def test_the_listing_counts_judgments_and_failures_from_indexes(store: RunStore) -> None:
    one, two = store.runs.create_run({}, "fp1"), store.runs.create_run({}, "fp2")
    store.judgments.add_judgments(one, [JudgmentWrite(judgment(f"i{k}", score=None if k % 3 == 0 else 3.0))
                                        for k in range(10)])
    store.judgments.add_judgments(two, [JudgmentWrite(judgment("i0", score=None))])
    listed = {r.id: (r.judgments, r.failures) for r in store.runs.list_runs()}
    assert listed == {one: (10, 4), two: (1, 1)}
    assert (store.runs.get_run(one).judgments, store.runs.get_run(one).failures) == (10, 4)
    plan = " ".join(str(row[-1]) for row in store._connection.db.execute(
        "EXPLAIN QUERY PLAN " + store_runs._RUN_SELECT.replace("r.*", "r.id")))
    assert "judgments_failed_by_run" in plan and "SCAN j" not in plan


def test_an_older_store_gets_the_index_on_open(tmp_path: Path) -> None:
    path = tmp_path / "runs.sqlite3"
    RunStore(path).close()
    db = sqlite3.connect(path)
    db.execute("DROP INDEX judgments_failed_by_run")
    db.commit()
    db.close()
    with RunStore(path) as store:
        names = {r[0] for r in store._connection.db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
        assert "judgments_failed_by_run" in names


def test_judgments_are_read_back_field_for_field(store: RunStore) -> None:
    run_id = awkward_run(store)
    # The reader builds Judgments positionally: its columns must follow the dataclass's fields.
    fields = [f.name for f in dataclasses.fields(Judgment)]
    renamed = {"latency": "latency_s", "mass_lower_bound": "mass_is_lower_bound"}
    assert [renamed.get(c, c) for c in judgment_rows.READ_COLUMNS] == fields
    db = sqlite3.connect(store.path)
    db.row_factory = sqlite3.Row
    for j in store.judgments.iter_judgments(run_id):
        row = db.execute("SELECT * FROM judgments WHERE run_id = ? AND item_id = ? AND judge = ?",
                         (run_id, j.item_id, j.judge)).fetchone()
        assert j.raw_output == row["raw_output"] and j.error == row["error"] and j.mode is ScoringMode.LOGPROB
        assert j.distribution == (json.loads(row["distribution"]) if row["distribution"] else None)
        assert j.sampling == json.loads(row["sampling"])
        assert j.top_logprobs == ([tuple(p) for p in json.loads(row["top_logprobs"])] if row["top_logprobs"]
                                  else None)
        assert (j.cached, j.mass_is_lower_bound) == (bool(row["cached"]), bool(row["mass_lower_bound"]))
    db.close()
    loaded = list(store.judgments.iter_judgments(run_id))
    loaded[0].sampling["temperature"] = 9.0  # type: ignore[index]
    assert loaded[1].sampling["temperature"] == 0.0  # no two judgments share a sampling dict


def test_pages_follow_the_item_order_and_cover_the_run_once(store: RunStore) -> None:
    run_id = awkward_run(store)
    every = sorted(((j.item_id, j.judge, j.repeat) for j in store.judgments.iter_judgments(run_id)))
    seen = []
    offset = 0
    while True:
        page = store.judgments.judgment_page(run_id, offset=offset, limit=7)
        assert page.total == len(every) and page.offset == offset
        if not page.judgments:
            break
        seen += [(j.item_id, j.judge, j.repeat) for j in page.judgments]
        offset += 7
    assert seen == every
    one_judge = store.judgments.judgment_page(run_id, limit=100, judge="a-judge", repeat=0)
    assert one_judge.total == len(one_judge.judgments) == sum(1 for k in every if k[1] == "a-judge" and k[2] == 0)
    with pytest.raises(ValueError):
        store.judgments.judgment_page(run_id, offset=-1)


def test_judgments_of_given_items_only(store: RunStore) -> None:
    run_id = store.runs.create_run({}, "fp")
    store.judgments.add_judgments(run_id, [JudgmentWrite(judgment(f"i{k:04d}", name, repeat=r, score=1.0 + r))
                                 for k in range(1200) for name in ("x", "y") for r in range(2)])
    wanted = ["i0003", "i1100", "i0003", "absent", "i0600"]  # more than one IN (...) chunk apart, a duplicate
    got = store.judgments.judgments_for_items(run_id, wanted)
    assert set(got) == {"i0003", "i1100", "i0600"}
    assert {judge: [j.repeat for j in js] for judge, js in got["i1100"].items()} == {"x": [0], "y": [0]}
    every_repeat = store.judgments.judgments_for_items(run_id, ["i0600"], repeat=None)
    assert [j.score for j in every_repeat["i0600"]["y"]] == [1.0, 2.0]
    big = store.judgments.judgments_for_items(run_id, [f"i{k:04d}" for k in range(1200)])
    assert len(big) == 1200


def test_score_columns_agree_with_the_loaded_judgments(store: RunStore) -> None:
    run_id = awkward_run(store)
    columns = store.judgments.score_columns(run_id, repeat=0)
    loaded = store.judgments.load_judgments(run_id, repeat=0)
    assert set(columns) == set(loaded)
    for name, column in columns.items():
        assert column.item_ids == sorted(loaded[name])
        expected = [loaded[name][item] for item in column.item_ids]
        assert column.score.dtype == np.float64
        assert [None if math.isnan(v) else v for v in column.normalized.tolist()] == [j.normalized for j in expected]
        assert column.failed.tolist() == [j.failed for j in expected]
        assert column.normalized_by_item() == {j.item_id: j.normalized for j in expected}
        in_another_order = [*reversed(column.item_ids), "never-judged"]
        aligned = column.normalized_for(in_another_order).tolist()
        assert [None if math.isnan(v) else v for v in aligned] == [
            *(loaded[name][item].normalized for item in reversed(column.item_ids)), None]


async def test_a_fast_run_commits_in_batches_and_stores_everything(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    batches: list[int] = []
    original = store.judgments.add_judgments

    def counting(run_id: int, writes: Any) -> int:
        writes = list(writes)
        batches.append(len(writes))
        return original(run_id, writes)

    store.judgments.add_judgments = counting  # type: ignore[method-assign]
    summary = await RunEngine(config(judge("a"), repeats=3), make_dataset(20, 5), {"a": FakeBackend("a")}, store,
                              EngineOptions(renderer=render, write_interval_s=60.0)).run()
    assert summary.done == 300 == sum(batches) == store.judgments.count_judgments(summary.run_id)
    assert len(batches) < 10  # the first at once, then at most 1,000 at a time and the rest at the end
    store.close()


async def test_a_pause_after_a_burst_commits_the_burst_without_a_further_judgment(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    release = asyncio.Event()
    asked = 0

    async def hold_the_fifth(request: JudgeRequest) -> None:
        nonlocal asked
        asked += 1
        if asked == 5:
            await release.wait()

    engine = RunEngine(config(judge("a")), make_dataset(3, 3), {"a": FakeBackend("a", max_concurrency=1,
                                                                                    delay=hold_the_fifth)},
                       store, EngineOptions(renderer=render, write_interval_s=0.05))
    task = asyncio.ensure_future(engine.run())
    for _ in range(400):  # bounded: at most 20 s
        runs = store.runs.list_runs()
        if runs and runs[0].judgments == 4:
            break
        await asyncio.sleep(0.05)
    assert store.runs.list_runs()[0].judgments == 4  # stored while the fifth is still being asked
    release.set()
    summary = await asyncio.wait_for(task, 20)
    assert store.judgments.count_judgments(summary.run_id) == 9
    store.close()


async def test_a_failing_write_fails_the_run(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")

    def broken(run_id: int, writes: Any) -> int:
        raise run_store.StoreError("disk full")

    store.judgments.add_judgments = broken  # type: ignore[method-assign]
    engine = RunEngine(config(judge("a")), make_dataset(3, 3), {"a": FakeBackend("a")}, store,
                       EngineOptions(renderer=render))
    with pytest.raises(run_store.StoreError, match="disk full"):
        await engine.run()
    assert store.runs.list_runs()[0].status == "failed"
    store.close()


def test_run_scores_read_as_arrays_equal_those_made_from_judgments(store: RunStore) -> None:
    from dialjudge.core.run_columns import judgment_columns, run_scores

    run_id = awkward_run(store)
    for repeat in (0, 1):
        loaded = store.judgments.load_judgments(run_id, repeat=repeat)
        assert run_scores(store, run_id, repeat=repeat, with_pool=False) == judgment_columns(loaded, with_pool=False)
        # Two judges: the pool is made from the judgments, as before.
        assert run_scores(store, run_id, repeat=repeat) == judgment_columns(loaded)
    single = store.runs.create_run({}, "fp-single")
    store.judgments.add_judgments(single, [JudgmentWrite(judgment(f"i{k}", score=None if k == 1 else 2.0))
                                           for k in range(3)])
    assert run_scores(store, single) == ({"j": {"i0": 0.25, "i1": None, "i2": 0.25}}, {"j": 1})


async def test_a_timed_write_that_fails_once_is_tried_again_and_loses_nothing(tmp_path: Path) -> None:
    store = RunStore(tmp_path / "runs.sqlite3")
    calls: list[int] = []
    original = store.judgments.add_judgments

    def failing_once(run_id: int, writes: Any) -> int:
        calls.append(len(writes))
        if len(calls) == 2:  # the timed write of the judgments made while the fifth is asked
            raise run_store.StoreError("database is locked")
        return original(run_id, writes)

    store.judgments.add_judgments = failing_once  # type: ignore[method-assign]
    release = asyncio.Event()
    asked = 0

    async def hold_the_fifth(request: JudgeRequest) -> None:
        nonlocal asked
        asked += 1
        if asked == 5:
            await release.wait()

    engine = RunEngine(config(judge("a")), make_dataset(3, 3),
                       {"a": FakeBackend("a", max_concurrency=1, delay=hold_the_fifth)}, store,
                       EngineOptions(renderer=render, write_interval_s=0.05))
    task = asyncio.ensure_future(engine.run())
    for _ in range(400):  # bounded: at most 20 s
        if len(calls) >= 2:
            break
        await asyncio.sleep(0.05)
    assert calls[:2] == [1, 3]  # the first at once; the next three on the timer, which failed
    release.set()
    summary = await asyncio.wait_for(task, 20)
    assert summary.status == "finished" and store.judgments.count_judgments(summary.run_id) == 9
    store.close()


def test_a_cached_response_keeps_its_own_probabilities(store: RunStore) -> None:
    run_id = store.runs.create_run({}, "fp")
    top = [("2", -0.25), ("1", -1.5)]
    probs = {"1": 0.25, "2": 0.75}
    shared = BackendResult(raw_output="2", choice_probs=probs, top_logprobs=top)
    own = BackendResult(raw_output="2", choice_probs={"1": 0.5, "2": 0.5}, top_logprobs=[("1", -0.5)])
    store.judgments.add_judgments(run_id, [
        JudgmentWrite(judgment("a", distribution=dict(probs), top_logprobs=list(top)), "ka", False, shared, "m"),
        JudgmentWrite(judgment("b", distribution=dict(probs), top_logprobs=list(top)), "kb", False, own, "m")])
    got = store.cache.cached_responses(["ka", "kb"])
    assert (got["ka"].choice_probs, got["ka"].top_logprobs) == (probs, top)
    assert (got["kb"].choice_probs, got["kb"].top_logprobs) == ({"1": 0.5, "2": 0.5}, [("1", -0.5)])
    db = sqlite3.connect(store.path)
    texts = dict(db.execute("SELECT cache_key, choice_probs || top_logprobs FROM response_cache"))
    db.close()
    assert texts["ka"] == json.dumps(probs, sort_keys=True) + json.dumps([list(p) for p in top])
