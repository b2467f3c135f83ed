"""No import cycles among dialjudge's modules, no import from a floor of core to a higher one, and
imports inside functions only with a reason.

The graph (tests/import_graph.py, read from the source with ``ast``) counts every
import: at module level, inside a function (moved there, it still makes a cycle, only
hidden until run time), under ``if TYPE_CHECKING:`` (a module that needs another's types
depends on it), and the imports a self-registering registry makes of its package's
modules when first asked.
"""

from __future__ import annotations

from pathlib import Path

from import_graph import CHECKOUT, Floors, arrows_back_up, build_graph, cycles, floor_of

#: Packages whose modules must form no import cycle (the whole checkout is scanned).
CYCLE_FREE_PACKAGES: tuple[str, ...] = ("core", "tui", "cli")

#: Packages whose imports of dialjudge modules inside functions must each say why (a comment on the line).
REASONED_LAZY_IMPORT_PACKAGES: tuple[str, ...] = ("core", "tui")

SCANNED_PACKAGES = ("core", "tui", "cli")

#: core's floors, lowest first (ARCHITECTURE.md, "Floors"). A module imports only from its own floor
#: or a lower one, with every kind of import counted. Each entry is a child of dialjudge.core (a
#: package covers its modules); ``__init__`` is core's own package module. Every core module must
#: have a floor, so a new one is placed here on purpose.
CORE_FLOORS: Floors = (
    ("plain values and tools, importing no other module of dialjudge",
     ("errors", "model", "format", "table_fit", "judge_config", "backend_rules", "self_registry", "gc_pause",
      "worker_process")),
    ("reading and measuring: the config file, datasets, metrics, statistics, tables",
     ("config", "loaders", "metrics", "stats", "subsets", "describe", "adversarial", "report",
      "reports_html")),
    ("simulated data and evaluators with a known truth (on the statistics)", ("simulation",)),
    ("datasets by name, and evaluators against the humans",
     ("dataset_catalogue", "evaluation")),
    ("judging: prompts, backends, runs and the run store",
     ("judges",)),
    ("what works on judged runs",
     ("planning", "run_columns", "label_rows", "review_queue", "compare", "imports", "judge_diagnostics",
      "diagnostics_report", "run_export", "tuning", "gate_rules")),
    ("the application layer", ("api",)),
    ("core's package module: connects the backend registry to the config (core.backend_rules)", ("__init__",)),
)
CORE = "dialjudge.core"


def _within(module: str, packages: tuple[str, ...]) -> bool:
    return any(module == f"dialjudge.{p}" or module.startswith(f"dialjudge.{p}.") for p in packages)


def _package(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def test_the_graph_counts_imports_inside_functions_and_finds_their_cycles(tmp_path: Path) -> None:
    _package(tmp_path / "core", {
        "__init__.py": "",
        "a.py": "from . import b\n",
        "b.py": "def later():\n    from .c import thing\n    return thing\n",
        "c.py": "from .a import b as thing\n",
    })
    graph = build_graph(tmp_path, ("core",))
    assert cycles(graph.successors()) == [["dialjudge.core.a", "dialjudge.core.b", "dialjudge.core.c"]]
    assert [(e.importer, e.imported) for e in graph.edges if e.in_function] == [("dialjudge.core.b", "dialjudge.core.c")]


def test_imports_for_the_type_checker_make_cycles_too(tmp_path: Path) -> None:
    _package(tmp_path / "core", {
        "__init__.py": "",
        "a.py": "from .b import B\n",
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import A\nelse:\n    from . import c\n",
        "c.py": "",
    })
    graph = build_graph(tmp_path, ("core",))
    assert cycles(graph.successors()) == [["dialjudge.core.a", "dialjudge.core.b"]]
    assert {(e.imported, e.type_checking) for e in graph.edges if e.importer == "dialjudge.core.b"} == {
        ("dialjudge.core.a", True), ("dialjudge.core.c", False)}


def test_a_registrys_imports_of_its_package_make_cycles_too(tmp_path: Path) -> None:
    registry = ("from pathlib import Path\nfrom ..self_registry import SelfRegistry\nfrom .table import TABLE\n"
                "KINDS = SelfRegistry(TABLE, __name__, Path(__file__).parent)\n")
    _package(tmp_path / "core", {
        "__init__.py": "",
        "self_registry.py": "class SelfRegistry: ...\n",
        "kinds/__init__.py": registry,
        "kinds/table.py": "TABLE = {}\n",
        "kinds/good.py": "from .table import TABLE\n",
        # A member that asks the registry, which imports it when first asked:
        "kinds/bad.py": "from . import KINDS\n",
        "loader.py": "import importlib\ndef load():\n    return importlib.import_module('dialjudge.core.user')\n",
        "user.py": "from .loader import load\n",
    })
    graph = build_graph(tmp_path, ("core",))
    dynamic = {(e.importer, e.imported) for e in graph.edges if e.dynamic}
    assert dynamic == {("dialjudge.core.kinds", f"dialjudge.core.kinds.{m}") for m in ("bad", "good", "table")} | {
        ("dialjudge.core.loader", "dialjudge.core.user")}
    assert cycles(graph.successors()) == [["dialjudge.core.kinds", "dialjudge.core.kinds.bad"],
                                          ["dialjudge.core.loader", "dialjudge.core.user"]]


def test_an_import_from_a_lower_floor_to_a_higher_one_is_found(tmp_path: Path) -> None:
    _package(tmp_path / "core", {
        "__init__.py": "from .top import run\n",
        "errors.py": "",
        "top.py": "from .errors import *\nfrom .judges import b\n",
        "judges/__init__.py": "",
        "judges/b.py": "from ..errors import *\nfrom typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..top import run\n",
    })
    floors: Floors = (("low", ("errors",)), ("middle", ("judges",)), ("high", ("top",)), ("package", ("__init__",)))
    graph = build_graph(tmp_path, ("core",))
    assert floor_of("dialjudge.core.judges.b", floors, CORE) == 1 and floor_of(CORE, floors, CORE) == 3
    assert floor_of("dialjudge.core.other", floors, CORE) is None
    found = [(e.importer, e.imported, low, high) for e, low, high in arrows_back_up(graph, floors, CORE)]
    assert found == [("dialjudge.core.judges.b", "dialjudge.core.top", 1, 2)]


def test_no_import_cycle_among_dialjudges_modules() -> None:
    graph = build_graph(CHECKOUT, SCANNED_PACKAGES)
    checked = {m for m in graph.modules if _within(m, CYCLE_FREE_PACKAGES)}
    assert len(checked) > 50
    found = cycles(graph.successors(checked))
    assert not found, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)


def test_every_core_module_has_a_floor_and_every_floor_names_modules() -> None:
    graph = build_graph(CHECKOUT, ("core",))
    unplaced = sorted(m for m in graph.modules if floor_of(m, CORE_FLOORS, CORE) is None)
    assert not unplaced, "give these a floor in CORE_FLOORS (and ARCHITECTURE.md):\n" + "\n".join(unplaced)
    named = [member for _, members in CORE_FLOORS for member in members]
    assert len(named) == len(set(named))
    stale = [m for m in named if not any(floor_of(module, ((m, (m,)),), CORE) is not None for module in graph.modules)]
    assert not stale, f"floors name modules that no longer exist: {stale}"


def test_no_import_runs_from_a_floor_of_core_to_a_higher_one() -> None:
    graph = build_graph(CHECKOUT, ("core",))
    found = arrows_back_up(graph, CORE_FLOORS, CORE)
    assert not found, "imports to a higher floor (CORE_FLOORS):\n" + "\n".join(
        f"{e.importer}:{e.line} (floor {low}) -> {e.imported} (floor {high})" for e, low, high in found)


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
