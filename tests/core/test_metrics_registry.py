"""The metric registry: each family module registers itself, and the engine only asks the registry."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dialjudge.core.metrics import registry
from dialjudge.core.metrics.engine import MetricEngine, ScoringContext
from dialjudge.core.metrics.registry import MetricFamily, MetricInfo, metric_families, metric_ids, register_family
from dialjudge.core.metrics.signatures import metric_signature, signature_for_label

METRICS_PACKAGE = Path(__file__).resolve().parents[2] / "core" / "metrics"


def test_every_family_module_registered_itself_in_display_order() -> None:
    assert [family.name for family in metric_families() if family.profile == "default"] == [
        "bleu", "rouge", "meteor", "chrf"]
    assert [family.name for family in metric_families() if family.profile == "nlg-eval"] == [
        "nlg-eval-bleu", "nlg-eval-meteor", "nlg-eval-rouge"]
    assert metric_ids() == ("bleu1", "bleu2", "bleu3", "bleu4", "rouge1", "rouge2", "rougeL", "meteor", "chrf++")


def test_a_second_family_of_the_same_name_is_refused() -> None:
    bleu = metric_families()[0]
    with pytest.raises(ValueError, match="two metric families are named 'bleu'"):
        register_family(MetricFamily(name="bleu", order=99, ids=("x",), info=bleu.info, signature=bleu.signature,
                                     scorer=bleu.scorer))


class _LengthRatio:
    """A toy metric: candidate length over the longest reference's, capped at 1."""

    def __init__(self, ids: tuple[str, ...], context: ScoringContext) -> None:
        self.ids = ids

    def cache_size(self) -> int:
        return 0

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        return {"length": min(1.0, len(candidate) / max(len(r) for r in refs))}


def test_a_registered_family_is_scored_described_and_signed_without_touching_the_engine(
        monkeypatch: pytest.MonkeyPatch) -> None:
    metric_families()  # the real ones first, then the toy one after them
    monkeypatch.setattr(registry._FAMILIES.registrations, "_entries", dict(registry._FAMILIES.entries()))
    register_family(MetricFamily(
        name="length", order=50, ids=("length",),
        info=lambda metric_id, variant: MetricInfo(id="length", label="Length", description="toy", family="length"),
        signature=lambda metric_id, variant: "Length|toy", scorer=_LengthRatio))
    assert metric_ids()[-1] == "length"
    engine = MetricEngine(["length", "bleu1"])
    assert engine.score("abc", ["abcdef"]) == {"bleu1": pytest.approx(0.0, abs=1e-12), "length": 0.5}
    assert metric_signature("length") == "Length|toy"
    assert signature_for_label("Length") == "Length|toy"


def test_no_metric_module_reaches_into_rouge_scores_private_functions() -> None:
    private = []
    for path in sorted(METRICS_PACKAGE.rglob("*.py")):  # the family modules sit in families/
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                    and isinstance(node.value, ast.Name) and node.value.id in ("rouge_scorer", "scoring")):
                private.append(f"{path.name}: {node.value.id}.{node.attr}")
    assert private == []
