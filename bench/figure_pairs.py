"""Figure: loading 100,000 preference pairs (issue 21: "seconds, not minutes").

Two files are written to a temporary folder: a generic JSON Lines file of 100,000 pairs with one or
two votes each (about 150,000 lines, annotators named, a category per pair), and an MT-Bench human
judgments file of 100,000 pairs (about 150,000 lines, some votes cast with the models the other way
round). Value: ``load_dataset`` on each (detection, every line checked, the votes of one pair merged
into one Example). Baseline: ``json.loads`` of every line and nothing else, the floor any loader pays;
the ratio says how close to it the loader stays. ``--quick`` uses 20,000 pairs.
"""

from __future__ import annotations

import json
import random
import tempfile
import time
from pathlib import Path
from typing import Callable, TypeVar

from .common import Context, Row, at_most

TARGET_SECONDS = 10.0
T = TypeVar("T")


def write_generic(path: Path, pairs: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    lines = 0
    with path.open("w", encoding="utf-8") as out:
        for k in range(pairs):
            prompt = f"User: question {k} about topic {k % 997}?"
            a, b = f"Answer {k} one way, {rng.random():.6f}.", f"Answer {k} another way, {rng.random():.6f}."
            for vote in range(1 + (k % 2)):
                out.write(json.dumps({"id": f"p{k}", "prompt": prompt, "response_a": a, "response_b": b,
                                      "winner": rng.choice(("A", "B", "tie")), "annotator": f"ann{vote}",
                                      "category": f"cat{k % 8}"}) + "\n")
                lines += 1
    return lines


def write_mt_bench(path: Path, pairs: int, seed: int = 0) -> int:
    rng = random.Random(seed)
    lines = 0
    with path.open("w", encoding="utf-8") as out:
        for k in range(pairs):
            question = f"Question {k}?"
            models = (f"model-{k % 13}", f"model-{k % 13 + 13}")
            answers = {m: f"{m} answers question {k} with {rng.random():.6f}." for m in models}
            for vote in range(1 + (k % 2)):
                first, second = models if vote == 0 else models[::-1]
                out.write(json.dumps({
                    "question_id": k, "model_a": first, "model_b": second,
                    "winner": rng.choice(("model_a", "model_b", "tie", "tie (bothbad)")), "judge": f"expert_{vote}",
                    "turn": 1,
                    "conversation_a": [{"role": "user", "content": question},
                                       {"role": "assistant", "content": answers[first]}],
                    "conversation_b": [{"role": "user", "content": question},
                                       {"role": "assistant", "content": answers[second]}]}) + "\n")
                lines += 1
    return lines


def parse_only(path: Path) -> int:
    with path.open(encoding="utf-8") as handle:
        return sum(1 for line in handle if json.loads(line) is not None)


def timed(function: Callable[[Path], T], path: Path) -> tuple[float, T]:
    started = time.perf_counter()
    result = function(path)
    return time.perf_counter() - started, result


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.loaders import load_dataset

    pairs = 20_000 if ctx.quick else 100_000
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for kind, write in (("generic JSONL", write_generic), ("MT-Bench JSONL", write_mt_bench)):
            path = Path(tmp) / f"{kind.split()[0].lower()}.jsonl"
            lines = write(path, pairs)
            baseline, _ = timed(parse_only, path)
            value, dataset = timed(load_dataset, path)
            loaded = len(dataset)
            if loaded != pairs:
                raise AssertionError(f"{kind}: {loaded} pairs loaded, {pairs} written")
            ctx.log(f"  {kind}: {pairs:,} pairs in {lines:,} lines; json.loads only {baseline:.2f} s, "
                    f"load_dataset {value:.2f} s")
            rows.append(at_most(f"pairs: load {pairs:,} pairs, {kind} (s)", value, TARGET_SECONDS, "s",
                                baseline=baseline))
    return rows
