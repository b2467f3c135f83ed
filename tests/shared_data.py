"""Where the real rated data lives, for tests (imported by name: a conftest's name is not unique)."""

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


def require_file(root: Path, relative: str) -> Path:
    path = root / relative
    if not path.is_file():
        pytest.skip(f"{path} is absent from the shared data folder")
    return path
