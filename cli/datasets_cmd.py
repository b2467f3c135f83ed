"""`dialjudge datasets list|show|stats`."""

from __future__ import annotations

import argparse

from dialjudge.core.config import load_config
from dialjudge.core.describe import describe
from dialjudge.core.registry import list_datasets, open_dataset

from . import render


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("datasets", help="list and describe datasets")
    dsub = p.add_subparsers(dest="datasets_command", metavar="ACTION", required=True)
    dsub.add_parser("list", help="bundled sets, known files in the data folders, recent files").set_defaults(
        handler=run_list)
    show = dsub.add_parser("show", help="counts, qualities and scales, open/closed split, systems")
    show.add_argument("dataset", help="name or path")
    show.set_defaults(handler=run_show)
    stats = dsub.add_parser("stats", help="annotator agreement per quality (the human ceiling)")
    stats.add_argument("dataset", help="name or path")
    stats.set_defaults(handler=run_stats)


def run_list(args: argparse.Namespace) -> int:
    config = load_config()
    rows = [(e.name, e.origin, "yes" if e.available else "no", e.description, str(e.path or "")) for e in
            list_datasets(config)]
    con = render.console()
    con.print(render.plain_table("Datasets", ["name", "origin", "available", "description", "path"], rows))
    if not config.data_dirs:
        con.print(r"[dim]No data folders configured: add \[data] dirs to the config to find USR and FED files.[/dim]")
    return 0


def run_show(args: argparse.Namespace) -> int:
    summary = describe(open_dataset(args.dataset))
    con = render.console()
    split = f"{summary.open_ended} open / {summary.closed_ended} closed / {summary.untagged} untagged"
    con.print(render.key_values(f"{summary.name}" + (" (illustrative)" if summary.illustrative else ""), {
        "source": summary.source,
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
    }))
    con.print(render.plain_table(
        "Qualities", ["quality", "level", "scale", "rated items", "annotators", "missing values"],
        [(q.name, q.level.value, q.scale_text, q.rated_items, q.annotators, q.missing_values)
         for q in summary.qualities],
        right=("rated items", "annotators", "missing values")))
    con.print(render.plain_table("Systems", ["system", "items"], summary.systems.items(), right=("items",)))
    return 0


def run_stats(args: argparse.Namespace) -> int:
    from dialjudge.core.stats.ceiling import ceiling_table

    dataset = open_dataset(args.dataset)
    rows = ceiling_table(dataset.examples)
    con = render.console()
    con.print(render.plain_table(
        f"Annotator agreement — {dataset.name}",
        ["quality", "level", "scale", "items", "annotators", "LOO Pearson", "LOO Spearman", "Krippendorff α",
         "level of α"],
        [(r.quality, r.level, r.scale, r.n_items, r.n_annotators, _f(r.loo_pearson), _f(r.loo_spearman),
          _f(r.alpha), r.alpha_level) for r in rows],
        right=("items", "annotators", "LOO Pearson", "LOO Spearman", "Krippendorff α")))
    con.print("[dim]LOO: each annotator against the mean of the others, averaged over annotators.[/dim]")
    return 0


def _f(x: float | None) -> str:
    if x is None or x != x:
        return "–"
    return f"{x:.3f}"
