"""No import cycles among dialjudge's modules; imports inside functions only with a reason.

The graph (tests/import_graph.py, read from the source with ``ast``) counts every
import, at module level or inside a function: an import moved into a function still
makes a cycle, it only hides it until run time.
"""

from __future__ import annotations

from pathlib import Path

from import_graph import CHECKOUT, build_graph, cycles

#: Packages whose modules must form no import cycle (the whole checkout is scanned).
CYCLE_FREE_PACKAGES: tuple[str, ...] = ("core", "tui", "cli")

#: Packages whose imports of dialjudge modules inside functions must each say why (a comment on the line).
REASONED_LAZY_IMPORT_PACKAGES: tuple[str, ...] = ("core", "tui")

SCANNED_PACKAGES = ("core", "tui", "cli")


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == f"dialjudge.{p}" or module.startswith(f"dialjudge.{p}.") for p in packages)


def test_the_graph_counts_imports_inside_functions_and_finds_their_cycles(tmp_path: Path) -> None:
    package = tmp_path / "core"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from . import b\n")
    (package / "b.py").write_text("def later():\n    from .c import thing\n    return thing\n")
    (package / "c.py").write_text("from .a import b as thing\n")
    (package / "d.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import b\n")
    graph = build_graph(tmp_path, ("core",))
    assert cycles(graph.successors()) == [["dialjudge.core.a", "dialjudge.core.b", "dialjudge.core.c"]]
    assert [(e.importer, e.imported) for e in graph.edges if e.in_function] == [("dialjudge.core.b", "dialjudge.core.c")]
    assert not [e for e in graph.edges if e.importer == "dialjudge.core.d"]  # never runs


def test_no_import_cycle_among_dialjudges_modules() -> None:
    graph = build_graph(CHECKOUT, SCANNED_PACKAGES)
    checked = {m for m in graph.modules if _within(m, CYCLE_FREE_PACKAGES)}
    assert len(checked) > 50
    found = cycles(graph.successors(checked))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_imports_of_dialjudge_modules_inside_functions_say_why() -> None:
    graph = build_graph(CHECKOUT, SCANNED_PACKAGES)
    unexplained = []
    for edge in graph.edges:
        if not edge.in_function or not _within(edge.importer, REASONED_LAZY_IMPORT_PACKAGES):
            continue
        path = CHECKOUT.joinpath(*edge.importer.split(".")[1:])
        source = (path / "__init__.py") if path.is_dir() else path.with_suffix(".py")
        line = source.read_text(encoding="utf-8").splitlines()[edge.line - 1]
        if "#" not in line:
            unexplained.append(f"{edge.importer}:{edge.line}: {line.strip()}")
    assert not unexplained, "move these to the top, or say on the line why not:\n" + "\n".join(unexplained)
