"""The distribution installs everything under the dialjudge namespace, with its data files."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
INSTALLED_FOLDERS = {"core": "dialjudge.core", "cli": "dialjudge.cli", "tui": "dialjudge.tui",
                     "prompts": "dialjudge.prompts", "datasets": "dialjudge.datasets"}


def packaged_names() -> set[str]:
    """The packages setuptools finds under src/ (where dialjudge/ links the top-level folders)."""
    from setuptools import find_packages

    return set(find_packages(where=str(ROOT / "src"), include=["dialjudge*"]))


def test_src_links_every_top_level_folder() -> None:
    for folder, package in INSTALLED_FOLDERS.items():
        link = ROOT / "src" / Path(*package.split("."))
        assert link.is_symlink(), f"{link} should link the top-level {folder}/ folder"
        assert link.resolve() == (ROOT / folder).resolve()


def test_every_source_folder_is_a_package() -> None:
    found = packaged_names()
    for folder, package in INSTALLED_FOLDERS.items():
        for init in (ROOT / folder).rglob("__init__.py"):
            relative = init.parent.relative_to(ROOT / folder)
            name = ".".join([package, *relative.parts]) if relative.parts else package
            assert name in found, f"{init.parent} holds Python code but {name} is not packaged"


def test_version_is_declared_once() -> None:
    import dialjudge

    data = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in data["project"]["dynamic"]
    assert data["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "dialjudge.__version__"}
    assert dialjudge.__version__.count(".") == 2


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )
    if proc.returncode != 0 and "No module named" in proc.stderr and "setuptools" in proc.stderr:
        pytest.skip("setuptools is not installed in this environment")
    assert proc.returncode == 0, proc.stderr
    return next(out.glob("dialjudge-*.whl"))


def test_wheel_is_namespaced_and_carries_its_data(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    top = {n.split("/")[0] for n in names if not n.startswith("dialjudge-")}
    assert top == {"dialjudge"}, f"unexpected top-level entries in the wheel: {sorted(top)}"
    for required in ("dialjudge/core/model.py", "dialjudge/cli/main.py", "dialjudge/tui/app.py",
                     "dialjudge/prompts/personas.toml", "dialjudge/prompts/templates/adv-0to1.toml",
                     "dialjudge/datasets/sample_dialogues.jsonl", "dialjudge/datasets/sample_incar_kpi.jsonl",
                     "dialjudge/datasets/schema.json", "dialjudge/datasets/README.md", "dialjudge/tui/app.tcss"):
        assert required in names, f"{required} is missing from the wheel"
    shipped = {n for n in names if n.endswith((".tcss", ".toml", ".jsonl"))}
    for folder, package in INSTALLED_FOLDERS.items():
        prefix = package.replace(".", "/")
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".tcss", ".toml", ".jsonl") and "__pycache__" not in path.parts:
                expected = f"{prefix}/{path.relative_to(ROOT / folder).as_posix()}"
                assert expected in shipped, f"{expected} is not packaged"


def test_console_script_is_installed() -> None:
    scripts = Path(sysconfig.get_path("scripts"))
    assert any((scripts / name).exists() for name in ("dialjudge", "dialjudge.exe"))
