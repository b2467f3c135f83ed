"""Reference-based metrics: equal to the libraries called directly, on real USR pairs."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import nltk
import pytest
import sacrebleu
from nltk.translate.meteor_score import meteor_score
from rouge_score import rouge_scorer
from sacrebleu.metrics import BLEU, CHRF

from dialjudge.core.errors import ConfigError
from dialjudge.core.metrics import (
    SkipReason,
    available_metrics,
    metric_ids,
    metric_info,
    score_examples,
    score_pair,
)
from dialjudge.core.metrics import wordnet as wn
from dialjudge.core.metrics.engine import MetricEngine
from dialjudge.core.metrics.families.rouge import lcs_length
from dialjudge.core.metrics.language import han_ratio, is_chinese, is_chinese_code
from dialjudge.core.metrics.tokenize import ChineseCharTokenizer, meteor_tokens
from dialjudge.core.model import Example, Level
from shared_data import require_file

METRIC_IDS = metric_ids()

TOLERANCE = 1e-9
GROUND_TRUTH = "Original Ground Truth"
ROUGE_TYPES = ["rouge1", "rouge2", "rougeL"]


@pytest.fixture(scope="module", autouse=True)
def private_wordnet_cache(tmp_path_factory: pytest.TempPathFactory):
    """WordNet is found as in real use, but a Debian copy goes to a temporary cache."""
    cache = tmp_path_factory.mktemp("cache") / "dialjudge" / "nltk_data"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(nltk.data, "path", list(nltk.data.path))
        mp.setattr(wn, "cache_nltk_root", lambda: cache)
        wn.reset_wordnet_state()
        yield cache
    wn.reset_wordnet_state()


@pytest.fixture(scope="module")
def wordnet_reader(private_wordnet_cache: Path):
    """NLTK's own WordNet reader (the engine reads the compact index); skips where WordNet is absent."""
    reader = wn.load_wordnet()
    if reader is None:
        pytest.skip("no WordNet: neither NLTK data nor Debian's wordnet-base is installed")
    return reader


@pytest.fixture(scope="module")
def available_wordnet(private_wordnet_cache: Path):
    """What the library reference computes METEOR with: NLTK's WordNet where it exists, else no
    synonyms, so that the comparisons hold for the variant this machine has."""
    reader = wn.load_wordnet()
    return reader if reader is not None else wn.NoSynonyms()


def usr_examples(path: Path) -> list[Example]:
    """USR contexts as Examples through the project's loader: each response against its context's ground truth."""
    from dialjudge.core.loaders.usr import read_usr

    return read_usr(path).examples


@pytest.fixture(scope="module")
def topical_chat(shared_data: Path) -> list[Example]:
    return usr_examples(require_file(shared_data, "usr/usr_topical_chat.json"))


@pytest.fixture(scope="module")
def topical_scores(topical_chat, available_wordnet):
    return score_examples(topical_chat)


def scored(examples: list[Example]) -> list[Example]:
    return [ex for ex in examples if not ex.is_reference]


def library_scores(candidate: str, refs: list[str], *, wordnet, chinese: bool = False) -> dict[str, float]:
    """Each metric straight from its library, one call per metric.

    ``wordnet`` is required: left out, NLTK's METEOR reads its global WordNet, which raises
    LookupError on a machine without NLTK's data (see the ``available_wordnet`` fixture)."""
    tokenizer = "zh" if chinese else "13a"
    out = {
        f"bleu{n}": BLEU(tokenize=tokenizer, max_ngram_order=n, effective_order=True,
                         smooth_method="exp").sentence_score(candidate, refs).score / 100
        for n in (1, 2, 3, 4)
    }
    scorer = (rouge_scorer.RougeScorer(ROUGE_TYPES, tokenizer=ChineseCharTokenizer()) if chinese
              else rouge_scorer.RougeScorer(ROUGE_TYPES, use_stemmer=True))
    best = scorer.score_multi(refs, candidate)
    out.update({k: best[k].fmeasure for k in ROUGE_TYPES})
    out["meteor"] = meteor_score([meteor_tokens(r, chinese) for r in refs],
                                 meteor_tokens(candidate, chinese), wordnet=wordnet)
    out["chrf++"] = CHRF(word_order=2).sentence_score(candidate, refs).score / 100
    return out


# --- the engine path against the libraries, on every USR Topical-Chat pair ----------------

def test_usr_scores_every_reply_but_the_reference(topical_chat, topical_scores):
    assert topical_scores.n_scored == 300
    assert topical_scores.skip_counts == {SkipReason.REFERENCE_ITSELF: 60}
    ground_truth_ids = {ex.id for ex in topical_chat if ex.is_reference}
    assert set(topical_scores.skipped[SkipReason.REFERENCE_ITSELF]) == ground_truth_ids
    for metric_id in METRIC_IDS:
        assert set(topical_scores[metric_id]) == {ex.id for ex in scored(topical_chat)}


@pytest.mark.parametrize("n", [1, 2, 3, 4])
def test_bleu_equals_sacrebleu(topical_chat, topical_scores, n):
    bleu = BLEU(max_ngram_order=n, effective_order=True, smooth_method="exp")
    for ex in scored(topical_chat):
        expected = bleu.sentence_score(ex.candidate, list(ex.references)).score / 100
        assert topical_scores[f"bleu{n}"][ex.id] == pytest.approx(expected, abs=TOLERANCE)
    assert len(set(topical_scores[f"bleu{n}"].values())) > 50


def test_bleu4_equals_sentence_bleu(topical_chat, topical_scores):
    for ex in scored(topical_chat):
        expected = sacrebleu.sentence_bleu(ex.candidate, list(ex.references)).score / 100
        assert topical_scores["bleu4"][ex.id] == pytest.approx(expected, abs=TOLERANCE)


def test_rouge_equals_rouge_score(topical_chat, topical_scores):
    scorer = rouge_scorer.RougeScorer(ROUGE_TYPES, use_stemmer=True)
    for ex in scored(topical_chat):
        expected = scorer.score(ex.references[0], ex.candidate)
        for rouge_type in ROUGE_TYPES:
            assert topical_scores[rouge_type][ex.id] == pytest.approx(
                expected[rouge_type].fmeasure, abs=TOLERANCE)


def test_chrf_plus_plus_equals_sacrebleu(topical_chat, topical_scores):
    chrf = CHRF(word_order=2)
    for ex in scored(topical_chat):
        expected = chrf.sentence_score(ex.candidate, list(ex.references)).score / 100
        assert topical_scores["chrf++"][ex.id] == pytest.approx(expected, abs=TOLERANCE)


def test_meteor_equals_nltk_with_wordnet(topical_chat, topical_scores, wordnet_reader):
    for ex in scored(topical_chat):
        expected = meteor_score([meteor_tokens(ex.references[0])], meteor_tokens(ex.candidate), wordnet=wordnet_reader)
        assert topical_scores["meteor"][ex.id] == pytest.approx(expected, abs=TOLERANCE)
    assert topical_scores.info("meteor").label == "METEOR"
    assert topical_scores.notes == []


def test_every_score_is_on_0_1(topical_scores):
    for metric_id in METRIC_IDS:
        values = list(topical_scores[metric_id].values())
        assert all(0.0 <= v <= 1.0 for v in values), metric_id
        assert max(values) > 0.0, metric_id


def test_wordnet_is_found_and_matches_synonyms(wordnet_reader, private_wordnet_cache):
    location = wn.locate_wordnet()
    assert location is not None
    if location.origin == "debian copy":
        assert Path(location.path) == private_wordnet_cache / "corpora" / "wordnet"
    lemma_names = {lemma.name() for s in wordnet_reader.synsets("big") for lemma in s.lemmas()}
    assert "large" in lemma_names
    # NLTK looks synonyms up for the Porter stems of unmatched words, so the
    # example needs words that are their own stems: car -> auto.
    with_synonyms = score_pair("the car is red", ["the auto is red"], metric_ids=["meteor"])
    without = meteor_score([["the", "auto", "is", "red"]], ["the", "car", "is", "red"],
                           wordnet=wn.NoSynonyms())
    assert with_synonyms["meteor"] > without


# --- several references -----------------------------------------------------------------

@pytest.fixture(scope="module")
def multi_reference_examples(topical_chat) -> list[Example]:
    """Each machine reply against both human replies of its context."""
    by_group: dict[str, list[Example]] = {}
    for ex in topical_chat:
        by_group.setdefault(ex.group_id, []).append(ex)
    out = []
    for group in list(by_group.values())[:20]:
        humans = tuple(ex.candidate for ex in group if ex.system in (GROUND_TRUTH, "New Human Generated"))
        for ex in group:
            if ex.system not in (GROUND_TRUTH, "New Human Generated"):
                out.append(Example(id=ex.id, group_id=ex.group_id, context=(),
                                   candidate=ex.candidate, references=humans))
    return out


def test_multi_reference_equals_libraries(multi_reference_examples, available_wordnet):
    result = score_examples(multi_reference_examples)
    assert result.n_scored == len(multi_reference_examples) == 80
    for ex in multi_reference_examples:
        assert len(ex.references) == 2
        expected = library_scores(ex.candidate, list(ex.references), wordnet=available_wordnet)
        for metric_id in METRIC_IDS:
            assert result[metric_id][ex.id] == pytest.approx(expected[metric_id], abs=TOLERANCE), metric_id


def test_multi_reference_takes_the_best_reference(available_wordnet):
    candidate = "i love jazz music and i listen to it every day"
    close = "i love jazz music and listen to it every day"
    far = "the weather in paris was cold last winter"
    both = score_pair(candidate, [far, close])
    only_close = score_pair(candidate, [close])
    for metric_id in ("rouge1", "rouge2", "rougeL", "meteor", "chrf++"):
        assert both[metric_id] == pytest.approx(only_close[metric_id], abs=TOLERANCE)
    assert both["bleu4"] >= score_pair(candidate, [far])["bleu4"]


# --- Chinese ---------------------------------------------------------------------------

CHINESE_PAIRS = [
    ("我很喜欢看这部电影，演员演得非常好。", ["这部电影我很喜欢，演员的表演非常好。"]),
    ("周杰伦出生于1979年1月18日。", ["周杰伦的生日是1979年1月18日。", "他出生在台湾。"]),
    ("北京是中国的首都，有很多名胜古迹。", ["中国的首都是北京，那里有许多名胜古迹。"]),
    ("这首歌的旋律很好听。", ["我觉得这首歌很难听。"]),
]


@pytest.mark.parametrize("candidate,refs", CHINESE_PAIRS)
@pytest.mark.parametrize("language", ["zh", None])
def test_chinese_equals_libraries_with_per_character_tokens(candidate, refs, language, available_wordnet):
    got = score_pair(candidate, refs, language=language)
    expected = library_scores(candidate, refs, chinese=True, wordnet=available_wordnet)
    for metric_id in METRIC_IDS:
        assert got[metric_id] == pytest.approx(expected[metric_id], abs=TOLERANCE), metric_id
        assert 0.0 <= got[metric_id] <= 1.0


def test_chinese_is_not_scored_as_whitespace_words(available_wordnet):
    candidate, refs = CHINESE_PAIRS[0]
    got = score_pair(candidate, refs, language="zh")
    # rouge-score's default tokenizer keeps only ASCII, so it would find nothing to match.
    assert rouge_scorer.RougeScorer(["rouge1"]).score(refs[0], candidate)["rouge1"].fmeasure == 0.0
    assert got["rouge1"] > 0.5
    as_words = BLEU(tokenize="13a", max_ngram_order=1, effective_order=True)
    assert got["bleu1"] > as_words.sentence_score(candidate, refs).score / 100
    assert meteor_tokens(candidate, chinese=True)[:3] == ["我", "很", "喜"]


@pytest.fixture
def without_wordnet(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """This machine as one without NLTK's WordNet and without Debian's (through the module's hooks)."""
    monkeypatch.setattr(wn, "find_nltk_wordnet", lambda: None)
    monkeypatch.setattr(wn, "DEBIAN_WORDNET_DIR", tmp_path / "no-wordnet-here")
    monkeypatch.setattr(wn, "cache_nltk_root", lambda: tmp_path / "cache")
    wn.reset_wordnet_state()
    yield wn.NoSynonyms()
    wn.reset_wordnet_state()


@pytest.mark.parametrize("wordnet_here", ["as this machine has it", "hidden"])
def test_chinese_examples_are_detected_or_declared(wordnet_here, request):
    wordnet = request.getfixturevalue("available_wordnet" if wordnet_here != "hidden" else "without_wordnet")
    candidate, refs = CHINESE_PAIRS[2]
    declared = Example(id="zh-1", group_id="g", context=(), candidate=candidate,
                       references=tuple(refs), language="zh")
    detected = Example(id="zh-2", group_id="g", context=(), candidate=candidate,
                       references=tuple(refs), language=None)
    result = score_examples([declared, detected], ["rouge1", "bleu2", "meteor"])
    expected = library_scores(candidate, refs, chinese=True, wordnet=wordnet)
    for metric_id in ("rouge1", "bleu2", "meteor"):
        assert result[metric_id]["zh-1"] == pytest.approx(expected[metric_id], abs=TOLERANCE)
        assert result[metric_id]["zh-2"] == pytest.approx(expected[metric_id], abs=TOLERANCE)


def test_language_detection():
    assert is_chinese_code("zh") and is_chinese_code("zh-CN") and is_chinese_code("zh_TW")
    assert not is_chinese_code("en") and not is_chinese_code("ja")
    assert han_ratio("周杰伦出生于1979年") == 1.0
    assert han_ratio("hello world") == 0.0
    assert is_chinese(None, ["我们去Starbucks喝咖啡吧"])
    assert not is_chinese(None, ["we met at 北京 airport yesterday afternoon"])
    assert not is_chinese("en", ["我们去喝咖啡吧"])
    assert is_chinese("zh", ["OK"])


# --- METEOR without WordNet ---------------------------------------------------------------

def test_without_wordnet_meteor_is_exact_plus_stem(topical_chat, monkeypatch, tmp_path):
    monkeypatch.setattr(wn, "find_nltk_wordnet", lambda: None)
    monkeypatch.setattr(wn, "DEBIAN_WORDNET_DIR", tmp_path / "no-wordnet-here")
    monkeypatch.setattr(wn, "cache_nltk_root", lambda: tmp_path / "cache")
    wn.reset_wordnet_state()
    try:
        assert wn.meteor_variant() == "exact+stem"
        assert metric_info("meteor").label == "METEOR (exact+stem)"
        examples = scored(topical_chat)[:60]
        result = score_examples(examples, ["meteor"])
        assert result.info("meteor").label == "METEOR (exact+stem)"
        assert result.info("meteor").id == "meteor"
        assert len(result.notes) == 1 and "WordNet" in result.notes[0]
        for ex in examples:
            expected = meteor_score([meteor_tokens(ex.references[0])], meteor_tokens(ex.candidate),
                                    wordnet=wn.NoSynonyms())
            assert result["meteor"][ex.id] == pytest.approx(expected, abs=TOLERANCE)
        no_synonyms = meteor_score([["the", "auto", "is", "red"]], ["the", "car", "is", "red"],
                                   wordnet=wn.NoSynonyms())
        got = score_examples([Example(id="car", group_id="g", context=(), candidate="the car is red",
                                      references=("the auto is red",))], ["meteor"])
        assert got["meteor"]["car"] == pytest.approx(no_synonyms, abs=TOLERANCE)
        assert score_pair("the car is red", ["the auto is red"], metric_ids=["meteor"])["meteor"] == \
            pytest.approx(no_synonyms, abs=TOLERANCE)
    finally:
        wn.reset_wordnet_state()


# --- skipping, the registry, the pair function ---------------------------------------------

def test_skips_are_counted_by_reason():
    def ex(i, **kw):
        base = dict(id=f"e{i}", group_id="g", context=(), candidate="a reply", references=("a reply too",))
        base.update(kw)
        return Example(**base)

    examples = [
        ex(1),
        ex(2, is_reference=True),
        ex(3, references=()),
        ex(4, references=("", "   ")),
        ex(5, candidate=None, level=Level.DIALOG, references=()),
        ex(6, candidate=None),
    ]
    result = score_examples(examples, ["bleu4", "rougeL"])
    assert result.n_scored == 1 and set(result["bleu4"]) == {"e1"}
    assert result.skip_counts == {
        SkipReason.REFERENCE_ITSELF: 1, SkipReason.NO_REFERENCE: 2,
        SkipReason.DIALOG_LEVEL: 1, SkipReason.NO_CANDIDATE: 1,
    }
    assert result.skipped[SkipReason.NO_REFERENCE] == ["e3", "e4"]
    assert result.n_skipped == 5


def test_registry_ids_labels_and_descriptions():
    metrics = available_metrics()
    assert [m.id for m in metrics] == list(METRIC_IDS)
    assert set(METRIC_IDS) == {"bleu1", "bleu2", "bleu3", "bleu4", "rouge1", "rouge2", "rougeL",
                               "meteor", "chrf++"}
    labels = {m.id: m.label for m in metrics}
    assert labels["bleu4"] == "BLEU-4" and labels["chrf++"] == "chrF++" and labels["rougeL"] == "ROUGE-L"
    assert labels["meteor"] in ("METEOR", "METEOR (exact+stem)")
    assert "exp" in metric_info("bleu2").description and "effective order" in metric_info("bleu2").description
    assert "max" in metric_info("rouge1").description
    assert "word_order=2" in metric_info("chrf++").description


def test_unknown_metric_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown metric 'bleu5'.*known metrics: bleu1"):
        score_examples([], ["bleu5"])
    with pytest.raises(ConfigError, match="no metric selected"):
        score_examples([], [])
    with pytest.raises(ConfigError, match="list"):
        score_pair("a", ["b"], metric_ids="bleu4")


def test_selected_metrics_only_and_in_display_order():
    result = score_examples([Example(id="x", group_id="g", context=(), candidate="hi there",
                                     references=("hello there",))], ["chrf++", "bleu1"])
    assert result.metric_ids == ("bleu1", "chrf++")
    assert set(result.values) == {"bleu1", "chrf++"}


def test_score_pair_matches_the_engine_path(topical_chat, topical_scores):
    for ex in scored(topical_chat)[:25]:
        single = score_pair(ex.candidate, ex.references)
        for metric_id in METRIC_IDS:
            assert single[metric_id] == topical_scores[metric_id][ex.id]
    assert score_pair("a reply", []) == {}
    assert score_pair("a reply", "a reply", metric_ids=["bleu1"]) == {"bleu1": 1.0}


def test_process_pool_gives_the_same_scores(topical_chat, topical_scores):
    examples = scored(topical_chat)[:40]
    ids = ["bleu4", "rougeL", "chrf++"]
    pooled = score_examples(examples, ids, workers=2)
    for metric_id in ids:
        assert pooled[metric_id] == {ex.id: topical_scores[metric_id][ex.id] for ex in examples}


def test_progress_is_reported():
    examples = [Example(id=f"p{i}", group_id="g", context=(), candidate=f"reply {i}",
                        references=("reply",)) for i in range(7)]
    seen: list[tuple[int, int]] = []
    score_examples(examples, ["bleu1"], progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (7, 7)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_lcs_length_equals_rouge_scores_table():
    rng = random.Random(7)
    for _ in range(300):
        a = [rng.choice("abcde") for _ in range(rng.randint(0, 30))]
        b = [rng.choice("abcde") for _ in range(rng.randint(0, 30))]
        expected = rouge_scorer._lcs_table(a, b)[-1][-1] if a and b else 0
        assert lcs_length(a, b) == expected


def test_engine_refuses_a_pair_without_references():
    with pytest.raises(ValueError, match="reference"):
        MetricEngine(["bleu1"]).score("a reply", [])


def test_importing_the_package_loads_no_metric_library():
    code = ("import sys, dialjudge.core.metrics; "
            "print(sorted(m for m in ('sacrebleu', 'nltk', 'rouge_score') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
