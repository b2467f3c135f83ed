"""The Scores screen's alternative annotator test and few-label estimates: the numbers `runs alt-test` and
`runs estimate --labelled 50 --seed 0` print, for the same stored run."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import Input, Static
from tui_helpers import FAST_METRICS, settle, static_text, wait_until

from dialjudge.cli.main import main as cli_main
from dialjudge.core.api import RunRequest, build_backends, execute_run, open_dataset, plan_run
from dialjudge.core.config import Config, JudgeConfig
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.store.run_store import default_store_path
from dialjudge.core.model import Aggregation
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.label_estimates_dialog import LabelEstimatesDialog
from dialjudge.tui.screens.review import ReviewScreen
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.services import Services
from shared_data import require_file, shared_data_dir

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


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
    with services.open_store() as store:
        return execute_run(plan.config, dataset, store, backends, resume=False).run_id


@pytest.fixture
def good_run(usr_services: Services) -> int:
    """A simulated good judge's run on Overall (stored before the app's event loop starts)."""
    return simulated_run(usr_services, "Overall", noise=0.05)


def cli_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    code = cli_main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return out


def numbers(text: str) -> list[str]:
    return NUMBER.findall(text)


async def test_the_dialog_shows_the_numbers_the_cli_prints(usr_services: Services, good_run: int,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    run_id = good_run
    app = make_app("usr-topicalchat", services=usr_services)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        app.stored_runs.show_in_scores(run_id)
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, ScoresScreen)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, LabelEstimatesDialog)
                         and app.screen.result is not None, "the test and the estimates arrived")
        dialog = app.screen
        assert isinstance(dialog, LabelEstimatesDialog) and dialog.run_id == run_id
        assert dialog.result is not None
        assert dialog.result.alt_test_problem is None and dialog.result.estimate_problem is None
        alt_shown = static_text(dialog.query_one("#alt-test", Static))
        estimates_shown = static_text(dialog.query_one("#estimates", Static))
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(app.screen, ScoresScreen)

    alt_printed = cli_text(capsys, "runs", "alt-test", str(run_id))
    estimates_printed = cli_text(capsys, "runs", "estimate", str(run_id), "--labelled", "50", "--seed", "0")
    # A simulated good judge passes; the verdict and every number appear as the CLI prints them, in order.
    assert "the judge PASSES" in " ".join(alt_shown.split())
    assert numbers(alt_shown) == numbers(alt_printed)
    assert "judge-assisted (PPI++)" in estimates_shown and "labels only" in estimates_shown
    assert numbers(estimates_shown) == numbers(estimates_printed)
    assert len(numbers(estimates_shown)) > 10


async def test_without_a_stored_run_the_key_says_what_to_do(usr_services: Services) -> None:
    app = make_app("usr-topicalchat", services=usr_services)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, ScoresScreen)
        assert any("Show a stored run first" in n.message for n in app._notifications)


async def test_the_review_queue_proposes_items_to_label_and_the_estimate_follows_each_rating(
        usr_services: Services, good_run: int, capsys: pytest.CaptureFixture[str]) -> None:
    run_id = good_run
    dataset = open_dataset("usr-topicalchat", usr_services.config)
    app = make_app("usr-topicalchat", services=usr_services)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("v")
        await wait_until(pilot, lambda: isinstance(app.screen, ReviewScreen) and app.screen.data is not None
                         and app.screen.data.run.id == run_id, "the run's review queue")
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        assert not screen.query_one("#review-estimate", Static).display
        await pilot.press("a")
        await wait_until(pilot, lambda: screen.label_plan is not None, "the label-next plan")
        await settle(pilot)
        plan = screen.label_plan
        assert plan is not None
        proposed = screen.queue_table.row_keys
        assert proposed == plan.to_label() and len(proposed) >= 3
        assert "give own ratings" in static_text(screen.query_one("#review-estimate", Static))

        shown: list[str] = []
        for item in proposed[:3]:
            screen.queue_table.move_cursor_to(item)
            await pilot.pause()
            label = dataset.get(item).human("Overall", Aggregation.MEAN)
            screen.query_one("#review-rating", Input).value = f"{float(label):.4f}"  # type: ignore[arg-type]
            await pilot.press("3")  # fine, with the own rating: stored, then the estimate follows
            await wait_until(pilot, lambda before=plan: before is not screen.label_plan,
                             "the estimate after the rating")
            await settle(pilot)
            plan = screen.label_plan
            shown.append(static_text(screen.query_one("#review-estimate", Static)))
        # Before two own ratings there is no estimate; after each later one it moves.
        assert "labels only" not in shown[0]
        assert "labels only" in shown[1] and "judge-assisted (PPI++)" in shown[2] and shown[1] != shown[2]
        assert "no label yet" in shown[2]  # the active estimate waits for the rest of the proposed items

        await pilot.press("a")  # back to the flagged queue
        await settle(pilot)
        assert screen.label_plan is None and not screen.query_one("#review-estimate", Static).display

    # The same plan and the same numbers as the CLI's, from the same stored ratings.
    printed_plan = cli_text(capsys, "runs", "label-next", str(run_id), "--budget", str(plan.budget), "--seed", "0",
                            "--format", "json")
    assert [row["item_id"] for row in json.loads(printed_plan)["results"]] == proposed
    printed = cli_text(capsys, "runs", "estimate", str(run_id), "--reviews", "--active-budget", str(plan.budget),
                       "--seed", "0")
    first_line = shown[2].splitlines()[0]
    for name in ("labels only", "judge-assisted (PPI++)"):
        row = next(line for line in printed.splitlines() if name in line)
        assert numbers(row)[:3] == numbers(first_line.split(name, 1)[1])[:3], (row, first_line)
