"""Big datasets for the app and memory figures, made from the bundled sample."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any


def big_dataset(n: int) -> Any:
    """``n`` items: the bundled sample repeated with new ids and contexts (so no two prompts are equal)."""
    from dialjudge.core.dataset_catalogue import open_dataset
    from dialjudge.core.model import Dataset, Turn

    sample = open_dataset("sample", remember=False)
    examples = []
    copy = 0
    while len(examples) < n:
        for ex in sample.examples:
            if len(examples) == n:
                break
            context = ex.context + (Turn("User", f"(variation {copy})"),)
            examples.append(dataclasses.replace(ex, id=f"{ex.id}~{copy}", group_id=f"{ex.group_id}~{copy}",
                                                context=context, adversarial=None))
        copy += 1
    return Dataset(f"sample-x{n}", examples, meta={"illustrative": True})


def save_big_dataset(n: int, path: Path) -> Path:
    from dialjudge.core.loaders import save_dataset

    return save_dataset(big_dataset(n), path)


def fake_run_config(dataset: Any) -> Any:
    """A logprob run of one fake judge over every item (the sample's template and quality)."""
    from dialjudge.core.config import JudgeConfig
    from dialjudge.core.judges.prompts.templates import get_template
    from dialjudge.core.judges.run.config import RunConfig
    from dialjudge.core.judges.types import ScoringMode

    return RunConfig.build(dataset, get_template("likert-1to5"), [JudgeConfig(name="fake", backend="fake")],
                           aspect="overall", quality="overall", mode=ScoringMode.LOGPROB, top_k=0)
