"""Fixtures for the app's pilot and snapshot tests."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import pytest
from tui_helpers import make_services

from dialjudge.tui.services import Services


@pytest.fixture
def services(tmp_path: Path) -> Services:
    return make_services(tmp_path)


@pytest.fixture
def services_factory(tmp_path: Path) -> Callable[..., Services]:
    return lambda **kw: make_services(tmp_path, **kw)
