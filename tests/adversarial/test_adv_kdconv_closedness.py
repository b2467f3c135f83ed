"""The KdConv reader and the open/closed-ended tagging."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialjudge.core.adversarial.closedness import judge_closedness, shared_facts, tag_closedness, tag_dataset
from dialjudge.core.errors import DataError
from dialjudge.core.loaders.kdconv import load_kdconv
from dialjudge.core.model import Dataset, Example, Turn
from shared_data import require_file

DIALOGUE = [{
    "name": "我是山姆",
    "messages": [
        {"message": "看过《我是山姆》吗？"},
        {"message": "是的，它是2001年12月28日上映的。",
         "attrs": [{"name": "我是山姆", "attrname": "上映时间", "attrvalue": "2001年12月28日"}]},
        {"message": "票房怎么样？",
         "attrs": [{"name": "我是山姆", "attrname": "类型", "attrvalue": "家庭"}]},
        {"message": "不清楚。"},
    ],
}]


def _write(tmp_path: Path, data, name: str = "test.json") -> Path:
    folder = tmp_path / "film"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_reader_builds_one_example_per_grounded_reply(tmp_path: Path) -> None:
    ds = load_kdconv(_write(tmp_path, DIALOGUE))
    assert ds.name == "kdconv-film-test" and ds.meta["domain"] == "film"
    assert [ex.id for ex in ds] == ["film-0-1", "film-0-2"]  # the ungrounded last turn is left out
    first, second = ds.examples
    assert first.context == (Turn("A", "看过《我是山姆》吗？"),)
    assert first.candidate == first.references[0] == "是的，它是2001年12月28日上映的。"
    assert first.is_reference and first.language == "zh"
    assert first.fact == "我是山姆 | 上映时间 | 2001年12月28日"
    assert first.extra["attrs"] == DIALOGUE[0]["messages"][1]["attrs"]
    assert first.ended == "closed" and second.ended == "open"
    assert [t.speaker for t in second.context] == ["A", "B"]


@pytest.mark.parametrize("data, field", [
    ({"messages": []}, None),
    ([{"name": "x"}], "messages"),
    ([{"messages": [{"text": "hi"}]}], "message"),
    ([{"messages": [{"message": "hi", "attrs": [{"name": "x"}]}]}], "attrs"),
])
def test_reader_names_the_bad_record(tmp_path: Path, data, field) -> None:
    path = _write(tmp_path, data)
    with pytest.raises(DataError) as err:
        load_kdconv(path)
    assert str(path) in str(err.value)
    assert err.value.field == field


def test_reader_reports_invalid_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("[{", encoding="utf-8")
    with pytest.raises(DataError, match="not valid JSON"):
        load_kdconv(path)


def test_real_kdconv_film(shared_data) -> None:
    path = require_file(shared_data, "kdconv/film/test.json")
    raw = json.loads(path.read_text(encoding="utf-8"))
    ds = load_kdconv(path)
    grounded = sum(1 for d in raw for t, m in enumerate(d["messages"]) if t and m.get("attrs"))
    assert len(ds) == grounded
    assert len({ex.group_id for ex in ds}) == len(ds)
    for ex in ds:
        assert [t.speaker for t in ex.context] == ["AB"[i % 2] for i in range(len(ex.context))]
        assert ex.fact.count("\n") == len(ex.extra["attrs"]) - 1
        realised = any(a["attrname"] != "Information" and 2 <= len(a["attrvalue"]) <= 30
                       and a["attrvalue"] in ex.candidate for a in ex.extra["attrs"])
        assert ex.ended == ("closed" if realised else "open")
    closed = sum(ex.ended == "closed" for ex in ds)
    assert 0.4 < closed / len(ds) < 0.8  # measured 1,687 of 2,851


def _example(reply: str, *, fact: str | None = None, question: str = "hi", tags=(), attrs=None):
    extra = {"attrs": attrs} if attrs else {}
    return Example(id="e", group_id="g", context=(Turn("A", question),), candidate=reply,
                   references=(reply,), fact=fact, tags=frozenset(tags), extra=extra)


def test_closed_when_the_reply_states_a_triple() -> None:
    ex = _example("他是日本东京人。", attrs=[{"name": "宫崎骏", "attrname": "出生地", "attrvalue": "日本东京"}])
    verdict = judge_closedness(ex)
    assert verdict.ended == "closed" and "出生地" in verdict.reason


def test_closed_when_reply_and_knowledge_share_a_number_date_or_name() -> None:
    fact = "The tower was finished in 1889 by Gustave Eiffel and is 330 metres tall."
    assert judge_closedness(_example("it is 330 metres tall", fact=fact)).ended == "closed"
    assert judge_closedness(_example("they finished it in 1889", fact=fact)).ended == "closed"
    assert shared_facts(fact, "I think Gustave Eiffel built it.") == ["gustave eiffel"]
    assert judge_closedness(_example("i love paris", fact=fact)).ended == "open"


def test_closed_when_the_reference_is_a_short_factual_answer() -> None:
    assert judge_closedness(_example("there's only one person", question="how many people are there?")).ended == "closed"
    assert judge_closedness(_example("日本东京的。", question="他是日本哪里人啊？")).ended == "closed"
    long_answer = "well i think it depends a lot on what you like to do on weekends"
    assert judge_closedness(_example(long_answer, question="what do you do?")).ended == "open"
    assert judge_closedness(_example("yes i do", question="do you like it?")).ended == "open"


def test_explicit_tags_and_overrides_win() -> None:
    tagged_open = _example("it is 330 metres tall", fact="330 metres", tags={"open"})
    assert judge_closedness(tagged_open).explicit
    assert tag_closedness(tagged_open) is tagged_open
    overridden = tag_closedness(tagged_open, "closed")
    assert overridden.ended == "closed" and "open" not in overridden.tags
    with pytest.raises(DataError):
        tag_closedness(tagged_open, "maybe")
    ds = Dataset("d", [tagged_open])
    with pytest.raises(DataError, match="unknown example ids"):
        tag_dataset(ds, {"nope": "open"})


def test_real_usr_topical_chat_tags(shared_data) -> None:
    path = require_file(shared_data, "usr/usr_topical_chat.json")
    examples = []
    for i, item in enumerate(json.loads(path.read_text(encoding="utf-8"))):
        reference = next(r["response"] for r in item["responses"] if r["model"] == "Original Ground Truth")
        turns = tuple(Turn("AB"[j % 2], t) for j, t in enumerate(item["context"].strip().split("\n")))
        examples.append(Example(id=f"tc-{i}", group_id=f"tc-{i}", context=turns, candidate=reference,
                                references=(reference,), fact=item["fact"], is_reference=True))
    tagged = tag_dataset(Dataset("usr", examples))
    assert all(ex.ended in ("open", "closed") and ex.extra["closedness"] for ex in tagged)
    closed = [ex for ex in tagged if ex.ended == "closed"]
    for ex in closed:
        shared = shared_facts(ex.fact, ex.candidate)
        assert shared, ex.extra["closedness"]
    # Paper 000 hand-labels all 60 Topical-Chat contexts open; the heuristic only calls
    # closed the few whose reply repeats a number or date of the knowledge (measured 9).
    assert len(closed) <= 15
