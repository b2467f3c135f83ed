"""Fixtures shared by every test tier."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA_ENV = "DIALJUDGE_SHARED_DATA"


def shared_data_dir() -> Path:
    """The real meta-evaluation data beside the checkout (never copied into the repo)."""
    env = os.environ.get(SHARED_DATA_ENV)
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    root = shared_data_dir()
    if not root.is_dir():
        pytest.skip(f"real data folder {root} is absent (set ${SHARED_DATA_ENV} to point at it)")
    return root


def require_file(root: Path, relative: str) -> Path:
    path = root / relative
    if not path.is_file():
        pytest.skip(f"{path} is absent from the shared data folder")
    return path


@pytest.fixture(autouse=True)
def isolated_user_dirs(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test gets its own data dir and an empty config, so nothing touches ~/."""
    base = tmp_path_factory.mktemp("user")
    monkeypatch.setenv("DIALJUDGE_DATA_DIR", str(base / "data"))
    config = base / "dialjudge.toml"
    config.write_text(f'[data]\ndirs = ["{shared_data_dir()}"]\n', encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config))
    return base
