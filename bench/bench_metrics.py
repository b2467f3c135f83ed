"""Pairs/second of the reference-based metrics: libraries called per pair vs the engine path.

    python bench/bench_metrics.py                # USR Topical-Chat
    python bench/bench_metrics.py --persona      # plus USR PersonaChat
    python bench/bench_metrics.py --repeat 5 --workers 2

"Per call" is the straightforward use of each library for every pair:
sacrebleu.sentence_bleu (and BLEU(max_ngram_order=n) for BLEU-1..3),
sacrebleu.sentence_chrf(word_order=2), one RougeScorer's score_multi, and NLTK's
meteor_score. The engine path is dialjudge.core.metrics.score_examples. Both
produce the same numbers (the largest difference is printed); WordNet is loaded
before either is timed. Data is read from ../shared/data (or
$DIALJUDGE_SHARED_DATA, or --data).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from typing import Callable

from dialjudge.core.metrics import METRIC_IDS, score_examples
from dialjudge.core.metrics.wordnet import load_wordnet, meteor_variant
from dialjudge.core.model import Example

GROUND_TRUTH = "Original Ground Truth"
FAMILIES = {
    "BLEU-1..4": ["bleu1", "bleu2", "bleu3", "bleu4"],
    "ROUGE-1/2/L": ["rouge1", "rouge2", "rougeL"],
    "METEOR": ["meteor"],
    "chrF++": ["chrf++"],
}


def default_data_dir() -> Path:
    env = os.environ.get("DIALJUDGE_SHARED_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[1].parent / "shared" / "data"


def usr_examples(path: Path) -> list[Example]:
    from dialjudge.core.loaders.usr import read_usr

    return read_usr(path).examples


def per_call_scorer(metric_ids: list[str]) -> Callable[[str, list[str]], dict[str, float]]:
    """Each library used the plain way, once per pair."""
    import sacrebleu
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    rouge_types = [m for m in metric_ids if m.startswith("rouge")]
    rouge = rouge_scorer.RougeScorer(rouge_types, use_stemmer=True) if rouge_types else None
    tokenize = Tokenizer13a()

    def words(text: str) -> list[str]:
        return tokenize(text.strip()).split()

    def score(candidate: str, refs: list[str]) -> dict[str, float]:
        out: dict[str, float] = {}
        for n in (1, 2, 3):
            if f"bleu{n}" in metric_ids:
                bleu = BLEU(max_ngram_order=n, effective_order=True)
                out[f"bleu{n}"] = bleu.sentence_score(candidate, refs).score / 100
        if "bleu4" in metric_ids:
            out["bleu4"] = sacrebleu.sentence_bleu(candidate, refs).score / 100
        if rouge is not None:
            best = rouge.score_multi(refs, candidate)
            out.update({k: best[k].fmeasure for k in rouge_types})
        if "meteor" in metric_ids:
            out["meteor"] = meteor_score([words(r) for r in refs], words(candidate))
        if "chrf++" in metric_ids:
            out["chrf++"] = sacrebleu.sentence_chrf(candidate, refs, word_order=2).score / 100
        return out

    return score


def best_time(run: Callable[[], object], repeat: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def compare(examples: list[Example], metric_ids: list[str], repeat: int, workers: int) -> tuple[float, float, float]:
    """(per-call seconds, engine seconds, largest difference) for these metrics."""
    pairs = [ex for ex in examples if not ex.is_reference]
    baseline = per_call_scorer(metric_ids)
    t_call, by_call = best_time(
        lambda: {ex.id: baseline(ex.candidate, list(ex.references)) for ex in pairs}, repeat)
    t_engine, engine = best_time(lambda: score_examples(examples, metric_ids, workers=workers), repeat)
    diff = max(abs(by_call[ex.id][m] - engine[m][ex.id]) for ex in pairs for m in metric_ids)  # type: ignore[index]
    return t_call, t_engine, diff


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=default_data_dir())
    parser.add_argument("--persona", action="store_true", help="also score USR PersonaChat")
    parser.add_argument("--repeat", type=int, default=3, help="runs per measurement; the best counts")
    parser.add_argument("--workers", type=int, default=1, help="processes for the engine path")
    args = parser.parse_args(argv)

    files = [("tc", args.data / "usr" / "usr_topical_chat.json")]
    if args.persona:
        files.append(("pc", args.data / "usr" / "usr_persona_chat.json"))
    missing = [str(p) for _, p in files if not p.is_file()]
    if missing:
        print(f"data not found: {', '.join(missing)}", file=sys.stderr)
        return 2
    examples = [ex for _, path in files for ex in usr_examples(path)]
    n_pairs = sum(not ex.is_reference for ex in examples)

    start = time.perf_counter()
    load_wordnet()
    print(f"WordNet load (once per process, not timed below): {time.perf_counter() - start:.2f} s; "
          f"METEOR variant: {meteor_variant()}")
    print(f"{n_pairs} candidate/reference pairs ({', '.join(p.name for _, p in files)}); "
          f"best of {args.repeat}; engine workers: {args.workers}")
    print()
    print(f"{'metrics':<14}{'per call pairs/s':>18}{'engine pairs/s':>16}{'ratio':>8}{'max |diff|':>12}")
    rows = [("all 9", list(METRIC_IDS))] + [(name, ids) for name, ids in FAMILIES.items()]
    for name, ids in rows:
        t_call, t_engine, diff = compare(examples, ids, args.repeat, args.workers)
        print(f"{name:<14}{n_pairs / t_call:>18.0f}{n_pairs / t_engine:>16.0f}"
              f"{t_call / t_engine:>7.1f}x{diff:>12.1e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
