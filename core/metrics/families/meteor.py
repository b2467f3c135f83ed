"""METEOR (NLTK), registered with the metric registry.

METEOR matches exact words, Porter stems and, where WordNet is found, WordNet
synonyms (:mod:`.wordnet`); without WordNet it runs as "exact+stem", under its own
label and signature, since its scores are not comparable with METEOR's. Tokens are
computed once per distinct text, stems and synonym sets once per word.
"""

from __future__ import annotations

from typing import Any

from ..family import CHINESE_CHARACTERS, MULTI_REF_MAX, MetricFamily, MetricInfo, register_family
from ..params import BLEU_TOKENIZER, BLEU_TOKENIZER_CHINESE, METEOR_ALPHA, METEOR_BETA, METEOR_GAMMA
from ..scoring_context import ScoringContext
from ..signature_parts import NREFS, distribution_version
from ..synonym_index import SynonymSet
from ..wordnet import METEOR_EXACT_STEM, METEOR_WORDNET, NoSynonyms, load_synonyms, meteor_variant

METEOR_ID = "meteor"


def meteor_info(variant: str) -> MetricInfo:
    """METEOR's entry for a matcher variant: 'wordnet' or 'exact+stem'."""
    common = (
        "NLTK meteor_score (alpha 0.9, beta 3, gamma 0.5) on lowercased sacrebleu-13a tokens. "
        f"{CHINESE_CHARACTERS} {MULTI_REF_MAX}"
    )
    if variant == METEOR_WORDNET:
        return MetricInfo(
            id=METEOR_ID,
            label="METEOR",
            description=(
                "METEOR with exact, Porter-stem and WordNet-synonym matching (NLTK looks up "
                f"synonyms of the stems of words still unmatched); {common}"
            ),
            family="meteor",
        )
    if variant == METEOR_EXACT_STEM:
        return MetricInfo(
            id=METEOR_ID,
            label="METEOR (exact+stem)",
            description=f"METEOR with exact and Porter-stem matching only; {common}",
            family="meteor",
            note=(
                "WordNet was not found, so METEOR ran without synonym matching; its scores "
                "are not comparable with METEOR computed with WordNet."
            ),
        )
    raise ValueError(f"unknown METEOR variant {variant!r}")


def meteor_signature(variant: str) -> str:
    matchers = {METEOR_WORDNET: "exact+stem+wordnet", METEOR_EXACT_STEM: "exact+stem"}
    if variant not in matchers:
        raise ValueError(f"unknown METEOR variant {variant!r}")
    return "|".join((
        "METEOR", f"nrefs:{NREFS}", "refs:max", "case:lc", f"match:{matchers[variant]}",
        f"alpha:{METEOR_ALPHA:g}", f"beta:{METEOR_BETA:g}", f"gamma:{METEOR_GAMMA:g}",
        f"tok:{BLEU_TOKENIZER}", f"tok-zh:{BLEU_TOKENIZER_CHINESE}",
        f"version:{distribution_version('nltk')}",
    ))


class RememberingSynonyms:
    """A WordNet reader as NLTK's METEOR matcher sees it, remembering each word's synonyms.

    The matcher only reads ``lemma.name()`` of every ``synset.lemmas()`` of
    ``wordnet.synsets(word)``, drops multi-word names (those with '_') and takes
    the set, so one stand-in synset holding the distinct single-word names
    yields the same set at a fraction of the cost.
    """

    def __init__(self, wordnet: Any) -> None:
        self._wordnet = wordnet
        self._synonyms: dict[str, list[SynonymSet]] = {}

    def synsets(self, word: str) -> list[SynonymSet]:
        found = self._synonyms.get(word)
        if found is None:
            names = dict.fromkeys(
                name
                for synset in self._wordnet.synsets(word)
                for name in (lemma.name() for lemma in synset.lemmas())
                if "_" not in name
            )
            found = self._synonyms[word] = [SynonymSet(names)] if names else []
        return found


class MeteorScorer:
    def __init__(self, ids: tuple[str, ...], context: ScoringContext) -> None:
        from nltk.translate.meteor_score import single_meteor_score  # NLTK is slow to import: first use only

        wordnet = load_synonyms() if context.wordnet is ScoringContext.UNSET else context.wordnet
        self._single_meteor = single_meteor_score
        self._stemmer = context.stemmer()
        self._wordnet = RememberingSynonyms(wordnet if wordnet is not None else NoSynonyms())
        self._context = context
        self._texts: dict[tuple[bool, str], list[str]] = {}

    def cache_size(self) -> int:
        return len(self._texts)

    def _tokens(self, text: str, chinese: bool) -> list[str]:
        key = (chinese, text)
        found = self._texts.get(key)
        if found is None:
            # meteor_tokens, with the tokenization shared with BLEU (the same tokenizer)
            found = self._texts[key] = self._context.tokenized(text.strip(), chinese).split()
        return found

    def score(self, candidate: str, refs: tuple[str, ...], chinese: bool) -> dict[str, float]:
        hyp = self._tokens(candidate, chinese)
        return {METEOR_ID: float(max(
            self._single_meteor(
                self._tokens(ref, chinese), hyp,
                stemmer=self._stemmer, wordnet=self._wordnet,
                alpha=METEOR_ALPHA, beta=METEOR_BETA, gamma=METEOR_GAMMA,
            )
            for ref in refs
        ))}


register_family(MetricFamily(
    name="meteor", order=30, ids=(METEOR_ID,),
    info=lambda metric_id, variant: meteor_info(variant or meteor_variant()),
    signature=lambda metric_id, variant: meteor_signature(variant or meteor_variant()),
    scorer=MeteorScorer, variants=(METEOR_WORDNET, METEOR_EXACT_STEM), setting=meteor_variant,
    prepare=load_synonyms))
