"""A judged run to align, shared by the alignment's tests (in-process, and in the judge process)."""

from __future__ import annotations

from dialjudge.core.api.runs import execute_run
from dialjudge.core.api.session import Session
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode


def judge_the_sample(session: Session, judge: str = "fake") -> tuple[int, list[str]]:
    """The session's ``judge`` run on the bundled sample (overall, 1-5, logprob), stored in the session's store;
    its id and the items of the sample's first 3 contexts (enough for an alignment's corrections)."""
    dataset = open_dataset("sample", remember=False)
    config = RunConfig.build(dataset, get_template("likert-1to5"), [session.config.judges[judge]], aspect="overall",
                             quality="overall", mode=ScoringMode.LOGPROB)
    with session.store() as store:
        run_id = execute_run(config, dataset, store, session.backends_for(config)).run_id
    contexts = sorted({ex.group_id for ex in dataset.examples})[:3]
    return run_id, [ex.id for ex in dataset.examples if ex.group_id in contexts]
