"""Fixtures shared by every test tier."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from shared_data import SHARED_DATA_ENV, shared_data_dir


@pytest.fixture(scope="session")
def shared_data() -> Path:
    root = shared_data_dir()
    if not root.is_dir():
        pytest.skip(f"real data folder {root} is absent (set ${SHARED_DATA_ENV} to point at it)")
    return root


@pytest.fixture(scope="session")
def session_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the session: the WordNet synonym index is built once, not per test."""
    return tmp_path_factory.mktemp("cache")


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                       session_cache_dir: Path) -> Path:
    """Every test gets its own data dir and an empty config, so nothing touches ~/."""
    monkeypatch.setenv("DIALJUDGE_CACHE_DIR", str(session_cache_dir))
    base = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("DIALJUDGE_DATA_DIR", str(base / "data"))
    config = base / "dialjudge.toml"
    config.write_text(f'[data]\ndirs = ["{shared_data_dir()}"]\n', encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    return base


@pytest.fixture(autouse=True)
def collector_unfrozen() -> Iterator[None]:
    """The app's background work freezes what it leaves alive (core.gc_pause): right in the app's
    one process, a leak in a test session that starts hundreds of apps, each of them frozen alive
    and then dropped. Every test's frozen objects go back to the collector when it ends."""
    yield
    gc.unfreeze()


@pytest.fixture(scope="session")
def usr_leaderboard(shared_data: Path, tmp_path_factory: pytest.TempPathFactory) -> object:
    """Issue 35's runs on USR Topical-Chat Overall (tests/usr_leaderboard.py), judged once a session: the
    core test and the app's test rank the same store."""
    from usr_leaderboard import build_usr_leaderboard_store

    return build_usr_leaderboard_store(shared_data, tmp_path_factory.mktemp("usr-leaderboard"))
