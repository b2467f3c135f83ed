"""Give each context's reference a held-out second reference taken from another candidate.

DSTC7-ADV scores a reply and its negation against *another* reference, which is
what lets overlap metrics be compared fairly with judges: both the original and
its perturbation are scored. USR has one reference per context but also a
second human reply ("New Human Generated"); naming that system here turns it
into the held-out reference of the context, and drops it as a candidate.
"""

from __future__ import annotations

from dataclasses import replace

from ..errors import DataError
from ..model import Dataset


def with_held_out_reference(dataset: Dataset, system: str) -> tuple[Dataset, int]:
    """A copy where each reference-holding example also lists ``system``'s reply of its context as a
    reference; returns the copy and how many contexts got one."""
    if system not in dataset.systems:
        raise DataError(f"{dataset.name} has no system {system!r} to take held-out references from "
                        f"(systems: {', '.join(dataset.systems)})")
    out = []
    given = 0
    for group in dataset.groups().values():
        donor = next((ex for ex in group if ex.system == system and (ex.candidate or "").strip()), None)
        for ex in group:
            if donor is not None and ex is donor:
                continue
            if donor is not None and ex.is_reference:
                ex = replace(ex, references=tuple(dict.fromkeys((*ex.references, donor.candidate or ""))))
                given += 1
            out.append(ex)
    return dataset.subset(out), given
