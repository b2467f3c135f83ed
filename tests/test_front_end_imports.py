"""The front ends reach core through core.api: the third import-linter contract covers every core module,
and the command line imports at most a dozen core modules besides the layer's own."""

from __future__ import annotations

import sys
from pathlib import Path

import grimp
import pytest

from import_counts import CORE, REPO_ROOT, core_modules_imported, own_imports_in_functions

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

#: What a front end may import from core (ARCHITECTURE.md, "What a front end may import").
ALLOWED = {f"{CORE}.api", f"{CORE}.model", f"{CORE}.errors", f"{CORE}.format", f"{CORE}.table_fit"}
#: The issue's limit for each front end.
MOST_CORE_MODULES = 12


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("dialjudge", cache_dir=None)


def _front_end_contract() -> dict[str, object]:
    config = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == "forbidden" and "dialjudge.cli" in c["source_modules"]
                   and "import from core only" in c["name"]]
    return contract


def test_the_contract_forbids_every_core_module_but_the_application_layer_and_its_types(
        graph: grimp.ImportGraph) -> None:
    contract = _front_end_contract()
    core_children = set(graph.find_children(CORE))
    assert core_children >= ALLOWED
    # A new core module is forbidden to the front ends until someone decides otherwise here.
    assert set(contract["forbidden_modules"]) == core_children - ALLOWED  # type: ignore[arg-type]
    assert set(contract["source_modules"]) == {"dialjudge.tui", "dialjudge.cli", "dialjudge.api"}  # type: ignore[arg-type]


def test_only_app_modules_are_ignored_and_never_the_command_line() -> None:
    ignored = [str(line) for line in _front_end_contract().get("ignore_imports", [])]  # type: ignore[attr-defined]
    assert all(line.startswith("dialjudge.tui.") for line in ignored), ignored
    # Moved onto core.api in issue 18: they may not come back into the list.
    moved = ("dialjudge.tui.controllers.runs ", "dialjudge.tui.controllers.history ", "dialjudge.tui.services ",
             "dialjudge.tui.state ")
    assert not [line for line in ignored if line.startswith(moved)]


def test_the_command_line_imports_at_most_a_dozen_core_modules_besides_the_application_layer(
        graph: grimp.ImportGraph) -> None:
    imported = core_modules_imported(graph, "dialjudge.cli")
    # core.api's own modules (its types, events, formatting and topic modules) are the layer itself.
    outside_the_layer = {m for m in imported if not m.startswith(f"{CORE}.api.")}
    assert len(outside_the_layer) <= MOST_CORE_MODULES, imported
    assert set(imported) <= ALLOWED | {m for m in imported if m.startswith(f"{CORE}.api.")}, imported


def test_the_command_line_and_the_run_controllers_import_their_own_modules_at_the_top() -> None:
    cli = own_imports_in_functions(REPO_ROOT / "cli")
    # The one left: the entry point opens the app, whose Textual import the headless commands never pay.
    assert cli == {str(Path("cli/main.py")): 1}
    controllers = own_imports_in_functions(REPO_ROOT / "tui" / "controllers")
    assert not {f for f in controllers if f.endswith(("controllers/runs.py", "controllers/history.py"))}
