"""The done-when command with the bundled judge: `dialjudge judge --dataset <a JUDGE-BENCH pairwise file>
--template pairwise-plain` exits 0 and prints the agreement table over the 6 pairs, as core computes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run

from dialjudge.core.api import PreferenceRequest
from dialjudge.core.api.preferences import agreement_rows, stored_preference_report
from dialjudge.core.judges.store.run_store import RunStore
from dialjudge.core.loaders import load_dataset

pytestmark = pytest.mark.model

PAIRS = Path(__file__).parent.parent / "data" / "judge_bench_pairs.json"


def test_the_bundled_judge_on_a_judge_bench_pairwise_file(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "judge", "--dataset", str(PAIRS), "--template", "pairwise-plain", "--judge",
                         "smollm2", "--bootstrap", "200")
    assert code == 0, err
    assert "6 pre-paired pairs with the humans' votes, both orders: 12 judgments" in err
    with RunStore() as store:
        record = store.runs.list_runs()[0]
        report = stored_preference_report(store, record.id, load_dataset(PAIRS), PreferenceRequest(n_boot=200))
    judge, humans = agreement_rows(report)
    assert judge[0] == "smollm2" and judge[1] == humans[1] == "6"
    for row in (judge, humans):
        assert f"│{row[0]} " in out
        for cell in row[2:]:
            assert cell in out
    assert report.judges["smollm2"].order.both_orders + report.judges["smollm2"].failed <= 6
