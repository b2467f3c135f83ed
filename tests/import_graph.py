"""dialjudge's own import graph, read from the source with ``ast`` (nothing is imported).

Every ``import`` statement counts: at module level, inside a function, and under
``if TYPE_CHECKING:`` (it never runs, but a module that needs another's types to be
checked depends on it as much as one that runs its code; each edge says which kind it
is). So do the imports no statement names: a self-registering registry
(``core.self_registry.SelfRegistry``) imports every module of its package the first
time it is asked, and ``importlib.import_module("dialjudge...")`` imports the module
it names. Run as a script to print the counts the import checks are about::

    python tests/import_graph.py [PACKAGE ...]     # default: core tui cli
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

CHECKOUT = Path(__file__).resolve().parent.parent
ROOT_PACKAGE = "dialjudge"


@dataclass(frozen=True)
class ImportEdge:
    importer: str
    imported: str
    line: int
    in_function: bool
    #: Under ``if TYPE_CHECKING:``: for the type checker only.
    type_checking: bool = False
    #: Made at run time by a registry or ``importlib`` rather than by an import statement.
    dynamic: bool = False


@dataclass
class ImportGraph:
    modules: set[str] = field(default_factory=set)
    edges: list[ImportEdge] = field(default_factory=list)

    def successors(self, within: Iterable[str] | None = None) -> dict[str, set[str]]:
        keep = set(self.modules if within is None else within)
        graph: dict[str, set[str]] = {m: set() for m in keep}
        for edge in self.edges:
            if edge.importer in keep and edge.imported in keep and edge.importer != edge.imported:
                graph[edge.importer].add(edge.imported)
        return graph


def module_files(checkout: Path, packages: Iterable[str]) -> Iterator[tuple[str, Path]]:
    for package in packages:
        for path in sorted((checkout / package).rglob("*.py")):
            parts = list(path.relative_to(checkout).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join([ROOT_PACKAGE, *parts]), path


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
    """Every import statement, whether it sits inside a function and whether under ``if TYPE_CHECKING:``."""
    def walk(node: ast.AST, in_function: bool, typing_only: bool
             ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for body in child.body:
                    yield from walk_one(body, in_function, True)
                for orelse in child.orelse:
                    yield from walk_one(orelse, in_function, typing_only)
                continue
            yield from walk_one(child, in_function, typing_only)

    def walk_one(child: ast.AST, in_function: bool, typing_only: bool
                 ) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool, bool]]:
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function, typing_only
        inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        yield from walk(child, inner, typing_only)
    yield from walk(tree, False, False)


#: The class whose instances import every module of their own package (core/self_registry.py).
SELF_REGISTRY = "SelfRegistry"


def _call_name(call: ast.Call) -> str:
    func = call.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _registry_members(path: Path) -> list[str]:
    """The modules ``pkgutil.iter_modules`` finds beside ``path`` (what a SelfRegistry there imports)."""
    folder = path.parent
    names = [p.stem for p in folder.glob("*.py") if p.name != "__init__.py"]
    names += [p.name for p in folder.iterdir() if p.is_dir() and (p / "__init__.py").is_file()]
    return sorted(names)


def _dynamic_imports(module: str, path: Path, tree: ast.AST) -> Iterator[tuple[str, int]]:
    """(module imported, line) for each import made at run time: a registry's members, import_module("dialjudge...")."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name == SELF_REGISTRY:
            folder = node.args[2] if len(node.args) > 2 else None
            if folder is None or ast.unparse(folder) != "Path(__file__).parent":
                raise ValueError(f"{path}:{node.lineno}: a {SELF_REGISTRY} over another folder than its "
                                 "module's: teach tests/import_graph.py which modules it imports")
            for member in _registry_members(path):
                yield f"{package}.{member}", node.lineno
        elif name == "import_module" and node.args and isinstance(node.args[0], ast.Constant):
            target = node.args[0].value
            if isinstance(target, str) and target.startswith(ROOT_PACKAGE):
                yield target, node.lineno


def _resolve(module: str, is_package: bool, node: ast.Import | ast.ImportFrom, known: set[str]) -> list[str]:
    def nearest_known(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    if isinstance(node, ast.Import):
        targets = [alias.name for alias in node.names]
        return [t for t in (nearest_known(n) for n in targets if n.startswith(ROOT_PACKAGE)) if t]
    if node.level:
        package = module if is_package else module.rpartition(".")[0]
        base_parts = package.split(".")[: len(package.split(".")) - (node.level - 1)]
        base = ".".join(base_parts + ([node.module] if node.module else []))
    else:
        base = node.module or ""
    if not base.startswith(ROOT_PACKAGE):
        return []
    found = []
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        target = submodule if submodule in known else nearest_known(base)
        if target:
            found.append(target)
    return found


def build_graph(checkout: Path = CHECKOUT, packages: Iterable[str] = ("core", "tui", "cli")) -> ImportGraph:
    files = list(module_files(checkout, packages))
    # Modules outside the scanned packages (e.g. dialjudge itself) still count as known targets.
    known = {name for name, _ in files} | {ROOT_PACKAGE}
    graph = ImportGraph(modules={name for name, _ in files})
    for name, path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node, in_function, typing_only in _imports(tree):
            for target in _resolve(name, path.name == "__init__.py", node, known):
                graph.edges.append(ImportEdge(name, target, node.lineno, in_function, type_checking=typing_only))
        for target, line in _dynamic_imports(name, path, tree):
            if target in known:
                graph.edges.append(ImportEdge(name, target, line, in_function=False, dynamic=True))
    return graph


def cycles(successors: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for root in sorted(successors):
        if root in index:
            continue
        work = [(root, iter(sorted(successors[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(successors[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return sorted(found)


Floors = tuple[tuple[str, tuple[str, ...]], ...]


def floor_of(module: str, floors: Floors, package: str) -> int | None:
    """The floor (0 = lowest) of the entry that names ``module`` or the nearest package above it;
    ``__init__`` names ``package`` itself. None: no floor names it."""
    best: tuple[int, int] | None = None  # (length of the name that matched, floor)
    for number, (_, members) in enumerate(floors):
        for member in members:
            name = package if member == "__init__" else f"{package}.{member}"
            exact = module == name
            if (exact or (member != "__init__" and module.startswith(name + "."))) and (
                    best is None or len(name) > best[0]):
                best = (len(name), number)
    return None if best is None else best[1]


def arrows_back_up(graph: ImportGraph, floors: Floors, package: str) -> list[tuple[ImportEdge, int, int]]:
    """Every import (of any kind) from a module of ``package`` to one on a higher floor, with both floors."""
    found = []
    for edge in graph.edges:
        low = floor_of(edge.importer, floors, package)
        high = floor_of(edge.imported, floors, package)
        if low is not None and high is not None and high > low:
            found.append((edge, low, high))
    return found


def main(argv: list[str]) -> int:
    packages = argv or ["core", "tui", "cli"]
    graph = build_graph(CHECKOUT, packages)
    print(f"modules: {len(graph.modules)}")
    for package in packages:
        prefix = f"{ROOT_PACKAGE}.{package}"
        inside = [e for e in graph.edges if e.in_function and (e.importer == prefix or e.importer.startswith(prefix + "."))]
        statements = {(e.importer, e.line) for e in inside}
        print(f"{package}: modules {sum(1 for m in graph.modules if m == prefix or m.startswith(prefix + '.'))}, "
              f"own-module imports inside functions {len(statements)} statements ({len(inside)} names)")
    for component in cycles(graph.successors()):
        print("cycle:", " <-> ".join(component))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
