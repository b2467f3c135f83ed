"""The Review screen and its queue: flagged items, verdicts stored with the run, exports with manual labels."""

from __future__ import annotations

import csv
import json

from textual.widgets import Input, Static
from tui_helpers import SIZE, make_services, settle, static_text

from dialjudge.core.config import JudgeConfig
from dialjudge.core.dataset_catalogue import open_dataset
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.review_queue import FlagKind, build_queue
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.dialogs import ExportDialog
from dialjudge.tui.screens.review import ReviewScreen
from dialjudge.tui.widgets.item_view import ItemView
from dialjudge.tui.widgets.judgment_view import JudgmentView
from dialjudge.tui.widgets.review_form import ReviewForm


def human(item_id: str) -> float:
    return float(open_dataset("sample", remember=False).get(item_id).human("overall"))


def agreeable(item_id: str, prompt: str) -> float:
    """Scores like the humans, except adversarial candidates and seq2seq answers, rated top."""
    if "-adv" in item_id or item_id.endswith("-s2s"):
        return 5.0
    return human(item_id)


def contrary(item_id: str, prompt: str) -> float:
    """Scores like the humans, except human rewrites, rated bottom (the first judge likes them)."""
    return 1.0 if item_id.endswith("-hum") else human(item_id)


def two_judge_services(tmp_path):
    def make(config: JudgeConfig) -> FakeBackend:
        if config.name == "fake":
            return FakeBackend(name="fake", score_fn=agreeable)
        return FakeBackend(name=config.name, score_fn=contrary, garbage_every=10)

    return make_services(tmp_path, make_backend=make)


def two_judge_run(dataset) -> RunConfig:
    judges = [JudgeConfig(name="fake", backend="fake"), JudgeConfig(name="fake2", backend="fake")]
    return RunConfig.build(dataset, get_template("likert-1to5"), judges, aspect="overall", quality="overall",
                           mode=ScoringMode.GENERATE)


async def run_and_review(pilot) -> ReviewScreen:
    app = pilot.app
    await settle(pilot)
    app.runs.start(two_judge_run(app.workspace.dataset))
    await settle(pilot)
    await pilot.press("v")
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, ReviewScreen)
    return screen


async def test_the_queue_holds_every_kind_of_flag_and_shows_the_item(tmp_path):
    services = two_judge_services(tmp_path)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_and_review(pilot)
        run_id = app.runs.state.run_id
        with services.session.store() as store:
            judgments = store.judgments.load_judgments(run_id)
        expected = build_queue(app.workspace.dataset, judgments, "overall")
        assert screen.queue_table.row_keys == [case.item_id for case in expected]
        kinds = {flag.kind for case in expected for flag in case.flags}
        # A generate-mode run measures no valid-answer mass (test_probability_api.py flags that).
        # ... and pre-paired data's pair flags belong to runs on pairs (test_review_pairs.py).
        assert kinds == set(FlagKind) - {FlagKind.LOW_MASS, FlagKind.PAIR_WRONG, FlagKind.PAIR_FLIPS}
        assert expected[0].kind is FlagKind.PARSE_FAILURE

        first = expected[0]
        assert screen.query_one(ItemView).example.id == first.item_id
        shown = static_text(screen.query_one(JudgmentView).query_one("#judgment-body", Static))
        assert "not scored" in shown and "I cannot decide on this one." in shown
        for judge in ("fake", "fake2"):
            assert judge in shown
        status = static_text(screen.query_one("#review-status", Static))
        assert f"{len(expected)} flagged · 0 reviewed" in status


async def test_a_review_is_stored_with_the_run_and_exported_with_manual_labels(tmp_path):
    services = two_judge_services(tmp_path)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        screen = await run_and_review(pilot)
        run_id = app.runs.state.run_id
        first, second = screen.queue_table.row_keys[:2]

        await pilot.press("1")  # judge wrong, at once
        await settle(pilot)
        with services.session.store() as store:
            assert store.reviews.reviews(run_id)[first].verdict == "judge-wrong"
        assert screen.queue_table.cell(first, "review").text == "judge wrong"

        await pilot.press("down")
        assert screen.case.item_id == second
        assert screen.query_one(ReviewForm).verdict is None  # nothing carried over from the first item
        screen.query_one("#review-note", Input).value = "two annotators were lenient"
        screen.query_one("#review-rating", Input).value = "9"  # outside 1-5: refused
        await pilot.press("2")  # the table has focus: marks "human label doubtful"
        await settle(pilot)
        with services.session.store() as store:
            assert second not in store.reviews.reviews(run_id)
        screen.query_one("#review-rating", Input).value = "2.5"
        await pilot.press("ctrl+s")
        await settle(pilot)
        with services.session.store() as store:
            review = store.reviews.reviews(run_id)[second]
        assert (review.verdict, review.note, review.own_rating) == (
            "human-doubtful", "two annotators were lenient", 2.5)
        assert "2 reviewed" in static_text(screen.query_one("#review-status", Static))

        await pilot.press("x")
        await pilot.pause()
        dialog = app.screen
        assert isinstance(dialog, ExportDialog)
        dialog.query_one("#export-folder", Input).value = str(tmp_path / "out")
        dialog.query_one("#format-reviews-jsonl").value = True
        await pilot.press("ctrl+s")
        await settle(pilot)
        with (tmp_path / "out" / f"run-{run_id}-reviews.csv").open(encoding="utf-8") as f:
            rows = {row["item_id"]: row for row in csv.DictReader(f)}
        assert len(rows) == 60
        assert rows[second]["label"] == "2.5" and rows[second]["label_is_manual"] == "True"
        assert rows[second]["dataset_label"] == str(human(second))
        assert rows[first]["label_is_manual"] == "False" and rows[first]["verdict"] == "judge-wrong"
        assert sum(row["label_is_manual"] == "True" for row in rows.values()) == 1
        lines = (tmp_path / "out" / f"run-{run_id}-reviews.jsonl").read_text(encoding="utf-8").splitlines()
        assert json.loads(lines[0]).keys() == rows[first].keys()

        await pilot.press("n")  # the next item without a review
        third = screen.case.item_id
        assert third not in (first, second)
        await pilot.press("e")  # a note for an item without a verdict: Enter asks for one first
        assert app.focused is screen.query_one("#review-note")
        await pilot.press(*"check", "enter")
        await settle(pilot)
        with services.session.store() as store:
            assert set(store.reviews.reviews(run_id)) == {first, second}  # nothing stored for the third
        await pilot.press("3")  # the note stays in the form; the verdict stores both
        await settle(pilot)
        with services.session.store() as store:
            assert (store.reviews.reviews(run_id)[third].verdict, store.reviews.reviews(run_id)[third].note) == ("fine", "check")
