"""Decide whether a pair of texts is Chinese, which changes how metrics tokenize it."""

from __future__ import annotations

import re
from collections.abc import Iterable

_CHINESE_CODES = {"zh", "chinese", "cmn", "zho", "chi"}

#: Han ideograph blocks (unified, extension A, compatibility, supplementary
#: planes); enough to tell Chinese text from Latin-script text without a model.
_HAN = re.compile("[\u4e00-\u9fff\u3400-\u4dbf\uf900-\ufaff\U00020000-\U0002fa1f]")
#: Letters of any script (Han ideographs included): word characters minus digits and '_'.
_LETTER = re.compile(r"[^\W\d_]")

#: Share of Han characters among the letters and ideographs of a text above
#: which it is treated as Chinese. KdConv replies mix in digits and Latin
#: names, so a majority is not required.
CHINESE_RATIO = 0.3


def is_chinese_code(language: str) -> bool:
    """'zh', 'zh-CN', 'zh_TW', 'chinese', ... are Chinese."""
    code = language.strip().lower().replace("_", "-")
    return code.split("-")[0] in _CHINESE_CODES


def han_ratio(text: str) -> float:
    """Han ideographs / letters of any script; 0 for text without letters."""
    if text.isascii():
        return 0.0
    letters = len(_LETTER.findall(text))
    return len(_HAN.findall(text)) / letters if letters else 0.0


def looks_chinese(texts: Iterable[str]) -> bool:
    return han_ratio("".join(texts)) >= CHINESE_RATIO


def is_chinese(language: str | None, texts: Iterable[str]) -> bool:
    """The example's language decides when it is set; otherwise the texts do."""
    if language:
        return is_chinese_code(language)
    return looks_chinese(texts)
