"""The engine's counted n-gram paths (BLEU, ROUGE-N, chrF++) give the libraries' numbers to the last bit.

Every comparison is ``==`` on floats: the engine computes the same integers and the same
arithmetic as sacrebleu and rouge-score, so nothing may differ. The texts are the awkward
ones: empty and blank, punctuation only, Chinese, mixed scripts, repeated n-grams, several
references, and very long texts.
"""

from __future__ import annotations

import gc
import math
import random
from collections import Counter

import pytest
import sacrebleu
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU, CHRF

from dialjudge.core.gc_pause import gc_paused
from dialjudge.core.metrics.batch import score_examples
from dialjudge.core.metrics.engine import MetricEngine
from dialjudge.core.metrics.families.bleu import bleu_scores
from dialjudge.core.metrics.families.chrf import f_score
from dialjudge.core.metrics.language import is_chinese
from dialjudge.core.metrics.multiset import Bag, largest, ngrams, overlap
from dialjudge.core.metrics.tokenize import ChineseCharTokenizer
from dialjudge.core.metrics.wordnet import NoSynonyms
from dialjudge.core.model import Example

ENGLISH = [
    "", " ", "a", "the the the the the", "Hello, world!", "  spaced   out  text ", "(hi) there.", "?!.,;:",
    "don't stop-believing ... ok", "I saw it in 2001, then again in 2001!", "emoji 🙂🙂 and tabs\tand\nnewlines",
    "A cat sat on the mat. A cat sat on the mat.", "running runs ran runner", "x" * 300,
]
CHINESE = [
    "", "你好", "你好，世界！今天天气怎么样？", "我很喜欢这部电影，这部电影很好看。", "哈哈哈哈哈哈哈哈",
    "我看了《我是山姆》，2001年的电影。", "周杰伦的歌我都喜欢听，周杰伦的新歌也好听。", "？！。，",
]


def long_text(rng: random.Random, words: int) -> str:
    vocabulary = ["the", "cat", "sat", "on", "a", "mat", "and", "then", "it", "ran", "away,", "quickly.", "(again)"]
    return " ".join(rng.choice(vocabulary) for _ in range(words))


def long_chinese(rng: random.Random, chars: int) -> str:
    return "".join(rng.choice("我你他的了是在有这个电影音乐很好看听，。！") for _ in range(chars))


def english_cases() -> list[tuple[str, list[str]]]:
    rng = random.Random(7)
    texts = ENGLISH + [long_text(rng, 600), long_text(rng, 40)]
    cases = [(candidate, [reference]) for candidate in texts for reference in texts[::3]]
    cases += [(rng.choice(texts), rng.sample(texts, 3)) for _ in range(30)]  # several references
    return cases


def chinese_cases() -> list[tuple[str, list[str]]]:
    rng = random.Random(8)
    texts = CHINESE + [long_chinese(rng, 1500), long_chinese(rng, 30)]
    cases = [(candidate, [reference]) for candidate in texts for reference in texts]
    cases += [(rng.choice(texts), rng.sample(texts, 3)) for _ in range(20)]
    return cases


def clamped(value: float) -> float:
    return min(1.0, max(0.0, value))


# --- the multiset helpers against Counter -------------------------------------------------

@pytest.mark.parametrize("seed", range(20))
def test_bag_overlap_and_largest_equal_counter_arithmetic(seed: int) -> None:
    rng = random.Random(seed)
    lists = [[rng.choice("abcab") for _ in range(rng.randint(0, 12))] for _ in range(3)]
    bags = [Bag.of(grams) for grams in lists]
    counters = [Counter(grams) for grams in lists]
    assert overlap(bags[0], bags[1]) == sum((counters[0] & counters[1]).values())
    pooled = largest(bags)
    assert pooled.counts == dict(counters[0] | counters[1] | counters[2])
    assert pooled.total == sum((counters[0] | counters[1] | counters[2]).values())


def test_ngrams_are_sacrebleus_joined_word_ngrams() -> None:
    tokens = ["a", "b", "a", "b", "c"]
    assert ngrams(tokens, 1) == tokens
    assert ngrams(tokens, 2) == ["a b", "b a", "a b", "b c"]
    assert ngrams(tokens, 3) == ["a b a", "b a b", "a b c"]
    assert ngrams(tokens, 6) == []


# --- BLEU ---------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_bleu_scores_equal_sacrebleus_compute_bleu(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(400):
        sys_len = rng.randint(0, 12)
        total = [max(0, sys_len - n) for n in range(4)]
        correct = [rng.randint(0, t) for t in total]
        ref_len = rng.randint(0, 15)
        got = bleu_scores(correct, total, sys_len, ref_len, [1, 2, 3, 4])
        for n, value in zip((1, 2, 3, 4), got):
            expected = BLEU.compute_bleu(correct[:n], total[:n], sys_len, ref_len, smooth_method="exp",
                                         effective_order=True, max_ngram_order=n).score
            assert value == expected, (correct, total, sys_len, ref_len, n)


@pytest.mark.parametrize("chinese", [False, True], ids=["english", "chinese"])
def test_bleu_equals_sacrebleu_on_awkward_texts(chinese: bool) -> None:
    engine = MetricEngine(["bleu1", "bleu2", "bleu3", "bleu4"], wordnet=NoSynonyms())
    tokenize = "zh" if chinese else "13a"
    bleus = {n: BLEU(max_ngram_order=n, effective_order=True, tokenize=tokenize) for n in (1, 2, 3)}
    for candidate, refs in chinese_cases() if chinese else english_cases():
        got = engine.score(candidate, refs, chinese)
        expected = {f"bleu{n}": bleu.sentence_score(candidate, refs).score / 100 for n, bleu in bleus.items()}
        expected["bleu4"] = sacrebleu.sentence_bleu(candidate, refs, tokenize=tokenize).score / 100
        assert got == {k: clamped(v) for k, v in expected.items()}, (candidate[:40], refs)


# --- ROUGE --------------------------------------------------------------------------------

@pytest.mark.parametrize("chinese", [False, True], ids=["english", "chinese"])
def test_rouge_equals_rouge_score_on_awkward_texts(chinese: bool) -> None:
    types = ["rouge1", "rouge2", "rougeL"]
    scorer = (rouge_scorer.RougeScorer(types, tokenizer=ChineseCharTokenizer()) if chinese
              else rouge_scorer.RougeScorer(types, use_stemmer=True))
    engine = MetricEngine(types, wordnet=NoSynonyms())
    for candidate, refs in chinese_cases() if chinese else english_cases():
        best = scorer.score_multi(refs, candidate)
        assert engine.score(candidate, refs, chinese) == {k: clamped(best[k].fmeasure) for k in types}, \
            (candidate[:40], refs)


# --- chrF++ -------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(5))
def test_f_score_equals_sacrebleus_compute_f_score(seed: int) -> None:
    rng = random.Random(seed)
    chrf = CHRF(word_order=2)
    for _ in range(400):
        hyp = [rng.choice([0, 0, 1, 3, 20]) for _ in range(8)]
        ref = [rng.choice([0, 1, 3, 20]) for _ in range(8)]
        matched = [rng.randint(0, min(h, r)) for h, r in zip(hyp, ref)]
        stats = [v for h, r, m in zip(hyp, ref, matched) for v in (h if r else 0, r, m)]
        assert f_score(hyp, ref, matched, chrf.beta) == chrf._compute_f_score(stats)


@pytest.mark.parametrize("chinese", [False, True], ids=["english", "chinese"])
def test_chrf_equals_sentence_chrf_on_awkward_texts(chinese: bool) -> None:
    engine = MetricEngine(["chrf++"], wordnet=NoSynonyms())
    for candidate, refs in chinese_cases() if chinese else english_cases():
        expected = sacrebleu.sentence_chrf(candidate, refs, word_order=2).score / 100
        assert engine.score(candidate, refs, chinese)["chrf++"] == clamped(expected), (candidate[:40], refs)


# --- the batch path -----------------------------------------------------------------------

def test_gc_paused_restores_the_collectors_state() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # a caller that had paused it keeps it paused
    finally:
        gc.enable()


def test_score_examples_leaves_the_collector_on_and_scores_like_the_engine() -> None:
    rng = random.Random(3)
    texts = [long_text(rng, rng.randint(1, 60)) for _ in range(30)] + CHINESE[1:]
    examples = [Example(id=f"e{i}", group_id="g", context=(), candidate=texts[i],
                        references=(texts[(i + 1) % len(texts)],)) for i in range(len(texts))]
    wanted = ["bleu1", "bleu4", "rouge1", "rouge2", "rougeL", "chrf++"]  # METEOR: tests/core/test_metrics.py
    scores = score_examples(examples, wanted, workers=1)
    assert gc.isenabled()
    engine = MetricEngine(wanted, wordnet=NoSynonyms())
    for ex in examples:
        expected = engine.score(ex.candidate, ex.references, is_chinese(ex.language, (ex.candidate, *ex.references)))
        got = {m: scores[m][ex.id] for m in expected}
        assert got == expected and all(math.isfinite(v) for v in got.values()), ex.id


def test_bleu_and_meteor_share_tokenizations_without_mixing_them_up() -> None:
    """BLEU tokenizes the right-stripped text, METEOR the stripped one; with leading blanks they
    differ, and one engine scoring both must still give each library's own number."""
    from nltk.translate.meteor_score import meteor_score

    from dialjudge.core.metrics.tokenize import meteor_tokens

    engine = MetricEngine(["bleu4", "meteor"], wordnet=NoSynonyms())
    before = engine.cache_size()
    for candidate, refs in [("  the cat sat  ", ["  a cat sat on the mat"]), ("\tHello , world!", ["hello world !  "])]:
        got = engine.score(candidate, refs)
        assert got["bleu4"] == clamped(sacrebleu.sentence_bleu(candidate, refs).score / 100)
        assert got["meteor"] == meteor_score([meteor_tokens(r) for r in refs], meteor_tokens(candidate),
                                             wordnet=NoSynonyms())
    assert engine.cache_size() > before  # the shared tokenizations count among what the engine remembers
