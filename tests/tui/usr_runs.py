"""Fixtures of the app tests on USR Topical-Chat: services on the shared data and the CLI's run store, and a
stored run of a simulated good judge (the pooled human label plus seeded noise, through the fake backend)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest
from tui_helpers import FAST_METRICS

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
from dialjudge.core.config import Config, JudgeConfig
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.store.run_store import default_store_path
from dialjudge.core.model import Aggregation
from dialjudge.tui.services import Services
from shared_data import require_file, shared_data_dir


@pytest.fixture
def usr_services(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Services:
    """Services and a CLI config on the shared USR data, both on the default run store (the CLI's)."""
    require_file(shared_data_dir(), "usr/usr_topical_chat.json")
    config_file = tmp_path / "dialjudge.toml"
    config_file.write_text(textwrap.dedent(f"""
        [data]
        dirs = ["{shared_data_dir()}"]
    """), encoding="utf-8")
    monkeypatch.setenv("DIALJUDGE_CONFIG", str(config_file))
    monkeypatch.setenv("COLUMNS", "200")  # the CLI's tables unwrapped, like the panel's text below
    sim = JudgeConfig("sim", "fake", model="sim")
    config = Config(data_dirs=(shared_data_dir(),), judges={"sim": sim})
    return Services.default(config, metric_ids=FAST_METRICS, n_boot=200, show_timings=False,
                            stats_interval_s=3600.0).with_store_at(default_store_path())


def simulated_run(services: Services, quality: str, noise: float, seed: int = 0) -> int:
    """A stored run whose judge knows the pooled human label up to Gaussian noise (share of the scale)."""
    dataset = open_dataset("usr-topicalchat", services.config)
    plan = plan_run(RunRequest(template="likert-1to5", judges=("sim",), mode="logprob", quality=quality,
                               aspect="overall"), dataset, services.config)
    scale = dataset.qualities[quality]
    rng = np.random.default_rng(seed)
    noises = {ex.id: rng.normal(0, noise) for ex in dataset.examples}

    def score(item_id: str, prompt: str) -> float:
        unit = scale.normalize(float(dataset.get(item_id).human(quality, Aggregation.MEAN)))  # type: ignore[arg-type]
        return float(np.clip(1 + 4 * (unit + noises[item_id]), 1, 5))

    backends = build_backends(plan.config, make=lambda jc: FakeBackend(name=jc.name, score_fn=score))
    with services.session.store() as store:
        return execute_run(plan.config, dataset, store, backends, options=EngineOptions(resume=False)).run_id


@pytest.fixture
def good_run(usr_services: Services) -> int:
    """A simulated good judge's run on Overall (stored before the app's event loop starts)."""
    return simulated_run(usr_services, "Overall", noise=0.05)


