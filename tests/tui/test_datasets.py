"""The Datasets screen: choosing and opening datasets, the summary, filtering and reading items."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input, OptionList, Select, Static, TabbedContent
from tui_helpers import SIZE, settle, static_text

from dialjudge.core.dataset_catalogue import open_dataset, recent_files
from dialjudge.core.loaders import save_dataset
from dialjudge.core.metrics import metric_info, score_pair
from dialjudge.core.model import Dataset, Example, Rating, Scale, ScaleKind, Turn
from dialjudge.tui.app import make_app
from dialjudge.tui.screens.datasets import DatasetsScreen, parse_range
from dialjudge.tui.widgets.item_view import ItemView
from dialjudge.tui.widgets.path_suggester import PathSuggester
from dialjudge.tui.widgets.virtual_table import VirtualTable
from shared_data import require_file


async def go_to_datasets(pilot) -> DatasetsScreen:
    await pilot.press("d")
    await pilot.pause()
    assert isinstance(pilot.app.screen, DatasetsScreen)
    return pilot.app.screen


async def choose(pilot, screen: DatasetsScreen, option_id: str) -> None:
    options = screen.query_one("#dataset-list", OptionList)
    options.focus()
    options.highlighted = options.get_option_index(option_id)
    await pilot.press("enter")
    await settle(pilot)


def shown(screen: DatasetsScreen) -> list[str]:
    return [str(k) for k in screen.query_one("#item-table", VirtualTable).row_keys]


async def test_open_usr_from_the_list_and_filter_its_items(services_factory, shared_data):
    require_file(shared_data, "usr/usr_topical_chat.json")
    app = make_app(services=services_factory(data_dirs=(shared_data,)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await go_to_datasets(pilot)
        await choose(pilot, screen, "usr-topicalchat")
        dataset = app.workspace.dataset
        assert dataset.name == "usr-topicalchat" and len(dataset) == 360
        summary = static_text(screen.query_one("#dataset-summary", Static))
        assert "360 in 60 contexts" in summary and "Maintains Context" in summary

        await pilot.press("i")
        assert screen.query_one("#dataset-tabs", TabbedContent).active == "items-tab"
        assert len(shown(screen)) == 360

        await pilot.press("slash")
        await pilot.press(*"ghibli")
        await pilot.pause()
        matches = shown(screen)
        expected = [ex.id for ex in dataset if "ghibli" in (ex.context_text() + (ex.candidate or "")
                                                             + " ".join(ex.references) + (ex.fact or "")).lower()]
        assert matches == expected and 0 < len(matches) < 360

        screen.query_one("#item-search", Input).value = ""
        screen.query_one("#system-filter", Select).value = "Argmax Decoding"
        screen.query_one("#range-quality", Select).value = "Overall"
        screen.query_one("#quality-range", Input).value = "4-5"
        await pilot.pause()
        expected = [ex.id for ex in dataset
                    if ex.system == "Argmax Decoding" and 4 <= ex.human("Overall") <= 5]
        assert shown(screen) == expected and expected

        table = screen.query_one("#item-table", VirtualTable)
        table.sort_by("human", reverse=True)
        values = [dataset.get(k).human("Overall") for k in shown(screen)]
        assert values == sorted(values, reverse=True)


async def test_item_view_shows_the_item_and_its_metric_scores(services):
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await go_to_datasets(pilot)
        await pilot.press("i")
        table = screen.query_one("#item-table", VirtualTable)
        table.focus()
        await pilot.press("down")  # onto the second item: a candidate, not the reference itself
        await settle(pilot)
        view = screen.query_one(ItemView)
        example = app.workspace.dataset.examples[1]
        assert view.example is example
        expected = score_pair(example.candidate, example.references, example.language,
                              app.services.metric_ids)
        assert view.metric_scores == {metric_info(m).label: v for m, v in expected.items()}
        text = static_text(view.query_one("#item-body", Static))
        for turn in example.context:
            assert turn.text[:30] in text.replace("\n", " ")
        assert example.fact[:30] in text.replace("\n", " ") and "a1" in text and "BLEU-1" in text


async def test_open_a_file_by_path(services, tmp_path: Path):
    sample = open_dataset("sample", remember=False)
    path = save_dataset(sample.subset(sample.examples[:10], name="ten"), tmp_path / "ten.jsonl")
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await go_to_datasets(pilot)
        await pilot.press("f")
        field = screen.query_one("#open-file", Input)
        assert field.has_focus
        field.value = str(path)
        await pilot.press("enter")
        await settle(pilot)
        assert app.workspace.dataset.name == "ten" and len(app.workspace.dataset) == 10
        assert path.resolve() in recent_files()
        options = screen.query_one("#dataset-list", OptionList)
        assert options.get_option(str(path.resolve())) is not None


def synthetic_dataset(n: int) -> Dataset:
    scale = Scale(ScaleKind.ORDINAL, 1, 5)
    examples = []
    for i in range(n):
        g = i // 5
        examples.append(Example(
            id=f"x{i:05d}", group_id=f"g{g}", context=(Turn("A", f"question number {g} about topic {g % 17}"),),
            candidate=f"answer {i % 7} to question {g}", references=(f"reference answer to question {g}",),
            system=f"system-{i % 5}", tags=frozenset({"open" if g % 2 else "closed"}),
            ratings={"overall": Rating(((i * 7) % 5 + 1, (i * 3) % 5 + 1, (i * 11) % 5 + 1), scale,
                                       ("a", "b", "c"))}))
    return Dataset("synthetic", examples)


async def test_ten_thousand_items_load_and_display(services_factory, tmp_path: Path):
    # How long this takes, and the longest UI stall, are measured by `python -m bench` (the app figure).
    path = save_dataset(synthetic_dataset(10_000), tmp_path / "big.jsonl")
    app = make_app(services=services_factory(metric_ids=("bleu1",)))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.datasets.open(str(path))
        await settle(pilot, rounds=20)
        assert app.workspace.dataset.name == "synthetic" and len(app.workspace.dataset) == 10_000
        assert app.screen.table.row_count == 10_000
        assert app.workspace.evaluators == ["BLEU-1"]


def test_parse_range():
    assert parse_range("3-5") == (3, 5)
    assert parse_range(" 5..3 ") == (3, 5)
    assert parse_range("4") == (4, 4)
    assert parse_range(">=4") == (4, float("inf"))
    assert parse_range("<2")[1] < 2
    assert parse_range("") is None
    with pytest.raises(ValueError, match="not a range"):
        parse_range("high")


async def test_path_suggester_completes_folders_and_files(tmp_path: Path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "usr_topical.json").write_text("[]")
    (tmp_path / "data" / ".hidden").write_text("")
    suggester = PathSuggester()
    assert await suggester.get_suggestion(str(tmp_path / "da")) == str(tmp_path / "data") + "/"
    assert await suggester.get_suggestion(str(tmp_path / "data") + "/u") == str(tmp_path / "data/usr_topical.json")
    assert await suggester.get_suggestion(str(tmp_path / "data") + "/") == str(tmp_path / "data/usr_topical.json")
    assert await suggester.get_suggestion(str(tmp_path / "nothing") + "/x") is None


async def test_a_pair_shows_its_prompt_both_replies_and_every_vote(services, tmp_path: Path):
    path = Path(__file__).parent.parent / "data" / "mt_bench_human.jsonl"
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await go_to_datasets(pilot)
        await pilot.press("f")
        screen.query_one("#open-file", Input).value = str(path)
        await pilot.press("enter")
        await settle(pilot)
        assert app.workspace.dataset.name == "mt_bench_human" and len(app.workspace.dataset) == 4
        await pilot.press("i")
        table = screen.query_one("#item-table", VirtualTable)
        assert shown(screen)[0] == "q81-t1-alpaca-13b-vs-gpt-3.5-turbo"
        table.focus()
        await pilot.press("down", "up")
        await settle(pilot)
        view = screen.query_one(ItemView)
        assert view.example is not None and view.example.id == "q81-t1-alpaca-13b-vs-gpt-3.5-turbo"
        text = static_text(view.query_one("#item-body", Static))
        assert "Write a one-sentence travel tip for Hawaii." in text
        assert "Reply A" in text and "Go to Hawaii." in text
        assert "Reply B" in text and "Visit Hawaii in spring" in text
        for annotator in ("expert_0", "expert_1", "author_2"):
            assert annotator in text  # every vote, by annotator
        assert "no candidate to score" in text
        votes = next(line for line in text.splitlines() if line.strip().startswith("preference"))
        assert votes.split()[-1] == "B"  # B, B, tie: the majority
        table.focus()
        await pilot.press("down", "down")  # q82: one vote each way, a split tie, not the first label
        await settle(pilot)
        text = static_text(view.query_one("#item-body", Static))
        votes = next(line for line in text.splitlines() if line.strip().startswith("preference"))
        assert votes.rstrip().endswith("tie (split)")
        await pilot.press("slash")
        await pilot.press(*"sunscreen")  # in one reply of one pair only: the replies are searched
        await pilot.pause()
        assert shown(screen) == ["q81-t1-alpaca-13b-vs-vicuna-13b"]


async def test_the_list_cursor_stays_on_the_dataset_just_opened(services, tmp_path: Path):
    # The list is rebuilt after each open; the cursor used to jump back to the top.
    sample = open_dataset("sample")
    path = save_dataset(sample.subset(sample.examples[:10], name="ten"), tmp_path / "ten.jsonl")
    app = make_app(services=services)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await go_to_datasets(pilot)
        options = screen.query_one("#dataset-list", OptionList)
        await choose(pilot, screen, "incar-kpi")
        assert app.workspace.dataset.name == "incar-kpi"
        assert options.highlighted_option is not None and options.highlighted_option.id == "incar-kpi"

        app.datasets.open(str(path))  # a new "recently opened" row appears: the rows shift
        await settle(pilot)
        assert options.highlighted_option is not None and options.highlighted_option.id == str(path.resolve())
