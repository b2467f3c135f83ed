"""The compact WordNet synonym index: the cache (built once, keyed by the WordNet files) on a
small fake WordNet, and equality with NLTK's own WordNet and METEOR where WordNet exists."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from nltk.translate.meteor_score import meteor_score

from dialjudge.core.metrics import synonym_index as si
from dialjudge.core.metrics import wordnet as wn
from dialjudge.core.metrics.engine import MetricEngine
from dialjudge.core.metrics.tokenize import meteor_tokens
from shared_data import require_file


class FakeLemma:
    def __init__(self, name: str) -> None:
        self._name = name

    def name(self) -> str:
        return self._name


class FakeSynset:
    def __init__(self, pos: str, offset: int, names: list[str]) -> None:
        self._pos, self._offset, self._names = pos, offset, names

    def pos(self) -> str:
        return self._pos

    def offset(self) -> int:
        return self._offset

    def lemmas(self) -> list[FakeLemma]:
        return [FakeLemma(n) for n in self._names]


class FakeReader:
    """The parts of NLTK's WordNetCorpusReader the index is built from."""

    def __init__(self) -> None:
        self.synsets_by_pos = {
            "n": [FakeSynset("n", 1, ["car", "auto", "motor_vehicle"]), FakeSynset("n", 2, ["mouse"]),
                  FakeSynset("n", 3, ["axis"]), FakeSynset("n", 4, ["ax", "axe"]),
                  FakeSynset("n", 5, ["hot_dog"])],
            "v": [FakeSynset("v", 1, ["run", "go"])],
            "a": [FakeSynset("s", 1, ["big", "large"]), FakeSynset("a", 2, ["good"])],
            "r": [],
        }
        self._lemma_pos_offset_map = {
            "car": {"n": [1]}, "auto": {"n": [1]}, "mouse": {"n": [2]}, "axis": {"n": [3]},
            "ax": {"n": [4]}, "axe": {"n": [4]}, "run": {"v": [1]}, "go": {"v": [1]},
            "big": {"a": [1], "s": [1]}, "large": {"a": [1], "s": [1]}, "good": {"a": [2], "s": [2]},
            "hot_dog": {"n": [5]},
        }
        self._exception_map = {"n": {"mice": ["mouse"], "axes": ["axis", "ax"]}, "v": {"ran": ["run"]},
                               "a": {"better": ["good"]}, "r": {}, "s": {}}
        self.loaded = False

    def ensure_loaded(self) -> None:
        self.loaded = True

    def all_synsets(self, pos: str) -> list[FakeSynset]:
        return self.synsets_by_pos[pos]


@pytest.fixture
def fake_wordnet(tmp_path: Path) -> Path:
    folder = tmp_path / "wordnet"
    folder.mkdir()
    for name in ("index.noun", "data.noun"):
        (folder / name).write_text(f"{name}\n", encoding="ascii")
    return folder


def names(index: si.SynonymIndex, word: str) -> set[str]:
    return {lemma.name() for synset in index.synsets(word) for lemma in synset.lemmas()}


def test_lookups_follow_nltks_morphology_on_a_fake_wordnet():
    index = si.build_index(FakeReader())
    assert names(index, "car") == names(index, "Cars") == {"car", "auto"}  # rule s -> '', lowercased
    assert names(index, "mice") == {"mouse"}  # the exception list
    assert names(index, "axes") == {"axis", "ax", "axe"}  # an exception with two lemmas
    assert names(index, "goes") == {"run", "go"}  # verb rule es -> ''
    assert names(index, "ran") == {"run", "go"}
    assert names(index, "larger") == {"big", "large"}  # a satellite adjective, rule er -> e
    assert names(index, "better") == {"good"}
    assert index.synsets("hot_dog") == [] and index.synsets("xyzzy") == []  # multi-word names dropped


def test_the_file_round_trips_and_refuses_damage():
    index = si.build_index(FakeReader())
    blob = index.to_bytes()
    again = si.SynonymIndex.from_bytes(blob)
    for word in ("cars", "mice", "axes", "ran", "bigger", "better", "xyzzy"):
        assert names(again, word) == names(index, word)
    for broken in (blob[:-3], b"something else", blob[:40]):
        with pytest.raises(ValueError):
            si.SynonymIndex.from_bytes(broken)


def test_the_index_is_built_once_and_rebuilt_when_wordnet_changes(fake_wordnet: Path, tmp_path: Path):
    built: list[FakeReader] = []

    def reader() -> FakeReader:
        built.append(FakeReader())
        return built[-1]

    folder = tmp_path / "cache"
    first = si.load_or_build(str(fake_wordnet), reader, folder)
    assert len(built) == 1 and built[0].loaded
    (path,) = folder.iterdir()
    assert path == si.index_path(str(fake_wordnet), folder)
    second = si.load_or_build(str(fake_wordnet), reader, folder)
    assert len(built) == 1  # read from the file, NLTK's reader not touched
    assert names(second, "mice") == names(first, "mice") == {"mouse"}

    data = fake_wordnet / "data.noun"
    data.write_text("data.noun from an upgraded package\n", encoding="ascii")
    os.utime(data, ns=(1_000_000_000, 1_000_000_000))
    si.load_or_build(str(fake_wordnet), reader, folder)
    assert len(built) == 2  # another identity: another index
    assert len(list(folder.glob("synonyms-*.bin"))) == 2

    si.index_path(str(fake_wordnet), folder).write_bytes(b"half an index")
    assert names(si.load_or_build(str(fake_wordnet), reader, folder), "cars") == {"car", "auto"}
    assert len(built) == 3  # a damaged file is rebuilt


def test_an_unwritable_cache_still_gives_the_index(fake_wordnet: Path, tmp_path: Path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    index = si.load_or_build(str(fake_wordnet), FakeReader, blocker / "cache")
    assert names(index, "mice") == {"mouse"}


def test_the_cache_dir_honours_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    from platformdirs import user_cache_dir

    monkeypatch.setenv(si.CACHE_DIR_ENV, str(tmp_path / "c"))
    assert si.cache_dir() == tmp_path / "c"
    monkeypatch.delenv(si.CACHE_DIR_ENV)
    assert si.cache_dir() == Path(user_cache_dir("dialjudge", appauthor=False))


def test_a_zipped_nltk_wordnet_is_identified_by_its_zip(tmp_path: Path):
    archive = tmp_path / "corpora" / "wordnet.zip"
    archive.parent.mkdir()
    archive.write_bytes(b"PK")
    assert si.wordnet_files(str(archive / "wordnet")) == [archive]


# -- against NLTK's own WordNet, where it exists ----------------------------------------------


@pytest.fixture(scope="module")
def nltk_wordnet():
    wn.reset_wordnet_state()
    reader = wn.load_wordnet()
    if reader is None:
        pytest.skip("no WordNet: neither NLTK data nor Debian's wordnet-base is installed")
    yield reader
    wn.reset_wordnet_state()


@pytest.fixture(scope="module")
def index(nltk_wordnet) -> si.SynonymIndex:
    loaded = wn.load_synonyms()
    assert isinstance(loaded, si.SynonymIndex)
    return loaded


INFLECTED = ["cars", "autos", "running", "ran", "went", "better", "best", "mice", "geese", "children",
             "axes", "happier", "Dogs", "was", "is", "lying", "bigger", "quickly", "xyzzy", "don't", "U.S."]


def test_every_lookup_equals_nltks_synsets(nltk_wordnet, index, shared_data: Path):
    from dialjudge.core.loaders.usr import read_usr

    dataset = read_usr(require_file(shared_data, "usr/usr_topical_chat.json"))
    words = {token.lower() for ex in dataset.examples for text in (ex.candidate or "", *ex.references)
             for token in meteor_tokens(text)}
    words |= set(INFLECTED)
    assert len(words) > 1000
    for word in sorted(words):
        expected = {lemma.name() for synset in nltk_wordnet.synsets(word) for lemma in synset.lemmas()
                    if "_" not in lemma.name()}
        assert names(index, word) == expected, word


PAIRS = [
    ("the car is red", "the auto is red"),
    ("he ran quickly to the big house", "he was running fast to the large home"),
    ("the mice ate the cheese", "a mouse eats cheese"),
    ("i think that movie was better than the book", "the film was good, better than the novel"),
    ("she has two children and three dogs", "her kids play with their puppies"),
    ("i love hiking in the mountains", "i enjoy walking in the hills"),
]


def test_meteor_with_the_index_equals_nltks_meteor_with_wordnet(nltk_wordnet, index):
    engine = MetricEngine(["meteor"], wordnet=index)
    for candidate, reference in PAIRS:
        expected = meteor_score([meteor_tokens(reference)], meteor_tokens(candidate), wordnet=nltk_wordnet)
        assert engine.score(candidate, [reference])["meteor"] == pytest.approx(expected, abs=1e-12), candidate
    # The synonyms matter in these pairs: without them METEOR is lower.
    plain = MetricEngine(["meteor"], wordnet=wn.NoSynonyms())
    assert plain.score(*PAIRS[0][:1], [PAIRS[0][1]])["meteor"] < engine.score(PAIRS[0][0], [PAIRS[0][1]])["meteor"]
