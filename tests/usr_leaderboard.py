"""Issue 35's leaderboard on real labels, built once per test session: on USR Topical-Chat Overall, the
bundled judge (SmolLM2 through llama.cpp, on the first ``BUNDLED_ITEMS`` items), two simulated judges of
agreement 0.9 and 0.3, and four fake judges prompted for different aspects, all stored in one run store.

``tests/core/test_leaderboard_usr.py`` checks the ranking; ``tests/tui/test_leaderboard_usr_app.py`` holds
the app's view to the command line's, digit for digit, on the same store.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest

from dialjudge.core.api import EngineOptions
from dialjudge.core.api.runs import build_backends, execute_run
from dialjudge.core.config import BUNDLED_JUDGE, Config, load_config
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.store.run_store import STORE_FILENAME, RunStore
from dialjudge.core.planning import plan_run

#: The fake judges (scores that hash the prompt: no agreement with the humans) and the aspect each is asked.
FAKE_ASPECTS = {"fa": "overall", "fb": "engagingness", "fc": "naturalness", "fd": "groundedness"}
SIMULATED = {"sim9": 0.9, "sim3": 0.3}
#: Items the bundled judge scores: the first 36 (6 contexts of 6 responses, the fewest a CI is given on), on
#: one thread. Measured on the 2-core machine shared with other suites: 48 items on two threads took 35 s
#: (the whole `dialjudge judge --limit 48` command) at a load of about 1, 58.7 s at a load of 3.6 and 746 s
#: at a load of 10 (llama.cpp's threads wait on each other by spinning: oversubscribed, they starve);
#: 42 items on one thread 57.5 s wall, 43 s CPU, at a load of 4. One thread does not collapse under load.
BUNDLED_ITEMS = 36
BUNDLED_THREADS = 1


@dataclass(frozen=True)
class UsrLeaderboardStore:
    folder: Path
    config_file: Path
    config: Config
    #: Run id per judge name (the bundled judge's under ``BUNDLED_JUDGE``).
    runs: dict[str, int]

    @property
    def store_path(self) -> Path:
        return self.folder / STORE_FILENAME

    def row_name(self, judge: str) -> str:
        return f"run {self.runs[judge]} {judge}"


def build_usr_leaderboard_store(shared_data: Path, folder: Path) -> UsrLeaderboardStore:
    if not (shared_data / "usr" / "usr_topical_chat.json").is_file():
        pytest.skip("usr/usr_topical_chat.json is absent from the shared data folder")
    config_file = folder / "dialjudge.toml"
    lines = [f'[data]\ndirs = ["{shared_data}"]\n']
    for name, agreement in SIMULATED.items():
        lines.append(f'[judges.{name}]\nbackend = "fake"\n[judges.{name}.options]\nagreement = {agreement}\n'
                     f'dataset = "usr-topicalchat"\nquality = "Overall"\n')
    for seed, name in enumerate(FAKE_ASPECTS):
        lines.append(f'[judges.{name}]\nbackend = "fake"\nseed = {seed}\n')
    config_file.write_text("\n".join(lines), encoding="utf-8")
    runs: dict[str, int] = {}
    # The simulated judges read their labels through the user's configuration: this one, for the build.
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DIALJUDGE_CONFIG", str(config_file))
        patch.setenv("DIALJUDGE_DATA_DIR", str(folder))
        config = load_config(config_file)
        bundled = dataclasses.replace(config.judges[BUNDLED_JUDGE], n_threads=BUNDLED_THREADS)
        config = dataclasses.replace(config, judges={**config.judges, BUNDLED_JUDGE: bundled})
        dataset = open_dataset("usr-topicalchat", config, remember=False)
        with RunStore(folder / STORE_FILENAME) as store:
            for judge in [*SIMULATED, *FAKE_ASPECTS, BUNDLED_JUDGE]:
                bundled = judge == BUNDLED_JUDGE
                plan = plan_run(dataset, config, template="likert-1to5", judges=[judge],
                                aspect=FAKE_ASPECTS.get(judge, "overall"), quality="Overall",
                                limit=BUNDLED_ITEMS if bundled else None)
                summary = execute_run(plan.config, dataset, store, build_backends(plan.config),
                                      options=EngineOptions(close_backends=bundled))
                assert summary.status == "finished", (judge, summary.status)
                runs[judge] = summary.run_id
    return UsrLeaderboardStore(folder, config_file, config, runs)
