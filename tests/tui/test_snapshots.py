"""Screenshots of each screen on the bundled sample, compared with the accepted SVGs in __snapshots__.

Deterministic by construction: a fixed dataset and terminal size, metrics whose
labels do not depend on the machine, seeded bootstrap CIs, no data folders (so
no path of this machine shows), no rates or clocks on screen. Regenerate with
``python -m pytest tests/tui/test_snapshots.py --snapshot-update`` and look at the SVGs.
"""

from __future__ import annotations

from pathlib import Path

from tui_helpers import SIZE, make_services, settle

from dialjudge.tui.app import make_app


def sample_app(tmp_path: Path):
    return make_app(services=make_services(tmp_path))


def test_scores_screen(snap_compare, tmp_path: Path):
    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=settle)


def test_datasets_screen(snap_compare, tmp_path: Path):
    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=settle, press=["d"])


def test_datasets_items_tab(snap_compare, tmp_path: Path):
    async def open_items(pilot) -> None:
        await settle(pilot)
        await pilot.press("d", "i")
        await settle(pilot)  # the highlighted item's metric scores
        await pilot.pause()

    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=open_items)


def test_plots_screen(snap_compare, tmp_path: Path):
    async def plot_a_metric(pilot) -> None:
        await settle(pilot)
        await pilot.press("p", "e", "e")  # the third evaluator: ROUGE-L

    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=plot_a_metric)


def test_help_screen(snap_compare, tmp_path: Path):
    assert snap_compare(sample_app(tmp_path), terminal_size=SIZE, run_before=settle, press=["question_mark"])
