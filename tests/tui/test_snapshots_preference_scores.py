"""Screenshot of the Scores screen on pre-paired preference data (tests/data/judge_bench_pairs.json) after a
pairwise run of the fake judge: the agreement table with the humans' votes and the per-pair rows under the
item table. Regenerate with ``python -m pytest tests/tui/test_snapshots_preference_scores.py --snapshot-update``
and look at the SVG."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from test_preference_scores import run_pairwise_on_pairs
from tui_helpers import SIZE, make_services, settle

from dialjudge.core.loaders import load_dataset
from dialjudge.tui.app import make_app

PAIRS = Path(__file__).parent.parent / "data" / "judge_bench_pairs.json"


def test_scores_screen_shows_the_agreement_with_the_humans_preferences(snap_compare, tmp_path: Path):
    def open_pairs(name: str):
        dataset = load_dataset(PAIRS)
        dataset.source = "judge_bench_pairs.json"  # no path of this machine on screen
        return dataset

    services = dataclasses.replace(make_services(tmp_path), open_dataset=open_pairs)

    async def run_then_show_scores(pilot) -> None:
        await run_pairwise_on_pairs(pilot, "judge_bench_pairs")
        pilot.app.clear_notifications()
        await pilot.press("s")
        await settle(pilot)
        await pilot.pause()

    assert snap_compare(make_app(services=services), terminal_size=SIZE, run_before=run_then_show_scores)
