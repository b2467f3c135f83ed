"""How far each front end reaches into core, and how many own-module imports hide inside functions.

    PYTHONPATH=src python tests/import_counts.py            # a table
    PYTHONPATH=src python tests/import_counts.py --list     # and the core modules each front end imports
    PYTHONPATH=src python tests/import_counts.py --json     # the counts as JSON

tests/test_front_end_imports.py holds the command line to its limit with the same functions.

"Core modules imported by a front end": the distinct ``dialjudge.core.*`` modules that some
module of ``dialjudge.cli`` (or ``dialjudge.tui``) imports directly, wherever the import
statement stands (top of the module, inside a function, under ``TYPE_CHECKING``), as grimp
(import-linter's graph) sees them. A package and its ``__init__`` are one module. What
core imports in turn is not counted: that is the application layer's business.

"Own-module imports inside functions": ``import``/``from ... import`` statements of a
``dialjudge`` module (or a relative one) that stand inside a function body, per file.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import grimp

ROOT = "dialjudge"
CORE = f"{ROOT}.core"
FRONT_ENDS = (f"{ROOT}.cli", f"{ROOT}.tui")
REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class FrontEndCount:
    front_end: str
    core_modules: tuple[str, ...]
    imports_in_functions: dict[str, int]

    @property
    def in_function_total(self) -> int:
        return sum(self.imports_in_functions.values())


def core_modules_imported(graph: grimp.ImportGraph, front_end: str) -> tuple[str, ...]:
    """The core modules that modules of ``front_end`` import directly."""
    imported: set[str] = set()
    for module in graph.find_descendants(front_end) | {front_end}:
        for target in graph.find_modules_directly_imported_by(module):
            if target == CORE or target.startswith(CORE + "."):
                imported.add(target)
    return tuple(sorted(imported))


def _function_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    def walk(node: ast.AST, in_function: bool) -> Iterator[ast.Import | ast.ImportFrom]:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            if inside and isinstance(child, (ast.Import, ast.ImportFrom)):
                yield child
            yield from walk(child, inside)

    yield from walk(tree, False)


def _is_own(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] == ROOT
    return any(alias.name.split(".")[0] == ROOT for alias in node.names)


def own_imports_in_functions(folder: Path) -> dict[str, int]:
    """File (relative to the repository) -> own-module imports inside its functions (files with none left out)."""
    counts: dict[str, int] = {}
    for path in sorted(folder.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        n = sum(1 for node in _function_imports(tree) if _is_own(node))
        if n:
            counts[str(path.relative_to(REPO_ROOT))] = n
    return counts


def count(front_ends: Sequence[str] = FRONT_ENDS) -> list[FrontEndCount]:
    graph = grimp.build_graph(ROOT, cache_dir=None)
    return [FrontEndCount(name, core_modules_imported(graph, name),
                          own_imports_in_functions(REPO_ROOT / name.split(".")[-1]))
            for name in front_ends]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tests/import_counts.py", description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="list the core modules and the files")
    parser.add_argument("--json", action="store_true", help="print the counts as JSON")
    args = parser.parse_args(argv)
    counts = count()
    if args.json:
        print(json.dumps([{"front_end": c.front_end, "core_modules": len(c.core_modules),
                           "core_module_names": list(c.core_modules),
                           "imports_in_functions": c.in_function_total,
                           "imports_in_functions_per_file": c.imports_in_functions} for c in counts], indent=2))
        return 0
    all_core = {m for m in grimp.build_graph(ROOT, cache_dir=None).modules if m.startswith(CORE + ".") or m == CORE}
    print(f"{'front end':<16} {'core modules imported':>22} {'own imports in functions':>25}")
    for c in counts:
        print(f"{c.front_end:<16} {len(c.core_modules):>14} of {len(all_core):<5} {c.in_function_total:>25}")
    if args.list:
        for c in counts:
            print(f"\n{c.front_end} imports:")
            for module in c.core_modules:
                print(f"  {module}")
            print(f"{c.front_end}, own-module imports inside functions:")
            for file, n in sorted(c.imports_in_functions.items(), key=lambda kv: -kv[1]):
                print(f"  {n:>3}  {file}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
