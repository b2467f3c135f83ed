"""A screenshot of the Tune screen after a search with the fake judge, compared with the accepted SVG.

Deterministic: the bundled sample, the fake judge (scores from a hash), a fixed terminal size and
seed, and a space file whose path is not shown. Regenerate with
``python -m pytest tests/tui/test_tune_snapshot.py --snapshot-update`` and look at the SVG.
"""

from __future__ import annotations

from pathlib import Path

from tui_helpers import FAKE_JUDGE_SEARCH_SPACE, SIZE, make_services, settle, wait_until

from dialjudge.tui.app import make_app

SPACE = FAKE_JUDGE_SEARCH_SPACE + """
[[variant]]
name = "bm25"
fewshot = "bm25-both:2"
"""


def test_tune_screen_after_a_search(snap_compare, tmp_path: Path):
    space = tmp_path / "space.toml"
    space.write_text(SPACE, encoding="utf-8")

    async def search(pilot) -> None:
        app = pilot.app
        await settle(pilot)
        await pilot.press("t")
        await settle(pilot)
        app.tune.load_space(space)
        await settle(pilot)
        await pilot.press("r")
        await wait_until(pilot, lambda: app.tune.state.report is not None, "the search reports")
        await settle(pilot)
        app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(services=make_services(tmp_path)), terminal_size=SIZE, run_before=search)
