"""Dataset names: bundled samples, known files in the configured data folders, paths, and recent files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dialjudge.core.config import Config, load_config, user_data_dir
from dialjudge.core.dataset_catalogue import (
    BUNDLED,
    KNOWN_FILES,
    RECENT_LIMIT,
    bundled_path,
    list_datasets,
    open_dataset,
    recent_files,
    remember_recent,
    resolve_dataset,
)
from dialjudge.core.errors import DataError
from dialjudge.core.model import Level
from shared_data import require_file

TESTS_DATA = Path(__file__).resolve().parents[1] / "data"
TINY = TESTS_DATA / "tiny_native.jsonl"


@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_bundled_names_resolve_and_open(name: str) -> None:
    entry = resolve_dataset(name, Config())
    assert entry.origin == "bundled" and entry.available
    assert entry.path == bundled_path(BUNDLED[name][0])
    dataset = open_dataset(name, Config())
    assert dataset.name == name and len(dataset) > 0
    assert recent_files() == []  # only files opened by path are remembered


def test_known_files_resolve_from_the_configured_data_dirs(shared_data: Path) -> None:
    path = require_file(shared_data, "usr/usr_topical_chat.json")
    config = load_config()  # the autouse fixture lists the shared data folder
    assert shared_data in config.data_dirs
    entry = resolve_dataset("usr-topicalchat", config)
    assert (entry.origin, entry.path) == ("data-folder", path)
    dataset = open_dataset("usr-topicalchat")
    assert dataset.name == "usr-topicalchat" and len(dataset) == 360
    assert recent_files() == []


def test_fed_levels_are_split(shared_data: Path) -> None:
    require_file(shared_data, "fed/fed_data.json")
    turn = open_dataset("fed-turn")
    dialog = open_dataset("fed-dialog")
    everything = open_dataset("fed")
    assert (turn.name, len(turn)) == ("fed-turn", 375)
    assert (dialog.name, len(dialog)) == ("fed-dialog", 125)
    assert len(everything) == 500
    assert all(ex.level is Level.TURN for ex in turn)
    assert all(ex.level is Level.DIALOG for ex in dialog)


def test_known_file_without_a_data_folder_says_where_it_looked(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"'usr-personachat' is not available.*usr/usr_persona_chat\.json.*"
                                        r"no data folder configured"):
        resolve_dataset("usr-personachat", Config())
    with pytest.raises(DataError, match=rf"looked for fed/fed_data\.json in: {tmp_path}"):
        resolve_dataset("fed-turn", Config(data_dirs=(tmp_path,)))


def test_unknown_name_lists_every_name() -> None:
    with pytest.raises(DataError) as info:
        resolve_dataset("usr-topical", Config())
    message = str(info.value)
    assert "no dataset named 'usr-topical' and no such file" in message
    for name in [*BUNDLED, *(k.name for k in KNOWN_FILES)]:
        assert name in message


def test_list_shows_unavailable_known_files(tmp_path: Path) -> None:
    entries = {e.name: e for e in list_datasets(Config(data_dirs=(tmp_path,)))}
    assert set(entries) == {*BUNDLED, *(k.name for k in KNOWN_FILES)}
    assert entries["sample"].available
    assert not entries["usr-topicalchat"].available and entries["usr-topicalchat"].path is None
    assert entries["fed-dialog"].level is Level.DIALOG and entries["fed"].level is None


def test_a_path_opens_and_is_remembered_in_the_data_dir() -> None:
    dataset = open_dataset(str(TINY), Config())
    assert dataset.name == "tiny-zh"  # the file's own name, not the file name
    assert recent_files() == [TINY]
    stored = json.loads((user_data_dir() / "recent.json").read_text(encoding="utf-8"))
    assert stored == [str(TINY)]

    recent = [e for e in list_datasets(Config()) if e.origin == "recent"]
    assert [(e.name, e.path) for e in recent] == [(TINY.name, TINY)]
    # Recent files are listed but are opened by path, not by their short name.
    assert resolve_dataset(str(TINY), Config()).origin == "file"


def test_remember_false_leaves_no_trace() -> None:
    open_dataset(str(TINY), Config(), remember=False)
    assert recent_files() == []


def test_recent_files_are_newest_first_without_duplicates_and_capped(tmp_path: Path) -> None:
    paths = []
    for i in range(RECENT_LIMIT + 2):
        path = tmp_path / f"set{i}.jsonl"
        path.write_text("", encoding="utf-8")
        paths.append(path)
        remember_recent(path)
    remember_recent(paths[3])  # opening again moves it to the front
    recent = recent_files()
    assert len(recent) == RECENT_LIMIT
    assert recent[0] == paths[3]
    assert recent[1:4] == [paths[-1], paths[-2], paths[-3]]
    assert recent.count(paths[3]) == 1
    assert paths[0] not in recent and paths[1] not in recent  # the oldest fell off


def test_a_broken_recent_file_is_ignored() -> None:
    target = user_data_dir() / "recent.json"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("{not json", encoding="utf-8")
    assert recent_files() == []
    target.write_text(json.dumps(["/a/b.jsonl", 3, None]), encoding="utf-8")
    assert recent_files() == [Path("/a/b.jsonl")]


def test_kdconv_opens_by_name_and_by_path(tmp_path: Path) -> None:
    music = tmp_path / "kdconv" / "music" / "test.json"
    music.parent.mkdir(parents=True)
    dialogue = {"name": "x", "messages": [
        {"message": "你听过《晴天》吗？"},
        {"message": "听过，是周杰伦唱的。", "attrs": [{"name": "晴天", "attrname": "演唱者", "attrvalue": "周杰伦"}]}]}
    music.write_text(json.dumps([dialogue], ensure_ascii=False), encoding="utf-8")
    config = Config(data_dirs=(tmp_path / "empty", tmp_path))
    entries = {e.name: e for e in list_datasets(config)}
    assert entries["kdconv-music"].path == music and not entries["kdconv-film"].available
    by_name = open_dataset("kdconv-music", config)
    assert by_name.name == "kdconv-music" and len(by_name) == 1
    (only,) = by_name.examples
    assert only.id == "music-0-1" and only.language == "zh" and "closed" in only.tags
    by_path = open_dataset(str(music), config, remember=False)
    assert [ex.id for ex in by_path] == ["music-0-1"]
