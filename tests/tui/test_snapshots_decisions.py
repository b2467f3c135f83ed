"""Screenshot of the Scores screen's decision area: two fake judges compared, their confusion matrices
and inter-judge agreement. Regenerate with
``python -m pytest tests/tui/test_snapshots_decisions.py --snapshot-update`` and look at the SVG."""

from __future__ import annotations

from pathlib import Path

from tui_helpers import SIZE, make_services, settle

from dialjudge.core.config import JudgeConfig, Sampling
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.tui.app import make_app


def test_scores_screen_comparing_two_judges(snap_compare, tmp_path: Path):
    async def compare(pilot) -> None:
        await settle(pilot)
        dataset = pilot.app.workspace.dataset
        for name, seed in (("fake", 0), ("fake2", 1)):
            judge = JudgeConfig(name=name, backend="fake", sampling=Sampling(seed=seed))
            pilot.app.runs.start(RunConfig.build(dataset, get_template("likert-1to5"), [judge], aspect="overall",
                                                 quality="overall", mode=ScoringMode.GENERATE))
            await settle(pilot)
        await pilot.press("c")
        await pilot.pause()
        await pilot.press("ctrl+s")  # fake#1 (A) against fake2#2 (B)
        await settle(pilot)
        pilot.app.clear_notifications()
        await pilot.pause()

    assert snap_compare(make_app(services=make_services(tmp_path)), terminal_size=SIZE, run_before=compare)
