"""The engine's fast paths give exactly what the libraries give (never timings)."""

from __future__ import annotations

import random
from collections import Counter

import pytest
import sacrebleu
from sacrebleu.metrics.helpers import extract_all_char_ngrams

from dialjudge.core.metrics.engine import MetricEngine
from dialjudge.core.metrics.families.chrf import char_ngrams
from dialjudge.core.metrics.wordnet import NoSynonyms

TEXTS = [
    "", "a", "ab", "Hello, world!", "  spaced   out  text ", "(hi) there.", "x" * 40,
    "你好，世界！今天天气怎么样？", "I saw 《我是山姆》 in 2001.", "emoji 🙂🙂 and tabs\tand\nnewlines",
    "the the the the cat", "?!.,", "don't stop-believing ... ok",
]


def random_texts(n: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    alphabet = "aab c.,!?()'-你好世界 \t"
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(n)]


@pytest.mark.parametrize("text", TEXTS + random_texts(40))
def test_char_ngrams_equal_sacrebleu(text: str) -> None:
    line = "".join(text.split())
    assert [Counter(grams) for grams in char_ngrams(line, 6)] == extract_all_char_ngrams(text, 6, False)


def test_chrf_plus_plus_equals_sentence_chrf_on_awkward_texts() -> None:
    engine = MetricEngine(["chrf++"], wordnet=NoSynonyms())
    texts = TEXTS + random_texts(30, seed=1)
    rng = random.Random(2)
    for candidate in texts:
        refs = [r for r in rng.sample(texts, 3) if r.strip()] or ["a"]
        expected = sacrebleu.sentence_chrf(candidate, refs, word_order=2).score / 100
        assert engine.score(candidate, refs)["chrf++"] == min(1.0, max(0.0, expected)), (candidate, refs)


def test_a_repeated_pair_gets_the_same_scores_and_its_own_dict() -> None:
    engine = MetricEngine(None, wordnet=NoSynonyms())
    fresh = MetricEngine(None, wordnet=NoSynonyms())
    first = engine.score("the cat sat on the mat", ["a cat sat on a mat"])
    first["bleu4"] = -1.0  # a caller changing its copy must not change the remembered scores
    again = engine.score("the cat sat on the mat", ["a cat sat on a mat"])
    assert again == fresh.score("the cat sat on the mat", ["a cat sat on a mat"])
    assert again["bleu4"] != -1.0
    # The language is part of the key: the same texts tokenized per character score differently.
    assert engine.score("ab cd", ["ab ce"], chinese=True) == fresh.score("ab cd", ["ab ce"], chinese=True)


def test_every_metric_equals_the_per_call_libraries_on_usr_and_kdconv(shared_data) -> None:
    """USR Topical-Chat pairs (English) and KdConv pairs (Chinese), METEOR without synonyms
    so that the test runs where WordNet is absent; the WordNet variant is covered in test_metrics."""
    import json

    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    from dialjudge.core.loaders.usr import read_usr
    from dialjudge.core.metrics.tokenize import ChineseCharTokenizer
    from dialjudge.core.model import Example
    from shared_data import require_file

    usr = [ex for ex in read_usr(require_file(shared_data, "usr/usr_topical_chat.json")).examples
           if not ex.is_reference][:120]
    dialogues = json.loads(require_file(shared_data, "kdconv/film/test.json").read_text(encoding="utf-8"))[:6]
    chinese = [Example(id=f"kd{d}-{j}", group_id=f"kd{d}", context=(), candidate=m[j + 2], references=(m[j],),
                       language="zh")
               for d, m in enumerate([msg["message"] for msg in dialogue["messages"]] for dialogue in dialogues)
               for j in range(len(m) - 2)]
    examples = usr + chinese + usr[:20]  # some pairs twice: the remembered scores must be the same
    rouge_types = ["rouge1", "rouge2", "rougeL"]
    rouge = {False: rouge_scorer.RougeScorer(rouge_types, use_stemmer=True),
             True: rouge_scorer.RougeScorer(rouge_types, tokenizer=ChineseCharTokenizer())}
    words = {False: Tokenizer13a(), True: TokenizerZh()}
    engine = MetricEngine(None, wordnet=NoSynonyms())
    for ex in examples:
        chinese_pair = ex.language == "zh"
        refs = list(ex.references)
        tokenize = "zh" if chinese_pair else "13a"
        expected = {f"bleu{n}": BLEU(max_ngram_order=n, effective_order=True, tokenize=tokenize)
                    .sentence_score(ex.candidate, refs).score / 100 for n in (1, 2, 3, 4)}
        best = rouge[chinese_pair].score_multi(refs, ex.candidate)
        expected.update({k: best[k].fmeasure for k in rouge_types})
        split = words[chinese_pair]
        expected["meteor"] = meteor_score([split(r.strip()).split() for r in refs],
                                          split(ex.candidate.strip()).split(), wordnet=NoSynonyms())
        expected["chrf++"] = sacrebleu.sentence_chrf(ex.candidate, refs, word_order=2).score / 100
        got = engine.score(ex.candidate, refs, chinese_pair)
        assert got == {metric: min(1.0, max(0.0, value)) for metric, value in expected.items()}, ex.id


@pytest.mark.parametrize("workers", [1, 2])
def test_repeated_pairs_are_scored_once_and_given_to_every_example(workers: int) -> None:
    from dialjudge.core.metrics.batch import score_examples
    from dialjudge.core.model import Example

    texts = [("the cat sat on the mat", "a cat sat on a mat"), ("hello there", "hi there"), ("你好世界", "你好")]
    examples = [Example(id=f"e{i}", group_id=f"g{i % 3}", context=(), candidate=texts[i % 3][0],
                        references=(texts[i % 3][1],)) for i in range(12)]
    seen: list[tuple[int, int]] = []
    scores = score_examples(examples, ["bleu4", "chrf++", "rougeL"], workers=workers,
                            progress=lambda done, total: seen.append((done, total)))
    engine = MetricEngine(["bleu4", "chrf++", "rougeL"], wordnet=NoSynonyms())
    for ex in examples:
        expected = engine.score(ex.candidate, ex.references, chinese=ex.id in {"e2", "e5", "e8", "e11"})
        assert {m: scores[m][ex.id] for m in expected} == expected, ex.id
    assert list(scores["bleu4"]) == [ex.id for ex in examples]
    assert seen[-1] == (12, 12) and [d for d, _ in seen] == sorted(d for d, _ in seen)
