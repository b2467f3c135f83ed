"""What every generator proposes: single-place edits of a reply, or why none is safe.

A generator never decides how many candidates an item gets; it lists every safe
edit it finds (one or more alternatives per place in the reply) and the
builder picks among them. When it finds none it says why in a short reason
that the build report counts.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from ..model import Perturbation

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


@dataclass(frozen=True)
class Edit:
    """One perturbation of a reply: ``text`` is the whole new reply.

    ``start``/``end`` locate ``original_span`` in the source reply (the first
    occurrence when a generator replaces several, as the knowledge swap does).
    ``site`` numbers the place in the reply; alternatives at one place share it.
    """

    kind: str
    start: int
    end: int
    original_span: str
    replacement: str
    text: str
    site: int = 0
    alternative: int = 0

    def perturbation(self, source_id: str) -> Perturbation:
        return Perturbation(self.kind, source_id, self.original_span, self.replacement)


def make_edit(kind: str, source: str, start: int, end: int, replacement: str, *,
              site: int = 0, alternative: int = 0) -> Edit:
    """Replace ``source[start:end]`` with ``replacement``."""
    new_text = source[:start] + replacement + source[end:]
    return Edit(kind, start, end, source[start:end], replacement, new_text, site, alternative)


@dataclass(frozen=True)
class Proposals:
    """A generator's answer for one reply: edits, or the reason there are none."""

    kind: str
    edits: tuple[Edit, ...] = ()
    skip_reason: str | None = None

    @property
    def applies(self) -> bool:
        return bool(self.edits)

    @classmethod
    def skipped(cls, kind: str, reason: str) -> "Proposals":
        return cls(kind, (), reason)

    @classmethod
    def of(cls, kind: str, edits: list[Edit], reason_if_none: str) -> "Proposals":
        """Drop edits that change nothing or repeat another's text."""
        seen: set[str] = set()
        kept = []
        for edit in edits:
            if edit.original_span == edit.replacement or edit.text in seen:
                continue
            seen.add(edit.text)
            kept.append(edit)
        if not kept:
            return cls(kind, (), reason_if_none)
        return cls(kind, tuple(kept), None)


def detect_language(text: str) -> str:
    """'zh' when CJK characters outnumber Latin letters, else 'en'."""
    cjk = len(_CJK.findall(text))
    latin = len(_LATIN.findall(text))
    return "zh" if cjk > latin else "en"


def match_case(template: str, word: str) -> str:
    """Write ``word`` in the capitalisation of ``template`` (lower, Title or UPPER)."""
    letters = [c for c in template if c.isalpha()]
    if not letters:
        return word
    if len(letters) > 1 and all(c.isupper() for c in letters):
        return word.upper()
    if letters[0].isupper():
        return word[:1].upper() + word[1:]
    return word


def item_rng(seed: int | str, *parts: str) -> random.Random:
    """A generator private to one (seed, item, kind): results never depend on
    which other items or kinds were processed before."""
    return random.Random(":".join(["dialjudge-adversarial", str(seed), *parts]))
