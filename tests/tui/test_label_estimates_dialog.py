"""The Scores screen's alternative annotator test and few-label estimates: the numbers `runs alt-test` and
`runs estimate --labelled 50 --seed 0` print, for the same stored run."""

from __future__ import annotations

import json
import re

import pytest
import usr_runs
from textual.widgets import Input, Static
from tui_helpers import settle, static_text, wait_until

from dialjudge.cli.main import main as cli_main
from dialjudge.core.api import open_dataset
from dialjudge.core.api.labels_estimates import estimate_for_run
from dialjudge.core.config import JudgeConfig
from dialjudge.core.errors import DialjudgeError
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.model import Aggregation
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.label_estimates_dialog import LabelEstimatesDialog
from dialjudge.tui.screens.review import ReviewScreen
from dialjudge.tui.screens.scores import ScoresScreen
from dialjudge.tui.services import Services

# The fixtures, by name.
usr_services = usr_runs.usr_services
good_run = usr_runs.good_run

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


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
        rated = proposed[:4]
        for item in rated:
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
        # Before two own ratings there is no estimate. After that, equal ratings give no interval (and
        # say why) rather than a zero-width one; once they differ, the estimate shows and moves.
        labels = [float(dataset.get(item).human("Overall", Aggregation.MEAN)) for item in rated]  # type: ignore[arg-type]
        assert "labels only" not in shown[0]
        estimates = []
        for count, text in enumerate(shown[1:], start=2):
            if len(set(labels[:count])) == 1:
                assert "are equal: no interval" in text and "labels only" not in text
            else:
                assert "labels only" in text and "judge-assisted (PPI++)" in text
                estimates.append(text)
        assert len(estimates) >= 2 and estimates[0] != estimates[1]
        assert "no label yet" in shown[-1]  # the active estimate waits for the rest of the proposed items

        await pilot.press("a")  # back to the flagged queue
        await settle(pilot)
        assert screen.label_plan is None and not screen.query_one("#review-estimate", Static).display

    # The same plan and the same numbers as the CLI's, from the same stored ratings.
    printed_plan = cli_text(capsys, "runs", "label-next", str(run_id), "--budget", str(plan.budget), "--seed", "0",
                            "--format", "json")
    assert [row["item_id"] for row in json.loads(printed_plan)["results"]] == proposed
    printed = cli_text(capsys, "runs", "estimate", str(run_id), "--reviews", "--active-budget", str(plan.budget),
                       "--seed", "0")
    first_line = shown[-1].splitlines()[0]  # after every rating above
    for name in ("labels only", "judge-assisted (PPI++)"):
        row = next(line for line in printed.splitlines() if name in line)
        assert numbers(row)[:3] == numbers(first_line.split(name, 1)[1])[:3], (row, first_line)


async def test_a_part_that_does_not_apply_says_why_and_the_other_still_shows(services: Services) -> None:
    """A run of 20 of the bundled sample's items: core refuses to draw 50 labels from them (its reason is
    shown), while the alternative annotator test still shows."""
    app = make_app(services=services)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        dataset = app.workspace.dataset
        assert dataset is not None
        app.runs.start(RunConfig.build(dataset, get_template("likert-1to5"), [JudgeConfig(name="fake", backend="fake")],
                                       aspect="overall", quality="overall", mode=ScoringMode.GENERATE, limit=20))
        await settle(pilot)
        run_id = app.runs.state.run_id
        with services.session.store() as store, pytest.raises(DialjudgeError) as refused:
            estimate_for_run(store, run_id, labelled=50, seed=0, dataset=dataset, app_config=services.config)
        await pilot.press("s")
        await settle(pilot)
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, LabelEstimatesDialog)
                         and app.screen.result is not None, "the test and the estimates arrived")
        dialog = app.screen
        assert isinstance(dialog, LabelEstimatesDialog) and dialog.result is not None
        assert dialog.result.estimate_problem == str(refused.value)
        assert str(refused.value) in " ".join(static_text(dialog.query_one("#estimates", Static)).split())
        assert dialog.result.alt_test_problem is None and dialog.result.alt_tests
        assert "Alternative annotator test" in static_text(dialog.query_one("#alt-test", Static))
