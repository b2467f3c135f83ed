"""Store a run of a simulated judge of set quality, to try `runs alt-test` and `runs estimate` on real labels.

    PYTHONPATH=src python -m bench.simulated_judge_run --dataset usr-topicalchat --quality Overall --noise 0.1

The judge sees the answer key: its score for an item is the item's pooled human
label (the annotators' mean) put on the template's scale, plus Gaussian noise of
``--noise`` times the scale's width, clipped to the scale (the noise of an item is
fixed by ``--seed`` and the item id). It goes through the ordinary engine with the
fake backend (logprob mode), so the run is stored like any other and the
commands read it the same way. ``--noise 0.1`` makes a good judge, ``--noise 0.5``
a poor one. It prints the new run's id.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys

import numpy as np

from dialjudge.core.api import (
    EngineOptions,
    RunRequest,
    open_dataset,
    plan_run,
)
from dialjudge.core.api.runs import (
    build_backends,
    execute_run,
)
from dialjudge.core.config import JudgeConfig, load_config
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.model import Aggregation

TEMPLATE = "likert-1to5"
SCALE = (1.0, 5.0)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", default="usr-topicalchat")
    parser.add_argument("--quality", default="Overall")
    parser.add_argument("--noise", type=float, default=0.1, help="noise sd, as a share of the scale's width")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args(argv)

    config = load_config()
    dataset = open_dataset(args.dataset, config)
    name = "simulated"
    judge = JudgeConfig(name=name, backend="fake", model=f"answer key + noise {args.noise:g} (seed {args.seed})")
    config = dataclasses.replace(config, judges={**config.judges, name: judge})
    plan = plan_run(RunRequest(template=TEMPLATE, judges=(name,), mode="logprob", quality=args.quality,
                               aspect="overall", limit=args.limit,
                               name=f"simulated judge, noise {args.noise:g}, seed {args.seed}"), dataset, config)
    quality = plan.quality or args.quality
    scale = dataset.qualities[quality]
    low, high = SCALE

    def score(item_id: str, prompt_text: str) -> float:
        label = dataset.get(item_id).human(quality, Aggregation.MEAN)
        unit = scale.normalize(float(label)) if label is not None else 0.5  # type: ignore[arg-type]
        digest = hashlib.sha256(f"{args.seed}:{item_id}".encode()).digest()
        noise = np.random.default_rng(int.from_bytes(digest[:8], "little")).normal(0.0, args.noise)
        return float(np.clip(low + (unit + noise) * (high - low), low, high))

    backends = build_backends(plan.config, make=lambda jc: FakeBackend(name=jc.name, score_fn=score,
                                                                     identity=f"fake:{jc.name}:{jc.model}"))
    with RunStore() as store:
        summary = execute_run(plan.config, dataset, store, backends, options=EngineOptions(resume=False))
    print(f"run {summary.run_id}: {summary.status}, simulated judge of {quality} with noise {args.noise:g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
