"""Tokenizers the metrics share, so that BLEU, ROUGE and METEOR see the same words.

English-like text: sacrebleu's 13a tokenizer for BLEU and METEOR, rouge-score's
own tokenizer (with Porter stemming) for ROUGE. Chinese: one token per Han
character (sacrebleu's 'zh' tokenizer) everywhere; rouge-score needs its own
tokenizer object for that, since its default keeps only ASCII letters and digits
and would drop every Chinese character.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from rouge_score import tokenize as rouge_tokenize
from rouge_score.tokenizers import Tokenizer
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

from .params import BLEU_TOKENIZER, BLEU_TOKENIZER_CHINESE

__all__ = ["BLEU_TOKENIZER", "BLEU_TOKENIZER_CHINESE", "ChineseCharTokenizer", "StemmingTokenizer", "meteor_tokens"]

_latin_tokenizer = Tokenizer13a()
_chinese_tokenizer = TokenizerZh()


def _is_punctuation(token: str) -> bool:
    return all(unicodedata.category(char)[0] in "PS" for char in token)


class StemmingTokenizer(Tokenizer):
    """rouge-score's DefaultTokenizer(use_stemmer=True) with a stemmer of the caller's
    choosing (one that remembers stems), so the tokens are the same."""

    def __init__(self, stemmer: Any) -> None:
        self._stemmer = stemmer

    def tokenize(self, text: str) -> list[str]:
        return rouge_tokenize.tokenize(text, self._stemmer)


class ChineseCharTokenizer(Tokenizer):
    """rouge-score tokenizer: lowercased, one token per Han character, punctuation
    dropped (as rouge-score's default tokenizer drops it for English)."""

    def tokenize(self, text: str) -> list[str]:
        return [t for t in _chinese_tokenizer(text.lower()).split() if not _is_punctuation(t)]


def meteor_tokens(text: str, chinese: bool = False) -> list[str]:
    """The words METEOR aligns: sacrebleu 13a tokens, or per-character tokens for Chinese.
    (NLTK's meteor_score lowercases them itself.)"""
    tokenizer = _chinese_tokenizer if chinese else _latin_tokenizer
    return tokenizer(text.strip()).split()
