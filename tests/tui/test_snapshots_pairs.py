"""Screenshot of the Datasets screen on pre-paired preference data (tests/data/mt_bench_human.jsonl): the
item table with both replies, and the highlighted pair's prompt, replies and every vote. Regenerate with
``python -m pytest tests/tui/test_snapshots_pairs.py --snapshot-update`` and look at the SVG."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tui_helpers import SIZE, make_services, settle

from dialjudge.core.loaders import load_dataset
from dialjudge.tui.app import make_app

PAIRS = Path(__file__).parent.parent / "data" / "mt_bench_human.jsonl"


def pairs_app(tmp_path: Path):
    def open_pairs(name: str):
        dataset = load_dataset(PAIRS)
        dataset.source = "mt_bench_human.jsonl"  # no path of this machine on screen
        return dataset

    services = dataclasses.replace(make_services(tmp_path), open_dataset=open_pairs)
    return make_app(services=services)


def test_datasets_screen_shows_a_pair_and_its_votes(snap_compare, tmp_path: Path):
    async def open_pairs(pilot) -> None:
        await settle(pilot)
        pilot.app.datasets.open("mt_bench_human")
        await settle(pilot)
        await pilot.press("d", "i")
        await settle(pilot)
        await pilot.pause()

    assert snap_compare(pairs_app(tmp_path), terminal_size=SIZE, run_before=open_pairs)
