"""The nlg-eval profile: COCO BLEU-1..4 and ROUGE-L from their definitions, checked by hand and
against pycocoevalcap itself; METEOR 1.5 refused with a reason where it cannot run."""

from __future__ import annotations

import math
import random

import pytest

from dialjudge.core.errors import ConfigError
from dialjudge.core.evaluation import evaluate, missing_metric_reasons
from dialjudge.core.metrics import score_examples, score_pair
from dialjudge.core.metrics.families import coco, meteor_jar
from dialjudge.core.metrics.registry import DEFAULT_PROFILE, metric_ids, resolve_metric_ids
from dialjudge.core.metrics.signatures import signature_for_label
from dialjudge.core.model import Dataset, Example, Level, Rating, Scale, ScaleKind

NLG_EVAL_IDS = ("nlg-eval-bleu1", "nlg-eval-bleu2", "nlg-eval-bleu3", "nlg-eval-bleu4",
                "nlg-eval-meteor", "nlg-eval-rougeL")


def test_the_default_profile_is_unchanged_and_nlg_eval_has_its_own_ids() -> None:
    assert metric_ids() == metric_ids(DEFAULT_PROFILE)
    assert "bleu4" in metric_ids() and not any(m.startswith("nlg-eval") for m in metric_ids())
    assert metric_ids("nlg-eval") == NLG_EVAL_IDS  # Yeh et al.'s order: BLEU, METEOR, ROUGE-L
    assert resolve_metric_ids(None) == metric_ids()
    assert resolve_metric_ids(["bleu4", "rougeL"], "nlg-eval") == ("nlg-eval-bleu4", "nlg-eval-rougeL")
    with pytest.raises(ConfigError, match="unknown metric profile 'coco'"):
        metric_ids("coco")
    with pytest.raises(ConfigError, match="the nlg-eval profile has no metric 'chrf\\+\\+'"):
        resolve_metric_ids(["bleu4", "chrf++"], "nlg-eval")


def test_each_nlg_eval_metric_has_its_own_label_and_signature() -> None:
    labels = [coco.coco_bleu_info(m).label for m in coco.COCO_BLEU_IDS]
    labels += [coco.coco_rouge_info(coco.COCO_ROUGE_L_ID).label, meteor_jar.METEOR_JAR_LABEL]
    signatures = [signature_for_label(label) for label in labels]
    assert all(s is not None and "profile:nlg-eval" in s for s in signatures)
    assert len(set(signatures)) == len(labels)
    assert signature_for_label("BLEU-4") != signature_for_label("BLEU-4 (nlg-eval)")


def test_bleu_by_hand() -> None:
    # 3 of 3 unigrams, 2 of 2 bigrams, 1 of 1 trigram, 0 of 0 4-grams; reference length 5.
    scores = coco.coco_bleu("the cat sat", ["the cat sat on mat"])
    penalty = math.exp(1 - (5 + coco.SMALL) / (3 + coco.TINY))
    p = [(3 + 1e-15) / (3 + 1e-9), (2 + 1e-15) / (2 + 1e-9), (1 + 1e-15) / (1 + 1e-9), 1e-15 / 1e-9]
    expected = [math.prod(p[:n]) ** (1 / n) * penalty for n in (1, 2, 3, 4)]
    assert scores == pytest.approx(expected, rel=1e-12)
    # An empty 4-gram count is (0 + 1e-15) / (0 + 1e-9), not smoothed away: BLEU-4 is tiny, not 0 and not exp-smoothed.
    assert 0 < scores[3] < 0.05


def test_bleu_is_case_sensitive_and_takes_the_closest_reference_length() -> None:
    assert coco.coco_bleu("The cat", ["the cat"])[0] < coco.coco_bleu("the cat", ["the cat"])[0]
    # Hypothesis of 4 tokens; references of 3 and 5 tokens are equally close: COCO takes the shorter (3): no penalty.
    assert coco.coco_bleu("a b c d", ["a b c", "x y z w v"])[0] == pytest.approx((3 + 1e-15) / (4 + 1e-9))


def test_rouge_l_by_hand() -> None:
    # LCS("a b c d", "a c e") = 2: precision 2/3, recall 2/4, F with beta 1.2.
    p, r = 2 / 3, 2 / 4
    assert coco.coco_rouge_l("a c e", ["a b c d"]) == pytest.approx((1 + 1.44) * p * r / (r + 1.44 * p))
    # Best precision and best recall are taken separately over the references.
    p, r = max(1 / 1, 1 / 1), max(1 / 3, 1 / 1)
    assert coco.coco_rouge_l("a", ["a b c", "a"]) == pytest.approx((1 + 1.44) * p * r / (r + 1.44 * p))
    assert coco.coco_rouge_l("x", ["a b"]) == 0.0


def _random_pairs(seed: int, n: int) -> list[tuple[str, list[str]]]:
    rng = random.Random(seed)
    words = ["the", "a", "cat", "dog", "sat", "on", "mat", "The", "Cat", ",", ".", "i", "you", "like", "it", "!", "?"]
    def sentence() -> str:
        text = " ".join(rng.choice(words) for _ in range(rng.randint(0, 14)))
        return text.replace(" ", "  ", 1) if rng.random() < 0.1 else text  # COCO's ROUGE splits on " " only
    return [(sentence(), [sentence() for _ in range(rng.randint(1, 3))]) for _ in range(n)]


def test_bleu_and_rouge_l_equal_pycocoevalcap() -> None:
    pytest.importorskip("pycocoevalcap", reason="pycocoevalcap is not installed (pip install 'dialjudge[nlg-eval]')")
    from pycocoevalcap.bleu.bleu import Bleu
    from pycocoevalcap.rouge.rouge import Rouge

    pairs = [(c, refs) for c, refs in _random_pairs(7, 400) if c.strip()]
    pairs += [("the cat sat", ["the cat sat on mat"]), ("ha ha i'm so shy", ["Hi! How are you?"])]
    for candidate, refs in pairs:
        gts, res = {0: [r.strip() for r in refs]}, {0: [candidate.strip()]}
        _, bleu = Bleu(4).compute_score(gts, res, verbose=0)
        assert coco.coco_bleu(candidate.strip(), gts[0]) == pytest.approx([b[0] for b in bleu], rel=1e-12, abs=1e-300)
        if all(r for r in gts[0]):
            _, rouge = Rouge().compute_score(gts, res)
            assert coco.coco_rouge_l(candidate.strip(), gts[0]) == pytest.approx(rouge[0], rel=1e-12)


def _examples() -> list[Example]:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    texts = [("the cat sat on the mat", "the cat sat"), ("i like dogs", "i like cats a lot"),
             ("hello there friend", "hello friend"), ("what a day", "no idea"), ("it is raining", "it rains")]
    return [Example(id=f"e{i}", group_id=f"g{i}", context=(), candidate=cand, references=(ref,), level=Level.TURN,
                    ratings={"Overall": Rating((float(i % 5 + 1),), scale, ("a",))})
            for i, (ref, cand) in enumerate(texts)]


def test_without_java_meteor_is_not_computed_and_its_row_says_why(monkeypatch: pytest.MonkeyPatch) -> None:
    real_which = meteor_jar.shutil.which
    monkeypatch.setattr(meteor_jar.shutil, "which", lambda name: None if name == "java" else real_which(name))
    result = score_examples(_examples(), profile="nlg-eval")
    assert result["nlg-eval-meteor"] == {}
    assert len(result["nlg-eval-bleu4"]) == 5 and len(result["nlg-eval-rougeL"]) == 5
    assert result.notes == ["METEOR 1.5 (nlg-eval): " + meteor_jar.meteor_jar_unavailable()]
    assert "Java was not found" in result.notes[0] and "\n" not in result.notes[0]
    assert "nlg-eval-meteor" not in score_pair("the cat", ["the cat sat"], metric_ids=NLG_EVAL_IDS)
    assert missing_metric_reasons(NLG_EVAL_IDS) == {"METEOR 1.5 (nlg-eval)": meteor_jar.meteor_jar_unavailable()}
    report = evaluate(Dataset("tiny", _examples()), metric_ids=NLG_EVAL_IDS, n_boot=0)
    meteor_rows = [r for r in report.records if r["evaluator"] == "METEOR 1.5 (nlg-eval)"]
    assert meteor_rows and all("Java was not found" in r["reason"] for r in meteor_rows)


def test_without_the_jar_meteor_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(meteor_jar.shutil, "which", lambda name: "/usr/bin/java")
    monkeypatch.setattr(meteor_jar.importlib.util, "find_spec", lambda name: None)
    reason = meteor_jar.meteor_jar_unavailable()
    assert reason is not None and "pip install 'dialjudge[nlg-eval]'" in reason
