"""Metric signatures: they state the parameters sacrebleu itself reports, and the installed versions."""

from __future__ import annotations

from importlib import metadata

import pytest
from sacrebleu.metrics import BLEU, CHRF

from dialjudge import __version__
from dialjudge.core.metrics import METRIC_IDS
from dialjudge.core.metrics import signatures as sig
from dialjudge.core.metrics.registry import meteor_info


def fields(signature: str) -> set[str]:
    return set(signature.split("|"))


def sacrebleu_fields(metric) -> set[str]:
    metric.sentence_score("the cat sat", ["the cat sat down"])  # sacrebleu signs only after scoring
    return fields(metric.get_signature().format()) - {"nrefs:1"}


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_bleu_signature_holds_sacrebleus_own_fields(order: int) -> None:
    expected = sacrebleu_fields(BLEU(tokenize="13a", smooth_method="exp", effective_order=True,
                                      max_ngram_order=order))
    assert expected <= fields(sig.bleu_signature(order))
    assert sig.bleu_signature(order).startswith(f"BLEU-{order}|")
    assert f"order:{order}" in fields(sig.bleu_signature(order))


def test_chrf_signature_holds_sacrebleus_own_fields() -> None:
    expected = sacrebleu_fields(CHRF(word_order=2))
    assert expected <= fields(sig.chrf_signature())
    assert {"nc:6", "nw:2", "beta:2"} <= fields(sig.chrf_signature())


def test_meteor_and_rouge_signatures_name_matcher_stemming_and_library() -> None:
    nltk = metadata.version("nltk")
    assert {"match:exact+stem+wordnet", f"version:{nltk}", "alpha:0.9", "beta:3", "gamma:0.5"} <= \
        fields(sig.meteor_signature("wordnet"))
    assert "match:exact+stem" in fields(sig.meteor_signature("exact+stem"))
    with pytest.raises(ValueError, match="variant"):
        sig.meteor_signature("synonyms")
    assert {"stem:porter", f"version:{metadata.version('rouge-score')}"} <= fields(sig.rouge_signature("rougeL"))


def test_every_metric_has_a_signature_found_from_its_label() -> None:
    signatures = sig.metric_signatures(meteor_variant="exact+stem")
    assert list(signatures) == list(METRIC_IDS)
    assert len(set(signatures.values())) == len(METRIC_IDS)
    assert sig.signature_for_label(meteor_info("wordnet").label) == sig.meteor_signature("wordnet")
    assert sig.signature_for_label(meteor_info("exact+stem").label) == sig.meteor_signature("exact+stem")
    assert sig.signature_for_label("ROUGE-L") == sig.rouge_signature("rougeL")
    assert sig.signature_for_label("judge@persona") is None


def test_versions_name_dialjudge_and_the_metric_libraries() -> None:
    versions = sig.library_versions()
    assert versions["dialjudge"] == __version__
    assert versions["sacrebleu"] == metadata.version("sacrebleu")
    assert set(versions) == {"dialjudge", "sacrebleu", "rouge-score", "nltk", "llama-cpp-python"}
    assert sig.distribution_version("no-such-distribution-here") == "not installed"
