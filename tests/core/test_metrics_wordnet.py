"""WordNet discovery for METEOR: the Debian copy into the cache, and the fallback."""

from __future__ import annotations

import threading
from pathlib import Path

import nltk
import pytest

from dialjudge.core.metrics import wordnet as wn
from dialjudge.core.metrics.registry import metric_info
from dialjudge.core.metrics.wordnet import METEOR_EXACT_STEM, METEOR_WORDNET


@pytest.fixture
def fresh_state(monkeypatch: pytest.MonkeyPatch):
    """No NLTK WordNet, a private nltk.data.path, and forgotten discoveries."""
    monkeypatch.setattr(nltk.data, "path", list(nltk.data.path))
    monkeypatch.setattr(wn, "find_nltk_wordnet", lambda: None)
    wn.reset_wordnet_state()
    yield
    wn.reset_wordnet_state()


def fake_source(folder: Path, *, with_optional: bool = True) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    names = wn.REQUIRED_FILES + (wn.OPTIONAL_FILES if with_optional else ())
    for name in names:
        (folder / name).write_text(f"contents of {name}\n", encoding="ascii")
    return folder


def test_lexnames_follows_the_man_page_table():
    lines = wn.lexnames_text().splitlines()
    assert len(lines) == 45
    rows = [line.split("\t") for line in lines]
    assert all(len(row) == 3 for row in rows)
    assert [int(row[0]) for row in rows] == list(range(45))
    assert rows[0] == ["00", "adj.all", "3"]
    assert rows[2] == ["02", "adv.all", "4"]
    assert rows[3] == ["03", "noun.Tops", "1"]
    assert rows[29] == ["29", "verb.body", "2"]
    assert rows[44] == ["44", "adj.ppl", "3"]


def test_copy_creates_a_complete_corpus_of_real_files(tmp_path: Path):
    source = fake_source(tmp_path / "src")
    corpus = wn.ensure_wordnet_copy(source, tmp_path / "nltk_data")
    assert corpus == tmp_path / "nltk_data" / "corpora" / "wordnet"
    for name in wn.REQUIRED_FILES + wn.OPTIONAL_FILES:
        copied = corpus / name
        assert copied.is_file() and not copied.is_symlink()
        assert copied.read_text() == (source / name).read_text()
    assert (corpus / "lexnames").read_text() == wn.lexnames_text()
    leftovers = [p.name for p in corpus.parent.iterdir() if p.name != "wordnet"]
    assert leftovers == []


def test_copy_is_done_once(tmp_path: Path):
    source = fake_source(tmp_path / "src")
    corpus = wn.ensure_wordnet_copy(source, tmp_path / "nltk_data")
    marker = corpus / "index.noun"
    before = marker.stat().st_ino, marker.stat().st_mtime_ns
    assert wn.ensure_wordnet_copy(source, tmp_path / "nltk_data") == corpus
    assert (marker.stat().st_ino, marker.stat().st_mtime_ns) == before


def test_outdated_copy_is_replaced(tmp_path: Path):
    source = fake_source(tmp_path / "src")
    corpus = wn.ensure_wordnet_copy(source, tmp_path / "nltk_data")
    (source / "data.noun").write_text("a newer, longer data.noun from an upgraded package\n")
    wn.ensure_wordnet_copy(source, tmp_path / "nltk_data")
    assert (corpus / "data.noun").read_text() == (source / "data.noun").read_text()
    assert sorted(p.name for p in corpus.parent.iterdir()) == ["wordnet"]


def test_optional_files_may_be_missing(tmp_path: Path):
    source = fake_source(tmp_path / "src", with_optional=False)
    corpus = wn.ensure_wordnet_copy(source, tmp_path / "nltk_data")
    assert (corpus / "data.verb").is_file() and not (corpus / "index.sense").exists()


def test_source_without_wordnet_is_refused(tmp_path: Path):
    source = fake_source(tmp_path / "src")
    (source / "data.adv").unlink()
    with pytest.raises(FileNotFoundError, match="data.adv"):
        wn.ensure_wordnet_copy(source, tmp_path / "nltk_data")


def test_concurrent_copies_leave_one_complete_corpus(tmp_path: Path):
    source = fake_source(tmp_path / "src")
    root = tmp_path / "nltk_data"
    results: list[Path] = []
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def copy() -> None:
        start.wait()
        try:
            results.append(wn.ensure_wordnet_copy(source, root))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=copy) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    corpus = root / "corpora" / "wordnet"
    assert results == [corpus] * 4
    assert (corpus / "lexnames").read_text() == wn.lexnames_text()
    assert sorted(p.name for p in corpus.parent.iterdir()) == ["wordnet"]


def test_locate_copies_debian_files_into_the_cache(tmp_path, monkeypatch, fresh_state):
    source = fake_source(tmp_path / "usr-share-wordnet")
    monkeypatch.setattr(wn, "DEBIAN_WORDNET_DIR", source)
    monkeypatch.setattr(wn, "cache_nltk_root", lambda: tmp_path / "cache" / "nltk_data")
    location = wn.locate_wordnet()
    assert location is not None and location.origin == "debian copy"
    assert Path(location.path) == tmp_path / "cache" / "nltk_data" / "corpora" / "wordnet"
    assert str(tmp_path / "cache" / "nltk_data") in nltk.data.path
    assert wn.meteor_variant() == METEOR_WORDNET
    assert metric_info("meteor").label == "METEOR"


def test_nltk_data_wins_over_the_debian_copy(tmp_path, monkeypatch, fresh_state):
    monkeypatch.setattr(wn, "find_nltk_wordnet", lambda: "/somewhere/nltk_data/corpora/wordnet")
    monkeypatch.setattr(wn, "cache_nltk_root", lambda: tmp_path / "cache")
    location = wn.locate_wordnet()
    assert location == wn.WordNetLocation("/somewhere/nltk_data/corpora/wordnet", "nltk data")
    assert not (tmp_path / "cache").exists()


def test_no_wordnet_anywhere_means_exact_and_stem(tmp_path, monkeypatch, fresh_state):
    monkeypatch.setattr(wn, "DEBIAN_WORDNET_DIR", tmp_path / "absent")
    monkeypatch.setattr(wn, "cache_nltk_root", lambda: tmp_path / "cache")
    assert wn.locate_wordnet() is None
    assert wn.load_wordnet() is None
    assert wn.meteor_variant() == METEOR_EXACT_STEM
    info = metric_info("meteor")
    assert info.id == "meteor"
    assert info.label == "METEOR (exact+stem)"
    assert info.note and "WordNet" in info.note


def test_unwritable_cache_falls_back_instead_of_failing(tmp_path, monkeypatch, fresh_state):
    source = fake_source(tmp_path / "usr-share-wordnet")
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the cache folder should go")
    monkeypatch.setattr(wn, "DEBIAN_WORDNET_DIR", source)
    monkeypatch.setattr(wn, "cache_nltk_root", lambda: blocker / "nltk_data")
    assert wn.locate_wordnet() is None
    assert wn.meteor_variant() == METEOR_EXACT_STEM


def test_default_cache_is_under_the_user_cache_dir(monkeypatch, tmp_path):
    from platformdirs import user_cache_dir

    monkeypatch.delenv("DIALJUDGE_CACHE_DIR", raising=False)
    root = wn.cache_nltk_root()
    assert root == Path(user_cache_dir("dialjudge", appauthor=False)) / "nltk_data"
    assert root.parent.name == "dialjudge"
    monkeypatch.setenv("DIALJUDGE_CACHE_DIR", str(tmp_path / "elsewhere"))
    assert wn.cache_nltk_root() == tmp_path / "elsewhere" / "nltk_data"
