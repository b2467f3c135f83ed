"""chrF++'s two n-gram paths (int64 codes for Latin-1 texts, order-by-order string ladders for
the rest) give sacrebleu's statistics and scores exactly, whatever order pairs come in.

Every check is against sacrebleu itself: its n-gram extraction and ``_get_match_statistics``
for the per-order integers, ``sentence_chrf`` for the score, compared with ``==``.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
import sacrebleu
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import CHRF
from sacrebleu.metrics.helpers import extract_all_char_ngrams, extract_word_ngrams

from dialjudge.core.metrics.char_codes import BASE, MAX_ORDER, CodedGrams, is_latin1
from dialjudge.core.metrics.engine import MetricEngine, ScoringContext
from dialjudge.core.metrics.families.chrf import ChrfScorer, ChrfText, matches
from dialjudge.core.metrics.wordnet import NoSynonyms

AWKWARD = [
    "", " ", "\t\n ", "a", "aa", "?!.,;:", "(hi) there.", "Hello, world!", "hello world",
    "the the the the the", "abababababab", "x" * 300, "café crème, s'il vous plaît", "ÿÿÿ \x00\x01 ±",
    "emoji 🙂🙂 and 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 text", "🙂", "你好，世界！今天天气怎么样？", "哈哈哈哈哈哈哈哈",
    "我看了《我是山姆》，2001年的电影 café", "A cat sat on the mat. A cat sat on the mat.",
]


def long_text(rng: random.Random, words: int, vocabulary: str) -> str:
    return " ".join(rng.choice(vocabulary.split()) for _ in range(words))


def texts() -> list[str]:
    rng = random.Random(11)
    return AWKWARD + [
        long_text(rng, 2000, "the cat sat on a mat and then ran away, quickly. (again)"),  # counts in the 100s
        long_text(rng, 40, "the cat sat on a mat"),
        long_text(rng, 300, "我 你 他 的 了 电影 音乐 好看，"),
        long_text(rng, 60, "café thé crème brûlée à la carte"),
    ]


def sacrebleu_stats(chrf: CHRF, hypothesis: str, reference: str) -> list[int]:
    """sacrebleu's [hyp, ref, match] per order (characters, then words) for one reference."""
    return chrf._compute_segment_statistics(hypothesis, chrf._extract_reference_info([reference]))


def engine_stats(scorer: ChrfScorer, hypothesis: str, reference: str) -> tuple[list[int], list[int], list[int]]:
    hyp, ref = scorer._grams(hypothesis), scorer._grams(reference)
    return hyp.totals, ref.totals, matches(hyp, ref)


@pytest.mark.parametrize("seed", range(3))
def test_per_order_matches_and_totals_equal_sacrebleus_in_any_order_of_pairs(seed: int) -> None:
    """One scorer across all pairs, in a shuffled order: a text's ladder is grown by whichever
    pair gets furthest first, and later pairs must read it right from any state."""
    chrf = CHRF(word_order=2)
    scorer = ChrfScorer(("chrf++",), ScoringContext())
    pool = texts()
    pairs = [(a, b) for a in pool for b in pool]
    random.Random(seed).shuffle(pairs)
    for hypothesis, reference in pairs:
        stats = sacrebleu_stats(chrf, hypothesis, reference)
        hyp_totals, ref_totals, matched = engine_stats(scorer, hypothesis, reference)
        assert matched == stats[2::3], (hypothesis[:30], reference[:30])
        assert ref_totals == stats[1::3]
        # sacrebleu counts the hypothesis total only where the reference has n-grams of that order.
        assert [h if r else 0 for h, r in zip(hyp_totals, ref_totals)] == stats[0::3]


def test_a_text_first_cut_short_is_grown_to_full_depth_by_a_later_pair() -> None:
    scorer = ChrfScorer(("chrf++",), ScoringContext())
    chrf = CHRF(word_order=2)
    # The partners are not Latin-1, so each pair goes through the string ladders.
    for text in ("abcdefgh ijk", "我看了这部电影很好看"):
        assert engine_stats(scorer, text, "xyz 🙂")[2] == [0] * 8  # nothing shared: every order stops at 1
        assert len(scorer._grams(text).chars.keys) == 1
        partner = text + " 🙂"
        _, _, matched = engine_stats(scorer, text, partner)
        assert matched == sacrebleu_stats(chrf, text, partner)[2::3]
        assert all(matched[:6])  # every character order shared
        assert len(scorer._grams(text).chars.keys) == 6


def test_latin1_texts_are_coded_and_others_are_not() -> None:
    scorer = ChrfScorer(("chrf++",), ScoringContext())
    assert scorer._grams("café crème").coded is not None
    assert scorer._grams("the cat").coded is not None
    assert scorer._grams("").coded is not None
    assert scorer._grams("你好").coded is None
    assert scorer._grams("emoji 🙂").coded is None
    assert is_latin1("ÿ") and not is_latin1("Ā")


def decode(code: int) -> str:
    """A code back to its n-gram: base-257 digits 1-256, each a Latin-1 byte plus one."""
    digits = []
    while code:
        code, digit = divmod(code, BASE)
        digits.append(digit - 1)
    return bytes(reversed(digits)).decode("latin-1")


@pytest.mark.parametrize("text", [t for t in texts() if is_latin1("".join(t.split()))])
def test_codes_are_sacrebleus_character_ngrams_one_to_one_and_grouped_by_order(text: str) -> None:
    line = "".join(text.split())
    coded = CodedGrams(line, 6)
    expected = extract_all_char_ngrams(text, 6, False)
    decoded = [decode(int(code)) for code in coded.codes]
    assert len(set(decoded)) == len(decoded)
    assert [Counter({g: int(c) for g, c, o in zip(decoded, coded.counts, coded.orders) if o == n})
            for n in range(6)] == expected
    assert all(len(gram) == order + 1 for gram, order in zip(decoded, coded.orders))
    assert list(coded.orders) == sorted(coded.orders)  # sorted codes come grouped by order


def test_codes_refuse_orders_an_int64_cannot_hold() -> None:
    assert len(CodedGrams("abcdefgh", MAX_ORDER).codes) == 8 + 7 + 6 + 5 + 4 + 3 + 2
    with pytest.raises(ValueError, match="int64"):
        CodedGrams("abcdefgh", MAX_ORDER + 1)


def test_a_latin1_text_against_a_chinese_one_uses_the_strings_of_both() -> None:
    scorer = ChrfScorer(("chrf++",), ScoringContext())
    chrf = CHRF(word_order=2)
    for hypothesis, reference in [("café 2001 ok", "我看了 2001 café"), ("我看了 2001 café", "café 2001 ok")]:
        assert engine_stats(scorer, hypothesis, reference)[2] == sacrebleu_stats(chrf, hypothesis, reference)[2::3]
    assert scorer._grams("café 2001 ok").chars.keys  # the coded text built its string ladder too


def test_word_ngrams_are_sacrebleus() -> None:
    chrf = CHRF(word_order=2)
    words = chrf._remove_punctuation("the cat, the cat (sat) on the mat.")
    text = ChrfText("".join(words), words, 6, 2)
    for n in (1, 2):
        text.words.grow()
        counts = text.words.counts[n - 1] or dict.fromkeys(text.words.keys[n - 1], 1)
        assert Counter(counts) == extract_word_ngrams(words, n)


@pytest.mark.parametrize("chinese", [False, True], ids=["as-english", "as-chinese"])
def test_engine_equals_sentence_chrf_on_awkward_texts_with_several_references(chinese: bool) -> None:
    engine = MetricEngine(["chrf++"], wordnet=NoSynonyms())
    pool = texts()
    rng = random.Random(5)
    cases = [(c, [r]) for c in pool for r in pool[::2]] + [(rng.choice(pool), rng.sample(pool, 3)) for _ in range(60)]
    for candidate, refs in cases:
        expected = sacrebleu.sentence_chrf(candidate, refs, word_order=2).score / 100
        assert engine.score(candidate, refs, chinese)["chrf++"] == min(1.0, max(0.0, expected)), (candidate[:30], refs)


_CHARS = st.sampled_from(list("aab bc.,!?()'-éÿ你好好 \t🙂"))
_TEXT = st.lists(_CHARS, max_size=40).map("".join)


@settings(max_examples=150, deadline=None, derandomize=True, database=None)
@given(st.lists(_TEXT, min_size=2, max_size=6))
def test_scores_equal_sentence_chrf_for_random_texts_scored_by_one_engine(pool: list[str]) -> None:
    engine = MetricEngine(["chrf++"], wordnet=NoSynonyms())
    for candidate in pool:
        for reference in pool:
            if reference.strip():
                expected = sacrebleu.sentence_chrf(candidate, [reference], word_order=2).score / 100
                assert engine.score(candidate, [reference])["chrf++"] == min(1.0, max(0.0, expected))
