"""The agreement statistics are computed one view at a time: a request that comes while a
computation runs waits for it, and only the newest view is computed next.

A cancelled thread worker computes on regardless, so switching subsets quickly used to run two or
three bootstraps at once, which took the cores from the UI thread (the filter stall of issue 23).
"""

from __future__ import annotations

import threading

from test_scores import assert_row_matches_cell, core_table, fake_judgment, scores_screen, unit_score
from tui_helpers import SIZE, settle, wait_until

from dialjudge.tui.app import make_app
from dialjudge.tui.controllers.datasets import STATS_BUSY_SHARE, STATS_GROUP
from dialjudge.tui.scores_view_model import AgreementInputs

METRIC = "BLEU-4"


async def test_a_refresh_asked_for_meanwhile_waits_and_only_the_newest_view_is_computed(services, monkeypatch):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = scores_screen(app)
        gate = threading.Event()
        computed: list[str] = []
        original = AgreementInputs.table_in_worker

        def gated_table(inputs: AgreementInputs, *args, **options):  # type: ignore[no-untyped-def]
            computed.append(inputs.subset.spec)
            assert gate.wait(timeout=60), "the test never opened the gate"
            return original(inputs, *args, **options)

        monkeypatch.setattr(AgreementInputs, "table_in_worker", gated_table)

        def stats_running() -> int:
            return sum(1 for w in app.workers if w.group == STATS_GROUP and w.is_running)

        app.datasets.choose_view(subset="open")
        await wait_until(pilot, lambda: computed == ["open"], "the first computation started")
        app.datasets.choose_view(subset="closed")
        app.datasets.choose_view(subset="all")
        await pilot.pause(0.05)
        assert computed == ["open"] and stats_running() == 1
        gate.set()
        await settle(pilot)

        assert computed == ["open", "all"]  # "closed" was no longer on show when its turn came
        assert app.workspace.subset.spec == "all"
        table = core_table(app, "all", "overall")
        assert METRIC in screen.panel.rows
        for label in app.workspace.metric_names:
            assert_row_matches_cell(screen.panel.rows[label], table.cell(label, "overall"))
        assert all(not screen.panel.rows[label].live for label in app.workspace.metric_names)


async def test_a_failed_computation_still_lets_the_next_one_run(services, monkeypatch, worker_failures):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = scores_screen(app)
        gate = threading.Event()
        original = AgreementInputs.table_in_worker
        calls: list[str] = []

        def first_fails(inputs: AgreementInputs, *args, **options):  # type: ignore[no-untyped-def]
            calls.append(inputs.subset.spec)
            if len(calls) == 1:
                assert gate.wait(timeout=60)
                raise RuntimeError("bootstrap exploded")
            return original(inputs, *args, **options)

        monkeypatch.setattr(AgreementInputs, "table_in_worker", first_fails)
        app.datasets.choose_view(subset="open")
        await wait_until(pilot, lambda: calls == ["open"], "the first computation started")
        app.datasets.choose_view(subset="closed")
        gate.set()
        await settle(pilot)
        worker_failures.expect("bootstrap exploded")
        assert calls == ["open", "closed"]
        table = core_table(app, "closed", "overall")
        for label in app.workspace.metric_names:
            assert_row_matches_cell(screen.panel.rows[label], table.cell(label, "overall"))


async def test_a_runs_periodic_refresh_waits_in_proportion_to_the_last_computation(services_factory, monkeypatch):
    app = make_app(services=services_factory(stats_interval_s=0.5))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert app.datasets._stats_seconds > 0  # the statistics of the opened dataset were timed
        delays: list[float] = []
        original = app.set_timer

        def recording_set_timer(delay, callback, **options):  # type: ignore[no-untyped-def]
            delays.append(delay)
            return original(delay, callback, **options)

        monkeypatch.setattr(app, "set_timer", recording_set_timer)
        first = app.workspace.dataset.examples[0].id
        app.datasets._stats_seconds = 3.0  # as if the last computation took 3 s
        app.datasets.add_judgment(fake_judgment(first, unit_score(first)), run_id=1)
        assert delays == [STATS_BUSY_SHARE * 3.0]
        app.datasets.refresh_stats()  # the timer is dropped: a refresh is asked for now
        await settle(pilot)
        app.datasets._stats_seconds = 0.01  # a quick computation: the configured interval holds
        app.datasets.add_judgment(fake_judgment(first, unit_score(first)), run_id=1)
        assert delays[-1] == 0.5
