"""The application layer's surface stays small, and hands out no engine, store, backend or view model.

``core.api`` exports the use cases, their requests and results and the session (at most
:data:`MAX_API_NAMES` names); ``core.api.types``, ``core.api.events`` and
``core.api.formatting`` hold the plain types, the run and search events and the layouts.
A front end that could import the run store, the engine or a backend factory from any of
them could construct one; the session and the use cases are the only place that does.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import dialjudge.core.api as api
from dialjudge.core.api import (
    events,
    formatting,
    types,
)

MAX_API_NAMES = 120
CHECKOUT = Path(__file__).resolve().parents[2]

#: What no module a front end imports from core.api may hand out.
CONSTRUCTS = {"RunStore", "RunEngine", "Workspace", "TuningSearch", "make_backend", "build_backends",
              "open_run", "execute_run"}


def test_core_api_exports_at_most_120_names_and_each_exists() -> None:
    assert len(api.__all__) <= MAX_API_NAMES, f"core.api exports {len(api.__all__)} names"
    assert len(set(api.__all__)) == len(api.__all__)
    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert not missing


@pytest.mark.parametrize("module", [api, types, events, formatting], ids=lambda m: m.__name__)
def test_the_surface_hands_out_no_store_engine_backend_or_view_model(module: object) -> None:
    exported = set(module.__all__)  # type: ignore[attr-defined]
    assert not exported & CONSTRUCTS, exported & CONSTRUCTS


def test_use_cases_of_stored_runs_take_the_session_first() -> None:
    from dialjudge.core.api.session import Session

    taking_session = []
    for name in ("list_runs", "run_details", "compare", "export", "rescore", "import_scores", "judge",
                 "start_run", "open_search", "run_record", "find_resumable", "stop_rule_for", "versus"):
        parameters = list(inspect.signature(getattr(api, name)).parameters.values())
        if parameters and parameters[0].annotation in (Session, "Session"):
            taking_session.append(name)
    assert len(taking_session) == 13, taking_session


def _calls_in(package: str) -> set[str]:
    """The names a package's code calls, but for what it asks of the session (``session.make_backend``:
    the session makes the backend)."""
    called: set[str] = set()
    for path in (CHECKOUT / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Name):
                called.add(func.id)
            elif isinstance(func, ast.Attribute) and not (
                    isinstance(func.value, (ast.Name, ast.Attribute)) and ast.unparse(func.value).endswith("session")):
                called.add(func.attr)
    return called


@pytest.mark.parametrize("package", ["tui", "cli"])
def test_front_ends_construct_no_store_engine_or_backend(package: str) -> None:
    # The app's own view model (tui/scores_view_model.py) is the app's to construct.
    assert not _calls_in(package) & (CONSTRUCTS - {"Workspace"})


def test_the_checks_above_can_fail(tmp_path: Path) -> None:
    (tmp_path / "tui").mkdir()
    (tmp_path / "tui" / "x.py").write_text("store = RunStore()\nb = services.session.make_backend(j)\n"
                                           "c = factory.make_backend(j)\n")
    global CHECKOUT
    saved, CHECKOUT = CHECKOUT, tmp_path
    try:
        assert {"RunStore", "make_backend"} <= _calls_in("tui")
    finally:
        CHECKOUT = saved
