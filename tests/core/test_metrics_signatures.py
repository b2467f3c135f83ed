"""Metric signatures: they state the parameters sacrebleu itself reports, and the installed versions."""

from __future__ import annotations

from importlib import metadata

import pytest
from sacrebleu.metrics import BLEU, CHRF

from dialjudge import __version__
from dialjudge.core.metrics import metric_ids
from dialjudge.core.metrics import signatures as sig
from dialjudge.core.metrics.families.bleu import bleu_signature
from dialjudge.core.metrics.families.chrf import chrf_signature
from dialjudge.core.metrics.families.meteor import meteor_info, meteor_signature
from dialjudge.core.metrics.families.rouge import rouge_signature


def fields(signature: str) -> set[str]:
    return set(signature.split("|"))


def sacrebleu_fields(metric) -> set[str]:
    metric.sentence_score("the cat sat", ["the cat sat down"])  # sacrebleu signs only after scoring
    return fields(metric.get_signature().format()) - {"nrefs:1"}


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_bleu_signature_holds_sacrebleus_own_fields(order: int) -> None:
    expected = sacrebleu_fields(BLEU(tokenize="13a", smooth_method="exp", effective_order=True,
                                      max_ngram_order=order))
    assert expected <= fields(bleu_signature(f"bleu{order}"))
    assert bleu_signature(f"bleu{order}").startswith(f"BLEU-{order}|")
    assert f"order:{order}" in fields(bleu_signature(f"bleu{order}"))


def test_chrf_signature_holds_sacrebleus_own_fields() -> None:
    expected = sacrebleu_fields(CHRF(word_order=2))
    assert expected <= fields(chrf_signature())
    assert {"nc:6", "nw:2", "beta:2"} <= fields(chrf_signature())


def test_meteor_and_rouge_signatures_name_matcher_stemming_and_library() -> None:
    nltk = metadata.version("nltk")
    assert {"match:exact+stem+wordnet", f"version:{nltk}", "alpha:0.9", "beta:3", "gamma:0.5"} <= \
        fields(meteor_signature("wordnet"))
    assert "match:exact+stem" in fields(meteor_signature("exact+stem"))
    with pytest.raises(ValueError, match="variant"):
        meteor_signature("synonyms")
    assert {"stem:porter", f"version:{metadata.version('rouge-score')}"} <= fields(rouge_signature("rougeL"))


def test_every_metric_has_a_signature_found_from_its_label() -> None:
    signatures = sig.metric_signatures(meteor_variant="exact+stem")
    assert list(signatures) == list(metric_ids())
    assert len(set(signatures.values())) == len(metric_ids())
    assert sig.signature_for_label(meteor_info("wordnet").label) == meteor_signature("wordnet")
    assert sig.signature_for_label(meteor_info("exact+stem").label) == meteor_signature("exact+stem")
    assert sig.signature_for_label("ROUGE-L") == rouge_signature("rougeL")
    assert sig.signature_for_label("judge@persona") is None


def test_versions_name_dialjudge_and_the_metric_libraries() -> None:
    versions = sig.library_versions()
    assert versions["dialjudge"] == __version__
    assert versions["sacrebleu"] == metadata.version("sacrebleu")
    assert set(versions) == {"dialjudge", "sacrebleu", "rouge-score", "nltk", "llama-cpp-python"}
    assert sig.distribution_version("no-such-distribution-here") == "not installed"
