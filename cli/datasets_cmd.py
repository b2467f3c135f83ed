"""`dialjudge datasets list|show|stats`."""

from __future__ import annotations

import argparse

from rich.markup import escape

from dialjudge.core.api import (
    dataset_statistics,
    describe,
    list_datasets,
)
from dialjudge.core.api.datasets import MIN_SHARED_ITEMS, quality_annotators
from dialjudge.core.api.types import TieRule
from dialjudge.core.format import RATER_COUNTS_HEADER, collapse_rater_notes, rater_counts_cell

from . import render
from .dataset_args import add_column_map_option, open_dataset_of
from .preference_view import print_pair_summary


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("datasets", help="list and describe datasets")
    dsub = p.add_subparsers(dest="datasets_command", metavar="ACTION", required=True)
    dsub.add_parser("list", help="bundled sets, known files in the data folders, recent files").set_defaults(
        handler=run_list)
    show = dsub.add_parser("show", help="counts, qualities and scales, open/closed split, systems")
    show.add_argument("dataset", help="name or path")
    add_column_map_option(show)
    show.set_defaults(handler=run_show)
    stats = dsub.add_parser("stats", help="annotator agreement per quality (the human ceiling)")
    stats.add_argument("dataset", help="name or path")
    add_column_map_option(stats)
    stats.add_argument("--majority-ties", choices=[r.value for r in TieRule], default=TieRule.EXCLUDE.value,
                       help="label qualities, a tied majority of the other annotators: exclude the item or take "
                            "the first tied label (a published majority does not apply to 'the others')")
    stats.set_defaults(handler=run_stats)


def run_list(args: argparse.Namespace) -> int:
    config = args.session.config
    rows = [(e.name, e.origin, "yes" if e.available else "no", e.description, str(e.path or "")) for e in
            list_datasets(config)]
    con = render.console()
    con.print(render.plain_table("Datasets", ["name", "origin", "available", "description", "path"], rows))
    if not config.data_dirs:
        con.print(r"[dim]No data folders configured: add \[data] dirs to the config to find USR and FED files.[/dim]")
    return 0


def run_show(args: argparse.Namespace) -> int:
    dataset = open_dataset_of(args, args.dataset)
    summary = describe(dataset)
    con = render.console()
    split = f"{summary.open_ended} open / {summary.closed_ended} closed / {summary.untagged} untagged"
    con.print(render.key_values(f"{summary.name}" + (" (illustrative)" if summary.illustrative else ""), {
        "source": summary.source,
        **({"columns mapped": ", ".join(summary.column_map)} if summary.column_map else {}),
        "description": summary.description or "–",
        "items": f"{summary.examples} ({summary.turn_level} turn level, {summary.dialog_level} dialog level)",
        "contexts": summary.groups,
        "references": f"{summary.with_references} items have references; "
                      f"{summary.references_as_candidates} candidates are references themselves",
        "facts": f"{summary.with_fact} items carry a fact/knowledge text",
        "open/closed": split,
        "adversarial": f"{summary.adversarial}" + (
            f" ({', '.join(f'{k}: {v}' for k, v in summary.adversarial_kinds.items())})"
            if summary.adversarial_kinds else ""),
        "languages": ", ".join(f"{k}: {v}" for k, v in summary.languages.items()),
        **({"left out at load": summary.left_out_text} if summary.left_out_text else {}),
    }))
    con.print(render.plain_table(
        "Qualities", ["quality", "level", "scale", "rated items", RATER_COUNTS_HEADER, "missing values"],
        [(q.name, q.level.value, q.scale_text, q.rated_items,
          quality_annotators(dataset, q.name, q.level, q.annotators, q.raters), q.missing_values)
         for q in summary.qualities],
        right=("rated items", RATER_COUNTS_HEADER, "missing values")))
    con.print(render.plain_table("Systems", ["system", "items"], summary.systems.items(), right=("items",)))
    pairwise = sum(1 for ex in dataset if ex.is_pairwise)
    if pairwise:
        print_pair_summary(con, dataset)
    for warning in dataset.meta.get("warnings", ()):
        con.print(f"[yellow]warning: {escape(str(warning))}[/yellow]")
    return 0


def run_stats(args: argparse.Namespace) -> int:
    dataset = open_dataset_of(args, args.dataset)
    stats = dataset_statistics(dataset, tie_rule=args.majority_ties)
    con = render.console()
    left_out = describe(dataset).left_out_text
    if left_out:
        con.print(f"left out at load: {escape(left_out)}")
    if stats.numeric:
        reasons: list[str] = []
        table_rows = []
        for r in stats.numeric:
            contexts = r.ceiling.n_contexts
            pairwise = r.ceiling.pairwise_spearman
            table_rows.append((r.quality, r.level, r.scale, r.n_items, "–" if contexts is None else contexts,
                               rater_counts_cell(r.n_annotators, r.ceiling.per_item), r.ceiling.text("pearson"), r.ceiling.text("spearman"),
                               r.ceiling.loo_basis.counts("raters"), r.ceiling.pairwise_text(),
                               pairwise.pooled.counts() if pairwise is not None else "–", _f(r.alpha),
                               r.alpha_level))
            pairwise_ci_reason = pairwise.ci_reason if pairwise is not None else None
            why_not = (*r.ceiling.reasons, *((r.ceiling.ci_reason,) if r.ceiling.ci_reason else ()),
                       *((f"pairwise Spearman: {pairwise_ci_reason}",) if pairwise_ci_reason else ()))
            reasons.extend(f"{r.quality} ({r.level}): {why}" for why in why_not)
        con.print(render.plain_table(
            f"Annotator agreement — {dataset.name} (numeric qualities)",
            ["quality", "level", "scale", "items", "contexts", RATER_COUNTS_HEADER, "LOO Pearson", "LOO Spearman",
             "LOO raters / items", "pairwise Spearman", "pairs / raters / items", "Krippendorff α", "level of α"],
            table_rows,
            right=("items", "contexts", RATER_COUNTS_HEADER, "LOO Pearson", "LOO Spearman", "pairwise Spearman",
                   "Krippendorff α")))
        con.print(f"[dim]LOO: each annotator against the mean of the others, averaged over annotators weighted by "
                  f"their items; pairwise Spearman: between two annotators on the items both rated, averaged over "
                  f"pairs weighted by those items. Only annotators (pairs) sharing at least {MIN_SHARED_ITEMS} items "
                  "count. In brackets: 95% CI, a bootstrap of whole contexts (none on too few contexts).[/dim]")
        render.print_notes(con, [f"why '–': {why}" for why in collapse_rater_notes(reasons)])
    if stats.labels:
        reasons = []
        label_rows: list[tuple[object, ...]] = []
        for row in stats.labels:
            ceiling = row.ceiling
            label_rows.append((row.quality, row.level, row.scale, ceiling.n_items, ceiling.annotators_text,
                               _pct(ceiling.pairwise_agreement), _f(ceiling.pairwise_kappa),
                               ceiling.agreement_basis.counts(), _f(ceiling.alpha),
                               _pct(ceiling.vs_majority_agreement), _f(ceiling.vs_majority_kappa),
                               ceiling.majority_basis.counts("raters"),
                               "–" if row.majority_ties is None else row.majority_ties))
            if ceiling.kappa_basis.n_units != ceiling.agreement_basis.n_units:
                reasons.append(f"{row.quality} ({row.level}): κ (pairs) rests on {ceiling.kappa_basis.rests_on()}: "
                               "κ is undefined for a pair where both annotators gave one label only")
            reasons.extend(f"{row.quality} ({row.level}): {why}" for why in ceiling.reasons)
        con.print(render.plain_table(
            f"Annotator agreement — {dataset.name} (label qualities)",
            ["quality", "level", "labels", "items", "raters", "% agreement (pairs)", "κ (pairs)",
             "pairs / raters / items", "Krippendorff α", "% vs majority of others", "κ vs majority of others",
             "raters / items", "majority ties"],
            label_rows, right=("items", "% agreement (pairs)", "κ (pairs)", "Krippendorff α",
                               "% vs majority of others", "κ vs majority of others", "majority ties")))
        con.print(f"[dim](pairs): mean over annotator pairs sharing at least {MIN_SHARED_ITEMS} items, weighted by "
                  "them; vs majority of others: each annotator (with that many items shared) against the majority "
                  "label of the other annotators, averaged weighted by items; α is nominal. "
                  f"Majority ties: items whose annotators tie (rule {stats.tie_rule.value} for the others' "
                  "majority).[/dim]")
        render.print_notes(con, [f"why '–': {why}" for why in collapse_rater_notes(reasons)])
    for warning in dataset.meta.get("warnings", ()):
        con.print(f"[yellow]warning: {escape(str(warning))}[/yellow]")
    return 0


def _pct(x: float | None) -> str:
    if x is None or x != x:
        return "–"
    return f"{100 * x:.1f}"


def _f(x: float | None) -> str:
    if x is None or x != x:
        return "–"
    return f"{x:.3f}"
