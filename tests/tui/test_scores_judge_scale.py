"""A judge's cells on the Scores screen hold its score on its own scale (a likert-1to5 judge: 1-5), the number
its judgments CSV (``dialjudge runs export RUN --format csv``) gives as ``score``, and its column says the scale;
the 0-1 value stays what the statistics and the disagreement colour use."""

from __future__ import annotations

import csv
import io
import os

import pytest
from tui_helpers import SIZE, settle

from dialjudge.cli.main import main
from dialjudge.core.config import JudgeConfig
from dialjudge.core.format import number_text
from dialjudge.core.judges.prompts.templates import get_template
from dialjudge.core.judges.run.config import RunConfig
from dialjudge.core.judges.types import ScoringMode
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.scores import ScoresScreen

FAKE = JudgeConfig(name="fake", backend="fake", model="fake-judge")


@pytest.mark.parametrize("mode", [ScoringMode.LOGPROB, ScoringMode.GENERATE])
async def test_a_judge_cell_is_the_csv_score_on_the_judges_scale(services, tmp_path, capsys, monkeypatch, mode):
    from pathlib import Path

    store = Path(os.environ["DIALJUDGE_DATA_DIR"]) / "runs.sqlite3"  # where the command line looks
    services = services.with_store_at(store)
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.runs.start(RunConfig.build(app.workspace.dataset, get_template("likert-1to5"), [FAKE], aspect="overall",
                                       quality="overall", mode=mode, limit=8))
        await settle(pilot)
        run_id = app.runs.state.run_id
        screen = app.screen
        assert isinstance(screen, ScoresScreen)
        evaluator = f"fake#{run_id}"
        assert app.workspace.judge_scale(evaluator) == (1.0, 5.0)
        column = next(c for c in screen.table.columns if c.key == evaluator)
        assert column.label == f"{evaluator} 1-5"
        ids = [ex.id for ex in app.workspace.dataset.examples[:8]]
        cells = {item: screen.table.cell(item, evaluator) for item in ids}
        normalized = {item: app.workspace.scores_of(evaluator)[item] for item in ids}

    code = main(["runs", "export", str(run_id), "--format", "csv"])
    printed, err = capsys.readouterr()
    assert code == 0, err
    rows = {row["item_id"]: row for row in csv.DictReader(io.StringIO(printed))}
    assert set(rows) == set(ids)
    for item in ids:
        score, unit = float(rows[item]["score"]), float(rows[item]["normalized"])
        assert cells[item].text == number_text(score, 2)  # the app's cell is the CSV's score
        assert 1.0 <= score <= 5.0 and unit == pytest.approx(normalized[item])
        assert score == pytest.approx(1 + 4 * unit)
    if mode is ScoringMode.LOGPROB:  # an expected rating, not only whole points
        assert any(not float(rows[item]["score"]).is_integer() for item in ids)
