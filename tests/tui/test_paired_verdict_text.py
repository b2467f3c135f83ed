"""The CLI (`runs compare`) and the app print the very same verdict line, made in core (verdict_line)."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from dialjudge.cli.render import print_paired
from dialjudge.core.simulation import SimulationDesign, simulate
from dialjudge.core.stats.paired import paired_comparison, verdict_line
from dialjudge.tui.widgets.paired_verdict import render_paired


def comparison(k: int, delta: float):
    batch = simulate(SimulationDesign(k, 4, agreement=0.4, delta=delta, rating_points=5), 1, seed=k)
    a, b, human, groups = batch.dataset(0)
    return paired_comparison(a, b, human, groups, name_a="run 1", name_b="run 2", quality="Overall", n_boot=300)


def as_text(renderable) -> str:
    console = Console(file=io.StringIO(), width=400, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


@pytest.mark.parametrize(("k", "delta"), [(2, 0.0), (8, 0.0), (40, 0.3)])
def test_cli_and_app_print_the_same_verdict_line(k: int, delta: float) -> None:
    c = comparison(k, delta)
    line = verdict_line(c)
    cli = Console(file=io.StringIO(), width=400, color_system=None)
    print_paired(cli, [c])
    assert line in cli.file.getvalue().splitlines()
    assert line in as_text(render_paired([c])).splitlines()


def test_the_verdict_names_its_methods_and_refuses_on_too_few_contexts() -> None:
    few = verdict_line(comparison(2, 0.0))
    assert few.startswith("run 1 vs run 2 on overall: too few contexts to decide: 2 (at least 6 are needed)")
    assert "no CI" in few and "cannot go below 0.50" in few and "agrees better" not in few
    decided = verdict_line(comparison(40, 0.3))
    assert decided.startswith("run 2 agrees better with humans on overall: Δρ +")
    assert "randomization test over 40 contexts" in decided and "(bootstrap over contexts)" in decided
