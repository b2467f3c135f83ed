"""`dialjudge adversarial make`: build a KdConv-ADV / DSTC7-ADV style set from any data with references."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from dialjudge.core.api import make_adversarial
from dialjudge.core.api.datasets import ADVERSARIAL_KINDS as KINDS
from dialjudge.core.errors import DataError

from . import render
from .dataset_args import add_column_map_option, open_dataset_of


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("adversarial", help="build adversarial closed-ended sets")
    asub = p.add_subparsers(dest="adversarial_command", metavar="ACTION", required=True)
    make = asub.add_parser("make", help="perturb references into fluent replies that contradict the facts")
    make.add_argument("--from", dest="source", required=True,
                      help="dataset name or path: a rated set with references, or KdConv (kdconv-film, "
                           "kdconv-music, kdconv-travel, or a KdConv test.json)")
    add_column_map_option(make)
    make.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated: {', '.join(KINDS)}")
    make.add_argument("--per-item", type=int, default=3, help="adversarial candidates per item")
    make.add_argument("--n", type=int, default=100, help="items to use (fewer when fewer qualify)")
    make.add_argument("--seed", type=int, default=1)
    make.add_argument("--no-fact", action="store_true", help="leave the knowledge/fact text out of the items")
    make.add_argument("--with-candidates", action="store_true",
                      help="keep the context's other (genuine) candidates in the set")
    make.add_argument("--held-out-reference", metavar="SYSTEM",
                      help="use this system's reply of each context as a held-out reference, so metrics "
                           "score the original too (USR: 'New Human Generated')")
    make.add_argument("--out", type=Path, required=True, help="native .jsonl file to write")
    make.set_defaults(handler=run_make)


def run_make(args: argparse.Namespace) -> int:
    if args.out.suffix != ".jsonl":
        raise DataError(f"{args.out}: the adversarial set is written as native JSONL; use a .jsonl name")
    source = open_dataset_of(args, args.source)
    con = render.console(stderr=True)
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    built = make_adversarial(source, args.out, kinds=kinds, per_item=args.per_item, n=args.n, seed=args.seed,
                             include_fact=not args.no_fact, include_other_candidates=args.with_candidates,
                             held_out_reference=args.held_out_reference)
    if args.held_out_reference:
        con.print(f"held-out references from {args.held_out_reference!r}: {built.held_out_references} contexts")
    con.print(built.report.summary(), markup=False, highlight=False)
    con.print(f"wrote {len(built.dataset)} items to {built.path}")
    sidecar = built.path.with_suffix(".report.json")
    sidecar.write_text(json.dumps(built.report.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0
