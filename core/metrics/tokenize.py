"""Tokenizers the metrics share, so that BLEU, ROUGE and METEOR see the same words.

English-like text: sacrebleu's 13a tokenizer for BLEU and METEOR, rouge-score's
own tokenizer (with Porter stemming) for ROUGE. Chinese: one token per Han
character (sacrebleu's 'zh' tokenizer) everywhere; rouge-score needs its own
tokenizer object for that, since its default keeps only ASCII letters and digits
and would drop every Chinese character.

Cheap to import: sacrebleu, rouge-score and NLTK load when a tokenizer is first made
(importing NLTK alone takes a second or more), inside the functions below.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Any

from .params import BLEU_TOKENIZER, BLEU_TOKENIZER_CHINESE

__all__ = [
    "BLEU_TOKENIZER", "BLEU_TOKENIZER_CHINESE", "ChineseCharTokenizer", "RememberingStemmer",
    "StemmingTokenizer", "meteor_tokens", "sacrebleu_tokenize",
]


@functools.cache
def _latin_tokenizer() -> Any:
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a  # heavy: loaded on first use

    return Tokenizer13a()


@functools.cache
def _chinese_tokenizer() -> Any:
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh  # heavy: loaded on first use

    return TokenizerZh()


def _is_punctuation(token: str) -> bool:
    return all(unicodedata.category(char)[0] in "PS" for char in token)


class RememberingStemmer:
    """NLTK's Porter stemmer (as ROUGE and METEOR use it), remembering each word's stem."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer  # NLTK is slow to import: only when a metric scores

        self._stemmer = PorterStemmer()
        self._stems: dict[str, str] = {}

    def stem(self, word: str) -> str:
        stem = self._stems.get(word)
        if stem is None:
            stem = self._stems[word] = self._stemmer.stem(word)
        return stem


class StemmingTokenizer:
    """rouge-score's DefaultTokenizer(use_stemmer=True) with a stemmer of the caller's
    choosing (one that remembers stems), so the tokens are the same.
    (rouge-score takes any object with ``tokenize(text)`` as its tokenizer.)"""

    def __init__(self, stemmer: Any) -> None:
        from rouge_score import tokenize as rouge_tokenize  # loads NLTK: only when ROUGE scores

        self._tokenize = rouge_tokenize.tokenize
        self._stemmer = stemmer

    def tokenize(self, text: str) -> list[str]:
        return self._tokenize(text, self._stemmer)


class ChineseCharTokenizer:
    """rouge-score tokenizer: lowercased, one token per Han character, punctuation
    dropped (as rouge-score's default tokenizer drops it for English)."""

    def tokenize(self, text: str) -> list[str]:
        return [t for t in _chinese_tokenizer()(text.lower()).split() if not _is_punctuation(t)]


def sacrebleu_tokenize(text: str, chinese: bool = False) -> str:
    """sacrebleu's 13a tokenization (BLEU's default), or its 'zh' one for Chinese."""
    return (_chinese_tokenizer() if chinese else _latin_tokenizer())(text)


def meteor_tokens(text: str, chinese: bool = False) -> list[str]:
    """The words METEOR aligns: sacrebleu 13a tokens, or per-character tokens for Chinese.
    (NLTK's meteor_score lowercases them itself.)"""
    return sacrebleu_tokenize(text.strip(), chinese).split()
