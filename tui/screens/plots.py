"""Per evaluator: how its scores are spread (judges crowd at 0.8-1.0), and how they follow the humans."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from plotext._utility import hist_data  # the binning plt.hist draws with (plotext exports no other name)
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Header, Label, OptionList
from textual.widgets.option_list import Option
from textual_plotext import PlotextPlot

from ..controllers.adversarial import DiscernmentComputed, has_adversarial
from ..state import Change, WorkspaceChange
from ..widgets.app_footer import AppFooter
from ..widgets.discernment_panel import DiscernmentPanel
from ..widgets.selection_bar import SelectionBar
from .base import VIEW_BINDINGS, WorkspaceScreen, no_dataset_text

HISTOGRAM_BINS = 20
#: Rows of a plot that are not its canvas: title, top and bottom frame, x tick labels, x label.
PLOT_FRAME_ROWS = 5
#: Where Liu et al.'s Figure 5 (Evaluate What You Can't Evaluate) shows LLM judges crowding.
HIGH_SCORE = 0.8


@dataclass(frozen=True)
class PlottedData:
    """What the two plots show: the evaluator's scores, and (human label, score) pairs."""

    evaluator: str
    scores: tuple[float, ...]
    pairs: tuple[tuple[float, float], ...]


class CountHistogram(PlotextPlot):
    """The histogram of an evaluator's scores. How many count ticks fit depends on its height, which
    changes with the panel below it; each change is announced so that the screen redraws it."""

    @dataclass
    class Resized(Message):
        """The histogram's size changed."""

    def on_resize(self, event: events.Resize) -> None:
        self.post_message(self.Resized())


def count_ticks(largest: int, most: int = 5) -> list[int]:
    """At most ``most`` evenly spaced whole-number ticks from 0 to at least ``largest`` (a count)."""
    step = max(1, math.ceil(largest / (most - 1)))
    top = max(step, math.ceil(largest / step) * step)
    return list(range(0, top + 1, step))


class PlotsScreen(WorkspaceScreen):
    CSS_PATH = "plots.tcss"
    AUTO_FOCUS = "#plot-evaluators"
    BINDINGS: ClassVar[list[BindingType]] = [
        *VIEW_BINDINGS,
        Binding("e", "cycle_evaluator(1)", "Next evaluator"),
        Binding("E", "cycle_evaluator(-1)", "Previous evaluator", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield Header()
        yield SelectionBar(id="selection")
        with Horizontal(id="plots-body"):
            with Vertical(id="plot-evaluators-pane"):
                yield Label("Evaluators", classes="pane-title")
                yield OptionList(id="plot-evaluators")
            yield CountHistogram(id="histogram")
            yield PlotextPlot(id="scatter")
        yield DiscernmentPanel(id="discernment")
        yield AppFooter()

    #: What the plots show now (None: nothing plotted).
    plotted: PlottedData | None = None

    @property
    def evaluator(self) -> str | None:
        options = self.query_one("#plot-evaluators", OptionList)
        if options.highlighted is None or options.option_count == 0:
            return None
        return options.get_option_at_index(options.highlighted).id

    def action_cycle_evaluator(self, step: int) -> None:
        """Plot the next (or previous) evaluator."""
        options = self.query_one("#plot-evaluators", OptionList)
        if options.option_count:
            options.highlighted = ((options.highlighted or 0) + step) % options.option_count

    def workspace_changed(self, change: WorkspaceChange) -> None:
        if change.kind in (Change.DATASET, Change.SELECTION):
            ws = self.dj.workspace
            self.query_one(SelectionBar).sync(ws.qualities(), ws.quality, [s.spec for s in ws.subsets()],
                                              ws.subset.spec)
        if change.kind in (Change.DATASET, Change.METRICS, Change.JUDGES):
            self._fill_evaluators()
        if change.kind in (Change.DATASET, Change.SELECTION, Change.METRICS, Change.JUDGES):
            self._plot()
        if change.kind in (Change.DATASET, Change.METRICS, Change.JUDGES):
            self._refresh_discernment(new_dataset=change.kind is Change.DATASET)

    def _refresh_discernment(self, *, new_dataset: bool) -> None:
        """Shown only for a dataset with adversarial candidates; over all of it (the subset does not apply)."""
        panel = self.query_one(DiscernmentPanel)
        dataset = self.dj.workspace.dataset
        panel.display = has_adversarial(dataset)
        if not panel.display:
            panel.clear()
        if panel.display and self.dj.adversarial.compute_discernment(self) is not None and (new_dataset or not panel.rows):
            panel.show_message("Computing…")

    def on_discernment_computed(self, message: DiscernmentComputed) -> None:
        ws = self.dj.workspace
        if message.dataset is not ws.dataset:
            return  # computed for a dataset that was replaced meanwhile
        panel = self.query_one(DiscernmentPanel)
        if message.table is None:
            panel.show_message("No evaluator scores yet")
        else:
            panel.show(list(message.table), subtitle=f"{message.dataset.name}, every item (not only the subset)")

    def _fill_evaluators(self) -> None:
        options = self.query_one("#plot-evaluators", OptionList)
        names = self.dj.workspace.evaluators
        if [options.get_option_at_index(i).id for i in range(options.option_count)] == names:
            return
        chosen = self.evaluator
        with self.prevent(OptionList.OptionHighlighted):
            options.clear_options()
            options.add_options([Option(name, id=name) for name in names])
            if names:
                options.highlighted = names.index(chosen) if chosen in names else 0

    def on_count_histogram_resized(self, message: CountHistogram.Resized) -> None:
        self._plot()  # the count ticks follow the histogram's height

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self._plot()

    def _plot(self) -> None:
        ws = self.dj.workspace
        histogram = self.query_one("#histogram", PlotextPlot)
        scatter = self.query_one("#scatter", PlotextPlot)
        for plot in (histogram, scatter):
            plot.plt.clear_figure()
        name = self.evaluator
        scale = ws.scale
        self.plotted = None
        if name is None or scale is None:
            message = ("No evaluator scores yet" if ws.dataset is not None
                       else no_dataset_text(self.dj, tiny=True).plain)
            histogram.plt.title(message)
            scatter.plt.title("")
            histogram.refresh()
            scatter.refresh()
            return
        scores = ws.scores_of(name)
        values: list[float] = []
        pairs: list[tuple[float, float]] = []
        for ex in ws.selected_examples():
            value = scores.get(ex.id)
            if value is None or math.isnan(value):
                continue
            values.append(value)
            human = ws.human_label(ex)
            if human is not None:
                pairs.append((human, value))
        self.plotted = PlottedData(name, tuple(values), tuple(pairs))
        self._histogram(histogram, name, values)
        self._scatter(scatter, name, pairs, scale.min or 0.0, scale.max or 1.0)

    def _histogram(self, plot: PlotextPlot, name: str, values: list[float]) -> None:
        plt = plot.plt
        if values:
            plt.hist(values, bins=HISTOGRAM_BINS)
            # Counts are whole numbers: ticks at integers only (plotext would put them at 3.7, 7.3, …).
            # As many as the plot has rows for (plotext drops ticks that collide, leaving uneven gaps).
            rows = plot.content_size.height - PLOT_FRAME_ROWS
            ticks = count_ticks(max(hist_data(values, HISTOGRAM_BINS)[1]), most=max(2, min(5, rows // 2)))
            plt.ylim(0, ticks[-1])
            plt.yticks([float(t) for t in ticks], [str(t) for t in ticks])
            high = sum(v >= HIGH_SCORE for v in values) / len(values)
            mean = math.fsum(values) / len(values)
            plt.title(f"{name}: n={len(values)}, mean {mean:.2f}, {high:.0%} ≥ {HIGH_SCORE}")
        else:
            plt.title(f"{name}: no scores in this subset")
        plt.xlim(0, 1)
        plt.xlabel("score (0-1)")
        plt.ylabel("items")
        plot.refresh()

    def _scatter(self, plot: PlotextPlot, name: str, pairs: list[tuple[float, float]], low: float,
                 high: float) -> None:
        plt = plot.plt
        ws = self.dj.workspace
        if pairs:
            plt.scatter([h for h, _ in pairs], [s for _, s in pairs], marker="dot")
        plt.title(f"{name} vs human {ws.quality} ({ws.aggregation.value}), {len(pairs)} items")
        plt.xlim(low - 0.1 * (high - low), high + 0.1 * (high - low))
        if float(low).is_integer() and float(high).is_integer() and high - low <= 10:
            plt.xticks(list(range(int(low), int(high) + 1)))
        plt.ylim(0, 1)
        plt.xlabel(f"human {ws.quality}")
        plt.ylabel(name)
        plot.refresh()
