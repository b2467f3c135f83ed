"""core/ is the engine: it must work without the UI libraries loaded."""

from __future__ import annotations

import json
import os
import pkgutil
import subprocess
import sys

import dialjudge.core


def all_core_modules() -> list[str]:
    names = ["dialjudge.core"]
    for info in pkgutil.walk_packages(dialjudge.core.__path__, prefix="dialjudge.core."):
        names.append(info.name)
    return names


def test_core_has_modules_to_check() -> None:
    modules = all_core_modules()
    assert "dialjudge.core.model" in modules
    assert len(modules) > 5


def test_importing_every_core_module_loads_no_ui_library() -> None:
    script = (
        "import importlib, json, sys\n"
        f"mods = {all_core_modules()!r}\n"
        "for m in mods: importlib.import_module(m)\n"
        "ui = sorted(n for n in sys.modules if n.split('.')[0] in ('textual', 'rich'))\n"
        "print(json.dumps(ui))\n"
    )
    # The child must import the checkout under test, not whichever copy is pip-installed.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr
    loaded = json.loads(proc.stdout.strip().splitlines()[-1])
    assert loaded == [], f"core imported UI libraries: {loaded[:10]}"


def test_installed_packages_are_namespaced() -> None:
    """Nothing is importable as a bare `core` or `tui` package."""
    proc = subprocess.run(
        [sys.executable, "-c", "import importlib.util as u; print(u.find_spec('core'), u.find_spec('tui'))"],
        capture_output=True, text=True, cwd="/", timeout=60,
    )
    assert proc.stdout.strip() == "None None"
