"""How the app's modules hang together: core through core.api only, imports at the top of each module,
no import cycle, controllers below screens, screens reaching the app through DialjudgeHost."""

from __future__ import annotations

import ast
from pathlib import Path
from types import SimpleNamespace

import grimp
import pytest

from dialjudge.tui.controllers.datasets import DatasetLoaded
from dialjudge.tui.host import dialjudge_app
from dialjudge.tui.routes import Route, message_routes

TUI = "dialjudge.tui"
CORE = "dialjudge.core"
TUI_FOLDER = Path(__file__).resolve().parents[2] / "tui"
#: What a front end may import from core (ARCHITECTURE.md).
ALLOWED_CORE = {f"{CORE}.api", f"{CORE}.model", f"{CORE}.errors", f"{CORE}.format", f"{CORE}.table_fit"}


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("dialjudge", cache_dir=None)


def _app_modules(graph: grimp.ImportGraph) -> set[str]:
    return graph.find_descendants(TUI) | {TUI}


def _strongly_connected(nodes: set[str], edges: dict[str, set[str]]) -> list[set[str]]:
    """Tarjan's groups of modules that import each other, directly or through others (size > 1)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in edges.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(nodes):
        if node not in index:
            visit(node)
    return groups


def test_the_app_imports_from_core_only_the_application_layer_and_its_plain_types(graph: grimp.ImportGraph):
    imported = {target for module in _app_modules(graph) for target in graph.find_modules_directly_imported_by(module)
                if target == CORE or target.startswith(CORE + ".")}
    # core.api's own modules (its types, events, formatting and topic modules) are the layer itself.
    outside_the_layer = {m for m in imported if not m.startswith(f"{CORE}.api.")}
    assert outside_the_layer <= ALLOWED_CORE, sorted(outside_the_layer - ALLOWED_CORE)


def test_the_apps_own_imports_sit_at_the_top_of_each_module():
    inside: list[str] = []
    for path in sorted(TUI_FOLDER.rglob("*.py")):
        for function in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(function):
                own = (isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("dialjudge"))
                       or isinstance(node, ast.Import) and any(a.name.startswith("dialjudge") for a in node.names))
                if own:
                    inside.append(f"{path.relative_to(TUI_FOLDER)}:{node.lineno}")
    assert not inside


def test_no_import_cycle_among_the_apps_modules(graph: grimp.ImportGraph):
    modules = _app_modules(graph)
    edges = {m: {t for t in graph.find_modules_directly_imported_by(m) if t in modules} for m in modules}
    # A package importing its own children is Python's, not a cycle of ours.
    edges = {m: {t for t in targets if not t.startswith(m + ".")} for m, targets in edges.items()}
    assert _strongly_connected(modules, edges) == []


def test_a_cycle_would_be_found():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _strongly_connected(set(edges), edges) == [{"a", "b", "c"}]


def test_controllers_never_import_screens_or_the_app_and_screens_never_import_the_app(graph: grimp.ImportGraph):
    modules = _app_modules(graph)
    controllers = {m for m in modules if m.startswith(f"{TUI}.controllers")}
    screens_and_widgets = {m for m in modules if m.startswith((f"{TUI}.screens", f"{TUI}.widgets"))}
    for controller in controllers:
        upward = {t for t in graph.find_modules_directly_imported_by(controller)
                  if t.startswith((f"{TUI}.screens", f"{TUI}.widgets", f"{TUI}.app", f"{TUI}.navigation"))}
        assert not upward, (controller, upward)
    for module in screens_and_widgets:
        assert f"{TUI}.app" not in graph.find_modules_directly_imported_by(module), module


def test_a_screen_outside_the_dialjudge_app_is_told_so():
    with pytest.raises(TypeError, match="outside the dialjudge app"):
        dialjudge_app(SimpleNamespace(app=SimpleNamespace(services=None)))  # type: ignore[arg-type]


class _DatasetLoadedHandler:
    def on_dataset_loaded(self, message: DatasetLoaded) -> None: ...


def test_a_message_is_handled_once_routed_or_by_a_handler_never_both():
    route = Route(DatasetLoaded, lambda message: None)
    assert message_routes(object, [route]) == {DatasetLoaded: route}
    with pytest.raises(ValueError, match="routed twice"):
        message_routes(object, [route], [route])
    with pytest.raises(ValueError, match="also handled by _DatasetLoadedHandler.on_dataset_loaded"):
        message_routes(_DatasetLoadedHandler, [route])
