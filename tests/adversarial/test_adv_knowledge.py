"""Knowledge swaps (KdConv-ADV): another value of the same attribute, on Chinese text."""

from __future__ import annotations

import random

from dialjudge.core.adversarial.knowledge import KnowledgePools, Triple, realised_triples, swap_knowledge
from dialjudge.core.loaders.kdconv import read_kdconv_json
from shared_data import require_file

FILM = "我是山姆"
TRIPLES = [
    Triple(FILM, "上映时间", "2001年12月28日"),
    Triple("阿甘正传", "上映时间", "1994年7月6日"),
    Triple("某电影", "上映时间", "2010年"),
    Triple(FILM, "类型", "家庭"),
    Triple(FILM, "类型", "亲情"),
    Triple("阿甘正传", "类型", "剧情"),
    Triple("宫崎骏", "出生地", "日本东京"),
    Triple("张国荣", "出生地", "香港"),
    Triple("周润发", "出生地", "中国香港"),
    Triple(FILM, "Information", "《我是山姆》是由杰茜·尼尔森执导的剧情片。"),
]
POOLS = KnowledgePools.from_triples(TRIPLES)


def _swap(text: str, triples: list[Triple], seed: int = 1, pools: KnowledgePools = POOLS):
    return swap_knowledge(text, triples, pools, rng=random.Random(seed), alternatives=3)


def test_date_is_swapped_for_a_same_shaped_value_of_the_same_attribute() -> None:
    text = "是的，它是2001年12月28日上映的，很感人的电影。"
    proposals = _swap(text, [TRIPLES[0]])
    # "2010年" is a release date too, but "1994年7月6日" is written like the original.
    assert [e.text for e in proposals.edits] == ["是的，它是1994年7月6日上映的，很感人的电影。"]
    edit = proposals.edits[0]
    assert edit.kind == "knowledge"
    assert text[edit.start:edit.end] == edit.original_span == "2001年12月28日"
    assert edit.perturbation("film-0-1").replacement == "1994年7月6日"


def test_values_the_entity_also_has_do_not_count_as_contradictions() -> None:
    proposals = _swap("是一部很好看的家庭剧。", [TRIPLES[3]])
    assert [e.replacement for e in proposals.edits] == ["剧情"]  # never "亲情", also true


def test_values_nested_in_each_other_are_not_swapped_in() -> None:
    proposals = _swap("张国荣出生在香港。", [TRIPLES[7]])
    assert [e.replacement for e in proposals.edits] == ["日本东京"]  # not "中国香港"


def test_every_occurrence_is_replaced() -> None:
    text = "他是日本东京人，日本东京很美。"
    edit = _swap(text, [TRIPLES[6]]).edits[0]
    assert edit.original_span not in edit.text
    assert edit.text.count(edit.replacement) == 2


def test_skip_reasons() -> None:
    assert _swap("你好", []).skip_reason == "no knowledge triples"
    assert "free-text" in _swap("剧情片", [TRIPLES[9]]).skip_reason
    assert _swap("这部电影很好看", [TRIPLES[0]]).skip_reason == "no attribute value appears in the reply"
    lonely = KnowledgePools.from_triples([Triple("X", "身高", "180cm")])
    proposals = _swap("他身高180cm。", [Triple("X", "身高", "180cm")], pools=lonely)
    assert proposals.skip_reason == "no other value of the same attribute to swap in"


def test_realised_triples_prefer_the_longer_value() -> None:
    triples = [Triple("a", "主要成就", "最佳男演员"), Triple("a", "主要成就", "威尼斯国际电影节最佳男演员")]
    realised = realised_triples("他获得威尼斯国际电影节最佳男演员。", triples)
    assert [t.attrvalue for t in realised] == ["威尼斯国际电影节最佳男演员"]


def test_same_seed_same_swaps() -> None:
    text = "宫崎骏是日本东京人，作品2001年12月28日上映。"
    triples = [TRIPLES[0], TRIPLES[6]]
    assert _swap(text, triples, seed=3) == _swap(text, triples, seed=3)


def test_real_kdconv_film(shared_data) -> None:
    dialogues = read_kdconv_json(require_file(shared_data, "kdconv/film/test.json"))
    pools = KnowledgePools.from_dialogues(dialogues)
    assert "Information" not in pools.values  # free text never enters a pool
    swapped = 0
    for d, dialogue in enumerate(dialogues):
        for t, message in enumerate(dialogue["messages"]):
            triples = [Triple.from_mapping(a) for a in message.get("attrs", [])]
            if not triples:
                continue
            text = message["message"]
            proposals = swap_knowledge(text, triples, pools, rng=random.Random(f"{d}-{t}"))
            if not proposals.applies:
                assert proposals.skip_reason
                continue
            swapped += 1
            for edit in proposals.edits:
                # One value may fill two attributes (director and writer): any may be the source.
                sources = [tr for tr in triples if tr.attrvalue == edit.original_span]
                assert any(edit.replacement in pools.values[tr.attrname]
                           and edit.replacement not in pools.entity_values[(tr.name, tr.attrname)]
                           for tr in sources)
                assert text[edit.start:edit.end] == edit.original_span
                assert edit.replacement in edit.text and edit.text != text
    assert swapped >= 1500  # measured 1,650 of 2,859 grounded replies
