"""Screenshots of the column dialog (a CSV with other column names opened at launch) at 80×24 and 200×50.

Regenerate with ``python -m pytest tests/tui/test_snapshots_column_map.py --snapshot-update`` and look at
the SVG.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_helpers import settle, wait_until

from dialjudge.tui.app import make_app
from dialjudge.tui.screens.column_map_dialog import ColumnMapDialog
from dialjudge.tui.services import Services

CSV = """item,history,reply,gold,overall_a1,overall_a2,notes
x1,A: hi,how are you,fine thanks,4,5,n1
x2,A: yo,sup,hey,2,,n2
"""


@pytest.mark.parametrize("size", [(80, 24), (200, 50)])
def test_column_dialog(snap_compare, services: Services, tmp_path: Path, size: tuple[int, int]) -> None:
    path = tmp_path / "other.csv"
    path.write_text(CSV, encoding="utf-8")

    async def dialog_shown(pilot) -> None:
        await wait_until(pilot, lambda: isinstance(pilot.app.screen, ColumnMapDialog), "the column dialog")
        await settle(pilot)

    assert snap_compare(make_app(str(path), services=services), terminal_size=size, run_before=dialog_shown)
