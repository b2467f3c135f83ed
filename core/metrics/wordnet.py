"""Find WordNet for METEOR's synonym matching, without ever downloading it.

Order of preference:

1. NLTK data that already holds WordNet (``nltk.data.find``).
2. Debian's ``wordnet-base`` + ``wordnet-sense-index`` packages (WordNet 3.0 in
   ``/usr/share/wordnet``). NLTK's reader accepts those files once they are
   *copied* (NLTK refuses symlinks that leave its data root) into
   ``<user cache dir>/dialjudge/nltk_data/corpora/wordnet`` together with a
   ``lexnames`` file, which the Debian packages lack; it is written from the
   table in ``man 5 lexnames``. The cache folder is then added to ``nltk.data.path``.
3. Nothing: METEOR runs with exact and stem matching only and says so in its
   label (:func:`meteor_variant`).

The copy is staged in a temporary folder beside the target and renamed into
place, so two processes preparing the cache at once never see a half-written one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DataError
from .synonym_index import cache_dir, load_or_build

#: Where Debian's wordnet-base package installs the WordNet 3.0 database.
#: METEOR's matcher variants: with WordNet synonyms, or exact words and Porter stems only.
METEOR_WORDNET = "wordnet"
METEOR_EXACT_STEM = "exact+stem"

DEBIAN_WORDNET_DIR = Path("/usr/share/wordnet")

#: Files NLTK's WordNetCorpusReader needs to look up synsets.
REQUIRED_FILES: tuple[str, ...] = tuple(
    f"{kind}.{pos}" for kind in ("index", "data") for pos in ("noun", "verb", "adj", "adv")
) + tuple(f"{pos}.exc" for pos in ("noun", "verb", "adj", "adv"))
#: Files the reader opens only for sense keys and frequency counts.
OPTIONAL_FILES: tuple[str, ...] = ("index.sense", "cntlist.rev")
LEXNAMES_FILE = "lexnames"

#: The lexicographer files of WordNet 3.0, numbered 00-44 (man 5 lexnames).
LEXNAMES: tuple[str, ...] = (
    "adj.all", "adj.pert", "adv.all", "noun.Tops", "noun.act", "noun.animal",
    "noun.artifact", "noun.attribute", "noun.body", "noun.cognition",
    "noun.communication", "noun.event", "noun.feeling", "noun.food", "noun.group",
    "noun.location", "noun.motive", "noun.object", "noun.person", "noun.phenomenon",
    "noun.plant", "noun.possession", "noun.process", "noun.quantity", "noun.relation",
    "noun.shape", "noun.state", "noun.substance", "noun.time", "verb.body",
    "verb.change", "verb.cognition", "verb.communication", "verb.competition",
    "verb.consumption", "verb.contact", "verb.creation", "verb.emotion", "verb.motion",
    "verb.perception", "verb.possession", "verb.social", "verb.stative",
    "verb.weather", "adj.ppl",
)
#: The syntactic category code of the third lexnames field.
_CATEGORY_CODES = {"noun": 1, "verb": 2, "adj": 3, "adv": 4}


def lexnames_text() -> str:
    """The ``lexnames`` file: number, name, category code; tab separated."""
    return "".join(
        f"{number:02d}\t{name}\t{_CATEGORY_CODES[name.split('.')[0]]}\n"
        for number, name in enumerate(LEXNAMES)
    )


def cache_nltk_root() -> Path:
    """The NLTK data root dialjudge owns: ``<user cache dir>/dialjudge/nltk_data``
    (``$DIALJUDGE_CACHE_DIR/nltk_data`` when that is set)."""
    return cache_dir() / "nltk_data"


def source_is_usable(source: Path) -> bool:
    return all((source / name).is_file() for name in REQUIRED_FILES)


def _copy_is_current(target: Path, source: Path) -> bool:
    """The copy holds every file the source has, at the same size, plus lexnames."""
    if not (target / LEXNAMES_FILE).is_file():
        return False
    for name in REQUIRED_FILES + OPTIONAL_FILES:
        src = source / name
        if not src.is_file():
            if name in REQUIRED_FILES:
                return False
            continue
        copied = target / name
        if not copied.is_file() or copied.stat().st_size != src.stat().st_size:
            return False
    return True


def ensure_wordnet_copy(source: Path | None = None, nltk_root: Path | None = None) -> Path:
    """Copy WordNet from ``source`` into ``<nltk_root>/corpora/wordnet`` unless it is there.

    Returns the corpus folder. Safe when several processes call it at once: each
    stages its own copy and renames it into place; a loser discards its copy.
    Raises FileNotFoundError when the source lacks WordNet files, OSError on I/O trouble.
    """
    source = DEBIAN_WORDNET_DIR if source is None else source
    nltk_root = cache_nltk_root() if nltk_root is None else nltk_root
    if not source_is_usable(source):
        missing = [name for name in REQUIRED_FILES if not (source / name).is_file()]
        raise FileNotFoundError(f"{source} lacks WordNet files: {', '.join(missing)}")
    target = nltk_root / "corpora" / "wordnet"
    if _copy_is_current(target, source):
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".wordnet-staging-", dir=target.parent))
    try:
        for name in REQUIRED_FILES + OPTIONAL_FILES:
            if (source / name).is_file():
                shutil.copyfile(source / name, staging / name)
        (staging / LEXNAMES_FILE).write_text(lexnames_text(), encoding="ascii")
        _move_into_place(staging, target, source)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target


def _move_into_place(staging: Path, target: Path, source: Path) -> None:
    try:
        os.rename(staging, target)
        return
    except OSError:
        if _copy_is_current(target, source):
            return  # another process finished first
    # An outdated or broken copy is in the way: set it aside, then retry once.
    stale = Path(tempfile.mkdtemp(prefix=".wordnet-stale-", dir=target.parent))
    try:
        with contextlib.suppress(FileNotFoundError):  # someone else removed it meanwhile
            os.replace(target, stale / "wordnet")
        try:
            os.rename(staging, target)
        except OSError:
            if not _copy_is_current(target, source):
                raise
    finally:
        shutil.rmtree(stale, ignore_errors=True)


def find_nltk_wordnet() -> str | None:
    """Where NLTK's own data search finds WordNet, as its LazyCorpusLoader would."""
    import nltk  # NLTK is slow to import (a second or more): only when WordNet is looked for

    for resource in ("corpora/wordnet.zip/wordnet/", "corpora/wordnet"):
        try:
            return str(nltk.data.find(resource))
        except LookupError:
            continue
    return None


@dataclass(frozen=True)
class WordNetLocation:
    path: str
    origin: str  # "nltk data" or "debian copy"


_lock = threading.RLock()
_located: dict[str, WordNetLocation | None] = {}
_loaded: dict[str, Any] = {}


def locate_wordnet() -> WordNetLocation | None:
    """Find WordNet (copying Debian's files into the cache when needed); None if absent.

    The answer is remembered for the life of the process.
    """
    with _lock:
        if "location" not in _located:
            _located["location"] = _locate()
        return _located["location"]


def _locate() -> WordNetLocation | None:
    found = find_nltk_wordnet()
    if found is not None:
        return WordNetLocation(found, "nltk data")
    if not source_is_usable(DEBIAN_WORDNET_DIR):
        return None
    nltk_root = cache_nltk_root()
    try:
        corpus = ensure_wordnet_copy(DEBIAN_WORDNET_DIR, nltk_root)
    except OSError:
        return None  # an unwritable cache: fall back to exact+stem rather than fail
    import nltk  # NLTK: see find_nltk_wordnet

    if str(nltk_root) not in nltk.data.path:
        nltk.data.path.append(str(nltk_root))
    return WordNetLocation(str(corpus), "debian copy")


def meteor_variant() -> str:
    """'wordnet' when METEOR will match synonyms, else 'exact+stem'."""
    return METEOR_WORDNET if locate_wordnet() is not None else METEOR_EXACT_STEM


def load_wordnet() -> Any | None:
    """NLTK's WordNet reader, loaded (a few seconds, once per process); None if absent."""
    with _lock:
        if "reader" not in _loaded:
            reader = None
            location = locate_wordnet()
            if location is not None:
                from nltk.corpus import wordnet  # NLTK's WordNet: slow to import and to load, so only here

                try:
                    wordnet.ensure_loaded()
                except (LookupError, OSError, ValueError, AssertionError) as exc:
                    raise DataError(
                        f"WordNet could not be read ({exc}); remove the folder to rebuild it",
                        path=location.path,
                    ) from exc
                reader = wordnet
            _loaded["reader"] = reader
        return _loaded["reader"]


def load_synonyms() -> Any | None:
    """WordNet's synonyms as METEOR reads them, from the compact index in the user cache
    (built from NLTK's reader the first time: seconds; later a fraction of a second); None if absent."""
    with _lock:
        if "index" not in _loaded:
            index = None
            location = locate_wordnet()
            if location is not None:
                index = load_or_build(location.path, load_wordnet)
            _loaded["index"] = index
        return _loaded["index"]


def reset_wordnet_state() -> None:
    """Forget what was found, so the next call searches again (tests, cache changes)."""
    with _lock:
        _located.clear()
        _loaded.clear()


class NoSynonyms:
    """A WordNet stand-in without synsets: METEOR then matches exact words and stems only."""

    def synsets(self, word: str, *args: Any, **kwargs: Any) -> list[Any]:
        return []
