"""The Scores screen's metric profile picker: the nlg-eval profile's columns replace the default's,
with the numbers core computes, and METEOR 1.5 without Java says why it has none."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.widgets import Select
from tui_helpers import SIZE, settle, wait_until

from dialjudge.core.metrics import score_examples
from dialjudge.core.metrics.families import meteor_jar
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.scores import ScoresScreen

#: The app's fast metrics (bleu1, bleu4, rougeL, chrf++) plus METEOR: the profile scores those it has.
METRICS = ("bleu1", "bleu4", "rougeL", "chrf++", "meteor")
NLG_EVAL_LABELS = ["BLEU-1 (nlg-eval)", "BLEU-4 (nlg-eval)", "METEOR 1.5 (nlg-eval)", "ROUGE-L (nlg-eval)"]


@pytest.mark.own_compute_process  # the app's compute process must start without java on its PATH
async def test_picking_nlg_eval_rescored_the_metrics_with_its_code(services_factory, monkeypatch: pytest.MonkeyPatch):
    services = services_factory(metric_ids=METRICS)
    real_which = meteor_jar.shutil.which
    monkeypatch.setattr(meteor_jar.shutil, "which", lambda name: None if name == "java" else real_which(name))
    # The metrics are scored in the app's compute process, which inherits the environment: no java there either.
    monkeypatch.setenv("PATH", os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                                               if not (Path(d) / "java").exists()))
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ScoresScreen)
        default_labels = list(app.workspace.metric_names)
        assert "BLEU-4" in default_labels
        screen.query_one("#profile-select", Select).value = "nlg-eval"
        await wait_until(pilot, lambda: app.workspace.metric_names == NLG_EVAL_LABELS, "the nlg-eval columns")
        await settle(pilot)
        assert [c.key for c in screen.table.columns][3:] == NLG_EVAL_LABELS
        expected = score_examples(app.workspace.dataset.examples, ["bleu4"], profile="nlg-eval")
        assert app.workspace.metric_scores is not None
        assert app.workspace.metric_scores["nlg-eval-bleu4"] == expected["nlg-eval-bleu4"]
        assert app.workspace.metric_scores["nlg-eval-meteor"] == {}
        status = screen.status_text().plain
        assert "METEOR 1.5 (nlg-eval): not computed: Java was not found" in status
        screen.query_one("#profile-select", Select).value = "default"
        await wait_until(pilot, lambda: app.workspace.metric_names == default_labels, "the default columns again")
