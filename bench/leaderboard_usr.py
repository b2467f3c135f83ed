"""Issue 35's leaderboard on real labels: USR Topical-Chat Overall with simulated judges of agreement 0.9
and 0.3, four fake judges prompted for different aspects, the nine reference metrics and the baselines.

    PYTHONPATH=src python -m bench.leaderboard_usr                  # within contexts
    PYTHONPATH=src python -m bench.leaderboard_usr --level global

The runs are judged with the fake backend into a temporary store (no model), then ranked by the same
use case as ``dialjudge leaderboard``; the table is printed as the command line lays it out, with the
seconds the ranking took (the judging is not counted). The data is read from ../shared/data (or
$DIALJUDGE_SHARED_DATA).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from dialjudge.core.api.leaderboards import LeaderboardRequest, columns_of, leaderboard, table_rows
from dialjudge.core.api.runs import build_backends, execute_run
from dialjudge.core.config import parse_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.planning import plan_run

FAKE_ASPECTS = {"fa": "overall", "fb": "engagingness", "fc": "naturalness", "fd": "groundedness"}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.leaderboard_usr", description=__doc__.splitlines()[0])
    parser.add_argument("--level", choices=("global", "context", "system"), default="context")
    parser.add_argument("--bootstrap", type=int, default=1000)
    args = parser.parse_args(argv)
    shared = Path(os.environ.get("DIALJUDGE_SHARED_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "data"))
    folder = Path(tempfile.mkdtemp(prefix="leaderboard-usr-"))
    simulated = {f"sim{int(a * 10)}": {"backend": "fake", "options": {"agreement": a, "dataset": "usr-topicalchat",
                                                                       "quality": "Overall"}} for a in (0.9, 0.3)}
    fakes = {name: {"backend": "fake", "seed": seed} for seed, name in enumerate(FAKE_ASPECTS)}
    config = parse_config({"data": {"dirs": [str(shared)]}, "judges": {**simulated, **fakes}}, folder / "dialjudge.toml")
    # The simulated judge opens its labels through the user's configuration: point it at this one.
    os.environ["DIALJUDGE_CONFIG"] = str(folder / "dialjudge.toml")
    (folder / "dialjudge.toml").write_text(f'[data]\ndirs = ["{shared}"]\n', encoding="utf-8")
    dataset = open_dataset("usr-topicalchat", config, remember=False)
    store = RunStore(folder / "runs.sqlite3")
    for judge in [*simulated, *fakes]:
        plan = plan_run(dataset, config, template="likert-1to5", judges=[judge],
                        aspect=FAKE_ASPECTS.get(judge, "overall"), quality="Overall")
        execute_run(plan.config, dataset, store, build_backends(plan.config))
    started = time.perf_counter()
    board = leaderboard(store, LeaderboardRequest("usr-topicalchat", "Overall", level=args.level,
                                                  n_boot=args.bootstrap), config)
    seconds = time.perf_counter() - started
    print(" | ".join(columns_of(board)))
    for row in table_rows(board):
        print(" | ".join(row))
    for line in board.method_lines():
        print("•", line)
    print(f"ranked {len(board.rows)} evaluators in {seconds:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
