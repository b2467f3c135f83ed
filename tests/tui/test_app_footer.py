"""The footer fits its width on every screen: at 80 columns nothing runs off the edge ("p Pl"), Help and
Quit stay, and every key it leaves out or shortens is in the help with its full description."""

from __future__ import annotations

import pytest
from textual.binding import Binding
from textual.widgets._footer import FooterKey
from tui_helpers import settle

from dialjudge.tui.app import make_app
from dialjudge.tui.keys import key_sections
from dialjudge.tui.navigation import DESTINATIONS
from dialjudge.tui.widgets.app_footer import SCREENS, AppFooter, FooterEntry, fit, shortened

KEYS = {k: k for k in ("o", "r", "q", "?", "^t", "^s", "e", "f2", *(d.key for d in DESTINATIONS))}


def entry(key: str, description: str, action: str | None = None) -> FooterEntry:
    return FooterEntry(((Binding(key, action or f"do_{key}", description), True, ""),))


def screen_keys() -> list[FooterEntry]:
    return [FooterEntry(((d.binding(), True, ""),)) for d in DESTINATIONS]


def test_a_footer_that_fits_is_left_as_it_is():
    entries = [entry("o", "Sort"), *screen_keys(), entry("?", "Help", "help"), entry("q", "Quit", "quit")]
    shown, compact = fit(entries, 200, KEYS)
    assert shown == entries and not compact
    # A little short of room: compact, every screen key still spelled out.
    narrower = sum(e.width(KEYS, compact=True) for e in entries)
    assert narrower < sum(e.width(KEYS, compact=False) for e in entries)
    shown, compact = fit(entries, narrower, KEYS)
    assert shown == entries and compact


def test_a_short_footer_folds_the_screen_keys_then_shortens_then_drops_the_screens_own_keys_last_first():
    lab = [entry("e", "Edit template"), entry("^t", "Try on this item"), entry("^s", "Save template"),
           entry("f2", "Edit persona")]
    entries = [*lab, *screen_keys(), entry("?", "Help", "help"), entry("q", "Quit", "quit")]
    shown, compact = fit(entries, 67, KEYS)
    assert compact
    descriptions = [e.description for e in shown]
    # Two "Edit" keys keep as many words as tell them apart; the last of the screen's keys went first.
    assert descriptions == ["Edit template", "Try", "Save", "Screens", "Help", "Quit"]
    folded = next(e for e in shown if e.group is SCREENS)
    assert [b.key for b, _, _ in folded.bindings] == [d.key for d in DESTINATIONS]
    assert sum(e.width(KEYS, compact=True) for e in shown) <= 67
    # However narrow, Help and Quit stay: the way to every key left out.
    shown, _ = fit(entries, 10, KEYS)
    assert [e.description for e in shown if e.group is None] == ["Help", "Quit"]


def test_shortening_keeps_descriptions_apart():
    shown = shortened([entry("a", "Next item"), entry("b", "Next unreviewed"), entry("c", "Save review")])
    assert [e.description for e in shown] == ["Next item", "Next unreviewed", "Save"]


@pytest.mark.parametrize("size", [(80, 24), (160, 48)], ids=["80x24", "160x48"])
async def test_every_screens_footer_fits_and_its_keys_are_in_the_help(services, size):
    app = make_app(services=services)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        for destination in DESTINATIONS:
            await pilot.press(destination.key)
            await settle(pilot)
            footer = app.screen.query_one(AppFooter)
            await pilot.pause()
            keys = list(footer.query(FooterKey))
            assert keys, f"{destination.title}: the footer is empty"
            right = max(k.region.right for k in keys)
            assert right <= size[0], f"{destination.title}: the footer runs to column {right}"
            shown = {k.key for k in keys}
            assert {"question_mark", "q"} <= shown, f"{destination.title}: Help or Quit left the footer"
            in_help = {b.key for section in key_sections(app) for b in section.bindings}
            in_help |= {key for b in (s for section in key_sections(app) for s in section.bindings)
                        for key in b.key.split(",")}
            missing = shown - in_help
            assert not missing, f"{destination.title}: footer keys the help does not list: {missing}"


def footer_keys(footer: AppFooter) -> list[tuple[str, ...]]:
    """What the footer offers, in order: each key with its description and whether it is on, each group's label,
    and whether the footer is compact."""
    out: list[tuple[str, ...]] = [("compact", str(footer.compact))]
    for widget in footer.query("FooterKey, FooterLabel"):
        if isinstance(widget, FooterKey):
            out.append((widget.key, widget.description, "off" if widget.has_class("-disabled") else "on",
                        "compact" if widget.compact else ""))
        else:
            out.append(("label", str(widget.render())))
    return out


@pytest.mark.parametrize("size", [(160, 48), (80, 24)], ids=["160x48", "80x24"])
async def test_a_run_starting_and_ending_adds_and_removes_cancel_without_rebuilding_the_footer(services, size):
    """Esc's "Cancel run" comes and goes with a run. At 160 columns it is mounted and removed alone (rebuilding
    every key stalled the UI for 50-60 ms), the footer as compact as before; at any width the keys equal a
    fresh rebuild's."""
    from dialjudge.core.judges.run.events import RunFailed, RunStarted
    from dialjudge.tui.controllers.runs import RunEventReceived

    app = make_app(services=services)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        footer = app.screen.query_one(AppFooter)
        recomposed: list[int] = []
        original = footer.recompose

        async def counted() -> None:
            recomposed.append(1)
            await original()

        footer.recompose = counted  # type: ignore[method-assign]
        before = footer_keys(footer)
        assert "escape" not in [k for k, *_ in before]

        app.post_message(RunEventReceived(RunStarted(run_id=5, total=50)))
        await settle(pilot)
        await pilot.pause()
        during = footer_keys(footer)
        assert app.runs.active
        if size == (160, 48):  # at 80 columns Cancel is among the keys left to the help
            assert "escape" in [k[0] for k in during]
            assert not recomposed, "the footer was rebuilt for one key"
        await footer.recompose()
        await pilot.pause()
        assert footer_keys(footer) == during, "the patched footer differs from a rebuilt one"

        recomposed.clear()
        app.post_message(RunEventReceived(RunFailed("the judge broke", run_id=5)))
        await settle(pilot)
        assert not app.runs.active
        await pilot.pause()
        after = footer_keys(footer)
        if size == (160, 48):
            assert not recomposed
            assert after == before
        await footer.recompose()
        await pilot.pause()
        assert footer_keys(footer) == after
