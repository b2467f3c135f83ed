"""A compact WordNet synonym index for METEOR, built once into the user cache.

NLTK's METEOR asks WordNet one question per unmatched word: the single-word
lemma names of every synset ``wordnet.synsets(word)`` returns. Loading NLTK's
WordNet reader to answer it costs seconds in every process, so the answers are
precomputed once, for every (part of speech, lemma form) in WordNet, and kept
with WordNet's exception lists and NLTK's morphological rules. A lookup then
repeats what ``synsets`` does (lowercase, ``_morphy`` per part of speech, union
over the forms found) on the index, giving the same set of names.

The index is one binary file (a JSON header, then newline-joined texts and
uint32 arrays, so loading it creates few Python objects) in ``<cache dir>/wordnet-index/`` (``$DIALJUDGE_CACHE_DIR``
overrides the user cache dir), named after the identity of the WordNet files it
was built from (their paths, sizes and modification times) and the NLTK version,
so upgrading either builds a new one. It is written to a temporary file and
renamed into place, so a reader never sees half of it.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from array import array
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import platformdirs

from .signature_parts import distribution_version

#: Bump when the file layout changes.
INDEX_FORMAT = 1
CACHE_DIR_ENV = "DIALJUDGE_CACHE_DIR"
#: The parts of speech ``synsets`` searches, in its order (nltk.corpus.reader.wordnet.POS_LIST).
POS_LIST = ("n", "v", "a", "r")


def cache_dir() -> Path:
    """dialjudge's cache folder: ``$DIALJUDGE_CACHE_DIR``, else the platform's user cache dir."""
    env = os.environ.get(CACHE_DIR_ENV)
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir("dialjudge", appauthor=False))


def wordnet_files(location: str) -> list[Path]:
    """The files WordNet is read from: the folder's database files, or the zip holding them."""
    path = Path(location)
    if path.is_dir():
        return sorted(p for p in path.iterdir() if p.is_file())
    for parent in (path, *path.parents):  # ".../corpora/wordnet.zip/wordnet/"
        if parent.is_file():
            return [parent]
    return []


def wordnet_identity(location: str) -> str:
    """A hash of the WordNet files' paths, sizes and modification times, plus the NLTK version."""
    digest = hashlib.sha256(f"format:{INDEX_FORMAT}|nltk:{distribution_version('nltk')}".encode())
    for file in wordnet_files(location):
        stat = file.stat()
        digest.update(f"|{file.resolve()}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:24]


class SynonymSet:
    """A stand-in synset: METEOR reads only ``lemma.name()`` of ``synset.lemmas()``."""

    __slots__ = ("_lemmas",)

    def __init__(self, names: Iterable[str]) -> None:
        self._lemmas = tuple(_Lemma(name) for name in names)

    def lemmas(self) -> tuple[_Lemma, ...]:
        return self._lemmas


class _Lemma:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class SynonymIndex:
    """Answers ``synsets(word)`` as NLTK's METEOR matcher reads it, from the compact index.

    Per part of speech: the lemma forms (a position each), and for form ``i`` the
    vocabulary ids ``ids[starts[i]:starts[i + 1]]`` of its single-word synonyms.
    """

    def __init__(self, vocab: Sequence[str], forms: Mapping[str, Sequence[str]],
                 starts: Mapping[str, Sequence[int]], ids: Mapping[str, Sequence[int]],
                 exceptions: Mapping[str, Mapping[str, Sequence[str]]],
                 substitutions: Mapping[str, Sequence[Sequence[str]]]) -> None:
        self._vocab = vocab
        self._position = {pos: {form: i for i, form in enumerate(forms[pos])} for pos in POS_LIST}
        self._starts = starts
        self._ids = ids
        self._exceptions = exceptions
        self._substitutions = substitutions

    def synonyms(self, word: str) -> list[str]:
        """The single-word lemma names of every synset of ``word``, each once."""
        word = word.lower()
        found: dict[str, None] = {}
        for pos in POS_LIST:
            position, starts, ids = self._position[pos], self._starts[pos], self._ids[pos]
            for form in self._morphy(word, pos):
                i = position[form]
                found.update(dict.fromkeys(self._vocab[k] for k in ids[starts[i]:starts[i + 1]]))
        return list(found)

    def synsets(self, word: str) -> list[SynonymSet]:
        names = self.synonyms(word)
        return [SynonymSet(names)] if names else []

    def _morphy(self, form: str, pos: str) -> list[str]:
        # WordNetCorpusReader._morphy, on the index: the exception list or the
        # rules applied once, then the forms the index holds for this pos.
        # Forms whose synsets have no single-word name are left out of the index;
        # they would add nothing to the union anyway.
        exceptions = self._exceptions[pos]
        if form in exceptions:
            forms = list(exceptions[form])
        else:
            forms = [form[: -len(old)] + new for old, new in self._substitutions[pos] if form.endswith(old)]
        position = self._position[pos]
        return list(dict.fromkeys(f for f in [form, *forms] if f in position))

    # -- the file ----------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        """Magic, a JSON header (exceptions, rules, section sizes), then the sections:
        texts joined by newlines (no WordNet lemma holds one) and native uint32 arrays."""
        sections: list[bytes] = [_text(self._vocab)]
        for pos in POS_LIST:
            sections += [_text(self._position[pos]), _uint32(self._starts[pos]), _uint32(self._ids[pos])]
        header = json.dumps({
            "format": INDEX_FORMAT, "byteorder": sys.byteorder, "sizes": [len(b) for b in sections],
            "exceptions": self._exceptions, "substitutions": self._substitutions,
        }, ensure_ascii=False).encode("utf-8")
        return b"".join([_MAGIC, len(header).to_bytes(8, "little"), header, *sections])

    @classmethod
    def from_bytes(cls, blob: bytes) -> SynonymIndex:
        """Raises ValueError for anything but a complete index of this format."""
        if not blob.startswith(_MAGIC):
            raise ValueError("not a dialjudge synonym index")
        at = len(_MAGIC) + 8
        header_end = at + int.from_bytes(blob[len(_MAGIC):at], "little")
        header = json.loads(blob[at:header_end])
        if header.get("format") != INDEX_FORMAT or header.get("byteorder") != sys.byteorder:
            raise ValueError("a synonym index of another format")
        sizes = header["sizes"]
        if header_end + sum(sizes) != len(blob) or len(sizes) != 1 + 3 * len(POS_LIST):
            raise ValueError("a truncated synonym index")
        parts, at = [], header_end
        for size in sizes:
            parts.append(blob[at:at + size])
            at += size
        vocab = parts[0].decode("utf-8").split("\n")
        forms, starts, ids = {}, {}, {}
        for k, pos in enumerate(POS_LIST):
            text, start_bytes, id_bytes = parts[1 + 3 * k: 4 + 3 * k]
            forms[pos] = text.decode("utf-8").split("\n") if text else []
            starts[pos], ids[pos] = _array(start_bytes), _array(id_bytes)
            if len(starts[pos]) != len(forms[pos]) + 1:
                raise ValueError("an inconsistent synonym index")
        return cls(vocab, forms, starts, ids, header["exceptions"], header["substitutions"])


_MAGIC = b"dialjudge-synonyms\n"


def _text(items: Iterable[str]) -> bytes:
    return "\n".join(items).encode("utf-8")


def _uint32(values: Sequence[int]) -> bytes:
    return array("I", values).tobytes() if array("I").itemsize == 4 else array("L", values).tobytes()


def _array(blob: bytes) -> array[int]:
    out = array("I") if array("I").itemsize == 4 else array("L")
    out.frombytes(blob)
    return out


def build_index(reader: Any) -> SynonymIndex:
    """The index of an NLTK WordNetCorpusReader (loads all of WordNet: seconds).

    Reads the reader's lemma -> (pos, offsets) map and exception lists, which
    NLTK keeps in private attributes; there is no public call that lists the
    synsets of an exact form without applying morphology first.
    """
    from nltk.corpus.reader.wordnet import WordNetCorpusReader  # NLTK is slow to import: only when building

    reader.ensure_loaded()  # a LazyCorpusLoader becomes the reader itself
    lemma_map: Mapping[str, Mapping[str, Sequence[int]]] = reader._lemma_pos_offset_map
    exception_map: Mapping[str, Mapping[str, Sequence[str]]] = reader._exception_map

    vocab: dict[str, int] = {}
    by_offset: dict[tuple[str, int], list[int]] = {}
    for pos in POS_LIST:
        for synset in reader.all_synsets(pos):
            file_pos = "a" if synset.pos() in ("a", "s") else synset.pos()
            by_offset[(file_pos, synset.offset())] = [
                vocab.setdefault(name, len(vocab))
                for name in dict.fromkeys(lemma.name() for lemma in synset.lemmas()) if "_" not in name]
    forms: dict[str, list[str]] = {pos: [] for pos in POS_LIST}
    starts: dict[str, list[int]] = {pos: [0] for pos in POS_LIST}
    ids: dict[str, list[int]] = {pos: [] for pos in POS_LIST}
    for form, offsets_by_pos in lemma_map.items():
        for pos in POS_LIST:
            offsets = offsets_by_pos.get(pos)
            if not offsets:
                continue
            names = list(dict.fromkeys(i for offset in offsets for i in by_offset[(pos, offset)]))
            if names:
                forms[pos].append(form)
                ids[pos].extend(names)
                starts[pos].append(len(ids[pos]))
    return SynonymIndex(
        list(vocab), forms, starts, ids,
        exceptions={pos: {k: list(v) for k, v in exception_map[pos].items()} for pos in POS_LIST},
        substitutions={pos: [list(rule) for rule in WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS[pos]]
                       for pos in POS_LIST},
    )


def index_path(location: str, folder: Path | None = None) -> Path:
    folder = cache_dir() / "wordnet-index" if folder is None else folder
    return folder / f"synonyms-{wordnet_identity(location)}.bin"


def load_or_build(location: str, reader_factory: Any, folder: Path | None = None) -> SynonymIndex:
    """The index for the WordNet at ``location``: read from the cache, or built with
    ``reader_factory()`` (NLTK's reader) and saved. An unwritable cache still gives the index."""
    path = index_path(location, folder)
    try:
        return SynonymIndex.from_bytes(path.read_bytes())
    except (OSError, ValueError):
        pass  # absent, unreadable or stale: build it
    index = build_index(reader_factory())
    # A read-only cache costs the next process a rebuild, not this one its scores.
    with contextlib.suppress(OSError):
        _write_atomically(path, index.to_bytes())
    return index


def _write_atomically(path: Path, blob: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, staging = tempfile.mkstemp(prefix=".staging-", suffix=".bin", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise
