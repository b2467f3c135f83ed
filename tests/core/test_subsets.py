"""Subset specs users type: which examples each selects, and a clear error for a bad one."""

from __future__ import annotations

import pytest

from dialjudge.core.config import Config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.model import Dataset, Example, Level, Perturbation, Turn
from dialjudge.core.subsets import ALL, Subset, default_subsets, parse_subset


def example(id: str, *, tags: tuple[str, ...] = (), system: str | None = None, level: Level = Level.TURN,
            adversarial: Perturbation | None = None) -> Example:
    return Example(id, "g", (Turn("A", "hi"),), None if level is Level.DIALOG else "yo", system=system,
                   tags=frozenset(tags), level=level, adversarial=adversarial)


EXAMPLES = [
    example("open", tags=("open", "kpi:follow-up"), system="bot"),
    example("closed", tags=("closed",), system="human"),
    example("both", tags=("open", "closed")),  # closed wins, as Example.ended says
    example("tagged-adv", tags=("adversarial",)),
    example("negated", adversarial=Perturbation("negation", "open")),
    example("dated", adversarial=Perturbation("date", "closed")),
    example("dialog", level=Level.DIALOG, system="bot"),
]


@pytest.mark.parametrize(("spec", "expected"), [
    ("all", [e.id for e in EXAMPLES]),
    ("", [e.id for e in EXAMPLES]),
    ("open", ["open"]),
    ("closed", ["closed", "both"]),
    ("adversarial", ["tagged-adv", "negated", "dated"]),
    ("non-adversarial", ["open", "closed", "both", "dialog"]),
    ("system:bot", ["open", "dialog"]),
    ("system:nobody", []),
    ("tag:kpi:follow-up", ["open"]),
    ("tag:closed", ["closed", "both"]),
    ("level:dialog", ["dialog"]),
    ("level:turn", ["open", "closed", "both", "tagged-adv", "negated", "dated"]),
    ("adversarial:negation", ["negated"]),
    ("  open  ", ["open"]),
])
def test_specs_select(spec: str, expected: list[str]) -> None:
    assert [e.id for e in Subset(spec).select(EXAMPLES)] == expected
    assert Subset(spec).label == spec


@pytest.mark.parametrize("spec", ["opened", "system:", "tag", "kind:x", "level:utterance", "level:", "System:bot"])
def test_a_bad_spec_is_named_with_the_choices(spec: str) -> None:
    with pytest.raises(ValueError) as info:
        parse_subset(spec)
    message = str(info.value)
    assert f"unknown subset {spec.strip()!r}" in message
    assert "system:NAME" in message and "level:turn|dialog" in message


def test_default_subsets_offer_only_what_selects_something() -> None:
    sample = open_dataset("sample", Config())
    specs = [s.spec for s in default_subsets(sample)]
    assert specs[:4] == ["all", "open", "closed", "adversarial"]
    assert specs[4:] == [f"system:{s}" for s in sample.systems]
    assert all(Subset(s).select(sample.examples) for s in specs)

    kpi = open_dataset("incar-kpi", Config())
    assert [s.spec for s in default_subsets(kpi)] == ["all", "system:assistant-v1", "system:assistant-v2"]

    plain = Dataset("plain", [example("x")])
    assert default_subsets(plain) == [ALL]
