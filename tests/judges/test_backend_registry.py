"""The backend registry: every backend registers itself, and no other module names one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dialjudge.core.config import JudgeConfig, bundled_judge
from dialjudge.core.errors import ConfigError
from dialjudge.core.judges.backends import (
    BackendKind,
    backend_kind,
    backend_names,
    local_threads,
    make_backend,
    model_file_backend,
    paid_per_token,
    register_backend,
)
from dialjudge.core.judges.backends.fake import FakeBackend

CHECKOUT = Path(__file__).resolve().parents[2]
BACKENDS_PACKAGE = CHECKOUT / "core" / "judges" / "backends"


def test_every_backend_module_registered_itself() -> None:
    assert backend_names() == ("fake", "llama", "openai")
    assert all(backend_kind(name).name == name for name in backend_names())


def test_an_unknown_backend_names_the_judge_and_the_known_ones() -> None:
    with pytest.raises(ConfigError, match=r"judge 'j': unknown backend 'vllm' \(one of fake, llama, openai\)"):
        make_backend(JudgeConfig("j", "vllm"))


def test_a_second_backend_of_the_same_name_is_refused() -> None:
    with pytest.raises(ValueError, match="two judge backends are named 'fake'"):
        register_backend(BackendKind(name="fake", create=FakeBackend.from_config, paid_per_token=True))


def test_capabilities_the_engine_config_cost_and_app_ask_for() -> None:
    assert model_file_backend() == bundled_judge().backend
    model_file = backend_kind(model_file_backend())
    assert model_file.context_window(JudgeConfig("m", model_file.name, n_ctx=2048)) == 2048
    assert local_threads(JudgeConfig("m", model_file.name, n_threads=3)) == 3
    assert [name for name in backend_names() if paid_per_token(name)] == ["openai"]
    assert not paid_per_token("a backend no longer registered")
    assert local_threads(JudgeConfig("f", "fake")) is None
    assert backend_kind("fake").context_window(JudgeConfig("f", "fake", extra={"context_window": 512})) == 512
    assert isinstance(make_backend(JudgeConfig("f", "fake")), FakeBackend)


def _string_constants(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


@pytest.mark.parametrize("package", ["core", "cli", "tui"])
def test_no_module_outside_the_backends_names_a_backend(package: str) -> None:
    names = set(backend_names())
    offenders = {
        f"{path.relative_to(CHECKOUT)}: {sorted(found)}"
        for path in sorted((CHECKOUT / package).rglob("*.py"))
        if BACKENDS_PACKAGE not in path.parents and (found := names & _string_constants(path))
    }
    assert not offenders, "ask the registry (dialjudge.core.judges.backends) instead:\n" + "\n".join(sorted(offenders))
