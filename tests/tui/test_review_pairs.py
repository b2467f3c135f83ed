"""The Review screen after a pairwise run on pre-paired preference data (tests/data/judge_bench_pairs.json): the
queue lists the pairs the judge gets wrong in both orders and those whose verdict flips with the order (core's
queue), and a flagged pair shows why, with the judge's verdict in each order."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static
from tui_helpers import SIZE, make_services, settle, static_text

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.fake import FakeBackend
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.run.pairwise import PairSetting
from dialjudge.core.judges.types import ScoringMode
from dialjudge.core.review_queue import FlagKind
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.review import ReviewScreen
from dialjudge.tui.widgets.item_view import ItemView
from dialjudge.tui.widgets.judgment_view import JudgmentView

PAIRS = Path(__file__).parent.parent / "data" / "judge_bench_pairs.json"
#: The judge's verdict by reply with A shown first, then with B shown first. Against the humans' majority
#: (p1 A, p2 B, p3 tie, p4 tie (split), p5 B, p6 B): p2 flips, p4 and p6 are wrong in both orders.
ORDERS = {"p1": ("A", "A"), "p2": ("A", "B"), "p3": ("tie", "tie"), "p4": ("A", "A"), "p5": ("B", "B"),
          "p6": ("A", "A")}


def scripted(item_id: str, prompt: str) -> float:
    """The verdict of ORDERS as the point of the reply shown first (pairwise-plain: A, B, tie = 1, 0, 0.5)."""
    first, _ = item_id.split(">")
    pair, side = first.rsplit("#", 1)
    verdict = ORDERS[pair][0 if side == "A" else 1]
    return 0.5 if verdict == "tie" else 1.0 if verdict == side else 0.0


async def test_the_review_queue_flags_pairs_wrong_in_both_orders_and_pairs_that_flip(tmp_path):
    services = make_services(tmp_path, make_backend=lambda config: FakeBackend(name=config.name, score_fn=scripted))
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.datasets.open(str(PAIRS))
        await settle(pilot)
        dataset = app.workspace.dataset
        assert dataset is not None and dataset.name == "judge_bench_pairs"
        app.runs.start(RunConfig.build(dataset, get_template("pairwise-plain"), [JudgeConfig(name="fake", backend="fake")],
                                       mode=ScoringMode.GENERATE, pairs=PairSetting()))
        await settle(pilot)
        await pilot.press("v")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ReviewScreen)
        # most urgent first: wrong in both orders (in the file's order), then the flip
        assert screen.queue_table.row_keys == ["p4", "p6", "p2"]
        assert screen.queue_table.cell("p2", "why").text == FlagKind.PAIR_FLIPS.label
        status = static_text(screen.query_one("#review-status", Static))
        assert "3 flagged" in status and "wrong in both orders 2" in status and "flips with the order 1" in status

        assert screen.query_one(ItemView).example.id == "p4"
        shown = static_text(screen.query_one(JudgmentView).query_one("#judgment-body", Static))
        assert "wrong in both orders: fake: A with A shown first, A with B shown first; humans: tie" in shown
        await pilot.press("down", "down")
        await settle(pilot)
        assert screen.query_one(ItemView).example.id == "p2"
        shown = static_text(screen.query_one(JudgmentView).query_one("#judgment-body", Static))
        print(shown)
        assert "flips with the order: fake: A with A shown first, B with B shown first; humans: B" in shown
        assert shown.count("fake  generate") == 2  # the judgment of each asked order, under the flag
