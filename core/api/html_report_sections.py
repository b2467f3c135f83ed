"""The HTML report's sections, laid out from what the use cases returned (nothing is computed here
that a terminal table does not show the same way: the cells are the command line's texts)."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ..compare import RunComparison
from ..format import number_text
from ..judges.store.run_store import RunRecord
from ..model import Aggregation, Dataset, Scale, ScaleKind
from ..report import sparkline, wide_table
from ..reports_html import charts
from ..reports_html import fragments as f
from ..reports_html.escape import text
from ..reports_html.page import Section
from ..review_queue import ReviewCase
from ..stats.paired import SYMBOLS, interval_text, verdict_line
from .leaderboard_types import Leaderboard
from .leaderboards import columns_of, table_rows, title_of
from .pair_runs import PAIR_COMPARISON_COLUMNS, pair_comparison_notes, pair_comparison_rows
from .reports import RunReports, discernment
from .stored import environment_lines

#: A comparison of two runs, or why there is none.
Comparison = RunComparison | str
#: What the command line prints under every agreement table (cli/metrics_cmd.emit).
TABLE_LEGEND = "* p < 0.05; second line: bootstrap 95% CI; excluded: no score or no human label."
#: The coefficients of the agreement tables (the command line's, without --kendall).
COEFFICIENTS = ("pearson", "spearman")


@dataclass(frozen=True)
class RunPart:
    """One run's record, the reports that follow it and its review queue."""

    record: RunRecord
    reports: RunReports
    queue: list[ReviewCase]


def settings_section(dataset: Dataset, quality: str | None, runs: Sequence[RunPart], *, n_boot: int, seed: int,
                     metrics: bool) -> Section:
    contexts = len({ex.group_id for ex in dataset.examples})
    adversarial = sum(1 for ex in dataset if ex.is_adversarial)
    parts = [f.heading(f"Dataset {dataset.name}"), f.key_values({
        "source": dataset.source or dataset.meta.get("path") or "–",
        "items": f"{len(dataset):,} in {contexts:,} contexts" + (f", {adversarial:,} adversarial" if adversarial else ""),
        "qualities": ", ".join(f"{name} ({_scale_text(scale)})" for name, scale in dataset.qualities.items()) or "–",
        "compared with": quality or "–",
        "confidence intervals": f"bootstrap over contexts, {n_boot:,} resamples, seed {seed}"
                                if n_boot else "none (no bootstrap resamples asked for)",
        "reference-based metrics": "included" if metrics else "left out",
    })]
    for part in runs:
        record = part.record
        config = record.run_config
        mode = config.mode.value + (f" (top-{config.top_k})" if config.top_k else "")
        parts.append(f.heading(f"Run {record.id}" + (f" — {record.name}" if record.name else "")))
        parts.append(f.key_values({
            "status": record.status.value, "created": record.created[:19],
            "template (name #hash of its text)": config.template_label,
            "mode": mode,
            "aspect / KPI / quality": f"{config.aspect or '–'} / {config.kpi or '–'} / {config.quality or '–'}",
            "judges": ", ".join(v.label for v in config.variants()),
            "few-shot": config.fewshot.spec, "repeats": config.repeats, "subset": config.subset,
            "judgments": f"{record.judgments:,} of {record.total:,} ({record.failures:,} failed)",
            "fingerprint": record.fingerprint,
            **environment_lines(config.environment),
        }))
        parts.append(f"<details><summary>Template text</summary><pre class=\"diff\">{text(config.template_text)}"
                     "</pre></details>")
    return Section("settings", "Dataset and runs", "\n".join(parts))


def _scale_text(scale: Scale) -> str:
    if scale.kind is ScaleKind.CATEGORICAL:
        return "labels " + ", ".join(scale.labels)
    return f"{number_text(scale.min, 0)}–{number_text(scale.max, 0)}"


def agreement_section(dataset: Dataset, runs: Sequence[RunPart]) -> Section:
    """Each run's agreement tables as ``dialjudge judge`` prints them: one per level and subset, the
    human ceiling (on the items the judges are compared on) in its last row."""
    parts = []
    title = f"Judges and metrics vs humans — {dataset.name}"
    for part in runs:
        report, run_id = part.reports.agreement, part.record.id
        parts.append(f.heading(f"Run {run_id}"))
        if report is None:
            parts.append(f.paragraph(f"Run {run_id} compares labels with the humans' labels: its label tables are "
                                     "what `dialjudge judge` prints; this report shows correlation tables."))
            continue
        for k, (level, subset) in enumerate((lv, s) for s in report.subsets for lv in report.levels):
            panel = f"{title}{'' if subset == 'all' else f' [{subset}]'} — {level} level"
            table = wide_table(report.records, title=panel, level=level, subset=subset, coefficients=COEFFICIENTS)
            parts.append(f.agreement_table(table, table_id=f"agreement-run{run_id}-{k}"))
        parts.append(f.paragraph(TABLE_LEGEND))
        parts.append(f.notes(report.notes))
    return Section("agreement", "Agreement with the humans", "\n".join(parts))


def leaderboard_section(board: Leaderboard | str) -> Section:
    if isinstance(board, str):
        return Section("leaderboard", "Leaderboard", f.paragraph(board))
    columns = columns_of(board)
    html = [f.paragraph(title_of(board), "lead"),
            f.table(columns, table_rows(board), numeric=[c for c in columns if c != "evaluator"],
                    table_id="leaderboard-table"),
            f.notes(board.method_lines() + list(board.notes)),
            f.notes(f"run {r.run_id} ({r.kind}): template {r.template} #{r.template_hash}; {r.settings}"
                    for r in board.runs)]
    return Section("leaderboard", "Leaderboard", "\n".join(html))


def paired_section(comparison: Comparison) -> Section:
    """Two runs: the verdicts of the paired tests (``dialjudge runs compare``), the deltas, what changed."""
    if isinstance(comparison, str):
        return Section("paired", "Paired comparison", f.paragraph(comparison))
    a, b = comparison.run_a, comparison.run_b
    html = [f.paragraph(f"Run {a} (A) → run {b} (B) on {comparison.dataset}", "lead")]
    if comparison.on_pairs:
        html.append(f.table(PAIR_COMPARISON_COLUMNS, pair_comparison_rows(comparison.pair_verdicts),
                            numeric=PAIR_COMPARISON_COLUMNS[1:]))
        html += [f'<div class="verdict">{text(test.verdict())}</div>' for test in comparison.pair_verdicts]
        html.append(f.notes(pair_comparison_notes()))
    else:
        html += [f'<div class="verdict">{text(verdict_line(c, "spearman"))}</div>' for c in comparison.paired]
        if comparison.paired:
            html.append(f.heading(f"Paired comparison (CI: {comparison.paired[0].n_boot:,} bootstrap resamples of "
                                  "contexts; p: randomization test, A and B swapped within contexts)"))
            html.append(f.table(PAIRED_COLUMNS, paired_rows(comparison), numeric=PAIRED_COLUMNS[3:]))
        html.append(f.heading("Correlation deltas"))
        columns = ["judge", "quality", "subset", "coefficient", f"run {a}", f"run {b}", "Δ", "n"]
        html.append(f.table(columns, [(d.evaluator, d.quality, d.subset, d.coefficient, number_text(d.before),
                                       number_text(d.after), number_text(d.change, signed=True),
                                       f"{d.n_before}/{d.n_after}") for d in comparison.deltas],
                            numeric=columns[4:]))
    if comparison.config_changes:
        html.append(f.heading("Configuration changes"))
        html.append(f.table(["key", f"run {a}", f"run {b}"],
                            [(k, json.dumps(x), json.dumps(y)) for k, x, y in comparison.config_changes]))
    if comparison.prompt_diff:
        lines = "\n".join(f'<span class="{_diff_class(line)}">{text(line)}</span>' for line in comparison.prompt_diff)
        html.append(f.heading("Prompt diff") + f'<pre class="diff">{lines}</pre>')
    else:
        html.append(f.paragraph("The two runs used the same template and personas."))
    return Section("paired", "Paired comparison", "\n".join(html))


#: The paired table's columns, as cli/render.print_paired prints them.
PAIRED_COLUMNS = ("judges", "quality", "subset", "Δ", "A", "B", "B − A", "95% CI", "p (randomization)", "Williams",
                  "items/contexts", "left out")


def paired_rows(comparison: RunComparison) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for c in comparison.paired:
        for method, d in c.deltas.items():
            williams = c.williams if method == "pearson" else None
            rows.append((f"{c.name_a} → {c.name_b}", c.quality, c.subset, f"Δ{SYMBOLS[method]}", number_text(d.a),
                         number_text(d.b), number_text(d.delta, signed=True), interval_text(d), number_text(d.p_value),
                         "–" if williams is None else f"t={williams.t:.2f}, p={williams.p_value:.3f}",
                         f"{c.n_items}/{c.n_groups}", str(c.n_excluded)))
    return rows


def _diff_class(line: str) -> str:
    return "add" if line.startswith("+") else "del" if line.startswith("-") else "same"


#: The discernment table's columns, as cli/render.print_discernment prints them.
DISCERNMENT_COLUMNS = ("evaluator", "compares", "n +/adv", "ROC-AUC", "mean +", "mean adv", "gap", "adv ≥ orig",
                       "scores + (0→1)", "scores adv (0→1)")


def discernment_section(dataset: Dataset, runs: Sequence[RunPart]) -> Section:
    """How well each evaluator tells the adversarial candidates from their originals, run by run."""
    html = []
    for part in runs:
        report = part.reports.agreement
        if report is None:
            continue
        rows = [(r.evaluator, r.comparison, f"{r.n_positive}/{r.n_adversarial}", number_text(r.auc),
                 number_text(r.mean_positive), number_text(r.mean_adversarial), number_text(r.gap, signed=True),
                 "–" if r.share_at_or_above is None else f"{100 * r.share_at_or_above:.0f}%",
                 sparkline(r.hist_positive), sparkline(r.hist_adversarial))
                for r in discernment(dataset, report.subset, report.scores)]
        html.append(f.heading(f"Run {part.record.id}: originals vs adversarial candidates"))
        html.append(f.table(DISCERNMENT_COLUMNS, rows, numeric=DISCERNMENT_COLUMNS[2:8]))
    html.append(f.paragraph("ROC-AUC: P(original scored above adversarial), 0.5 = chance; adv ≥ orig: adversarial "
                            "candidates scored at or above their own original; adversarial-only: the metric could not "
                            "score the original (it is the reference)."))
    return Section("discernment", "Discernment on adversarial items", "\n".join(html))


def charts_section(dataset: Dataset, quality: str | None, runs: Sequence[RunPart], *,
                   human_of: Callable[..., float | None]) -> tuple[Section | None, int]:
    """One chart per judge of every run (the judge against the pooled human label, and both
    distributions), within the charts' size budget (core.reports_html.charts); with the bytes they take."""
    if quality is None:
        return None, 0
    by_id = {ex.id: ex for ex in dataset.examples}
    scales = dataset.qualities
    html: list[str] = []
    left_out: list[str] = []
    total = 0
    for part in runs:
        if part.reports.pairwise is not None:
            continue
        for name, column in part.reports.scores.items():
            examples = [by_id[i] for i in column if i in by_id]
            human, judge = charts.paired_values([column[ex.id] for ex in examples],
                                                [human_of(ex, dataset, quality, Aggregation.MEAN, scales=scales) for ex in examples])
            label = f"run {part.record.id} · {name}" if len(runs) > 1 else name
            if not len(human):
                left_out.append(f"{label}: no item has both a score and a human label")
                continue
            if total + charts.CHART_BUDGET_BYTES > charts.CHARTS_BUDGET_BYTES:
                left_out.append(f"{label}: left out to keep the charts within "
                                f"{charts.CHARTS_BUDGET_BYTES / 1e6:.1f} MB")
                continue
            svg = charts.evaluator_chart(label, human, judge, chart_id=f"c{part.record.id}-{len(html)}")
            total += len(svg.encode("utf-8"))
            html.append(f'<div class="chart">{svg}</div>')
    intro = f.paragraph(f"Each judge's 0–1 score against the pooled human label of {quality} (normalised to 0–1), "
                        f"and the two distributions. Above {charts.SCATTER_LIMIT} items the scatter is a 2-D "
                        "histogram. The figures are in the tables above; the charts show their shape.", "lead")
    return Section("charts", "Judges against the humans", "\n".join([intro, *html, f.notes(left_out)])), total


def items_section(n_items: int) -> Section:
    html = (
        f.paragraph(f"Every judged item ({n_items:,}): search, sort by a column's heading, open a row for its context, "
                    "reference, ratings, metrics, raw answers and why the review queue flagged it.", "lead")
        + '<noscript><p class="note">The item table needs JavaScript; every other section does not.</p></noscript>'
        '<div id="items-browser" hidden><div class="controls">'
        '<input type="search" placeholder="Search items, replies, answers, flags…" aria-label="Search the items">'
        '<select class="page-size" aria-label="Rows per page"><option value="25">25 a page</option>'
        '<option value="50">50 a page</option><option value="100">100 a page</option></select>'
        '<span class="count" aria-live="polite"></span></div>'
        '<div class="scroll"><table id="items-table"><thead><tr></tr></thead><tbody></tbody></table></div>'
        '<div class="pager"><button class="prev" type="button">‹ Previous</button><span class="where"></span>'
        '<button class="next" type="button">Next ›</button></div></div>'
    )
    return Section("items", "Items", html)
