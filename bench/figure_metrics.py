"""Figure 1: the reference metrics on 10,000 candidate/reference pairs, engine vs per-call libraries.

Pairs: USR Topical-Chat's 300 candidate/reference pairs repeated, plus Chinese
KdConv pairs (a later reply of the same speaker as the candidate, the earlier
one as the reference). The baseline is each library called the plain way for
every pair (what the HuggingFace evaluate wrappers used in the papers do):
sacrebleu.sentence_bleu / BLEU(max_ngram_order=n), sacrebleu.sentence_chrf
(word_order=2), a RougeScorer's score_multi and NLTK's meteor_score; the
engine is dialjudge.core.metrics.score_examples with its defaults. Both give
identical values (the row "max |diff|" shows the largest difference). WordNet
is loaded before anything is timed; where it is absent both sides run METEOR
with exact and stem matching and the figure says so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

from .common import Context, Row, at_most, best_time, speedup

FAMILIES: dict[str, tuple[str, ...]] = {
    "BLEU-1..4": ("bleu1", "bleu2", "bleu3", "bleu4"),
    "ROUGE-1/2/L": ("rouge1", "rouge2", "rougeL"),
    "METEOR": ("meteor",),
    "chrF++": ("chrf++",),
}
TARGETS = {"all 9": 5.0, "chrF++": 3.0}


def build_examples(data_dir: Path, n_pairs: int) -> list[Any]:
    """About ``n_pairs`` scorable examples: 80% USR Topical-Chat (repeated), 20% KdConv Chinese."""
    from dataclasses import replace

    from dialjudge.core.loaders.usr import read_usr
    from dialjudge.core.model import Example

    usr = [ex for ex in read_usr(data_dir / "usr" / "usr_topical_chat.json").examples if not ex.is_reference]
    chinese: list[Example] = []
    want_chinese = n_pairs // 5
    for domain in ("film", "music", "travel"):
        path = data_dir / "kdconv" / domain / "test.json"
        if not path.is_file():
            continue
        for d, dialogue in enumerate(json.loads(path.read_text(encoding="utf-8"))):
            messages = [m["message"] for m in dialogue["messages"]]
            for j in range(len(messages) - 2):
                if len(chinese) >= want_chinese:
                    break
                chinese.append(Example(id=f"kd-{domain}-{d}-{j}", group_id=f"kd-{domain}-{d}-{j}", context=(),
                                       candidate=messages[j + 2], references=(messages[j],), language="zh"))
    out: list[Example] = list(chinese)
    copy = 0
    while len(out) < n_pairs:
        for ex in usr:
            if len(out) == n_pairs:
                break
            out.append(replace(ex, id=f"{ex.id}~{copy}"))
        copy += 1
    return out


def per_call_scorer(metric_ids: tuple[str, ...], wordnet: Any) -> Callable[[str, list[str], bool], dict[str, float]]:
    """Each library used the plain way, once per pair (per-character tokens for Chinese)."""
    import sacrebleu
    from nltk.translate.meteor_score import meteor_score
    from rouge_score import rouge_scorer
    from sacrebleu.metrics import BLEU
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    from dialjudge.core.metrics.tokenize import ChineseCharTokenizer

    rouge_types = [m for m in metric_ids if m.startswith("rouge")]
    rouge = {False: rouge_scorer.RougeScorer(rouge_types, use_stemmer=True),
             True: rouge_scorer.RougeScorer(rouge_types, tokenizer=ChineseCharTokenizer())} if rouge_types else {}
    words = {False: Tokenizer13a(), True: TokenizerZh()}

    def score(candidate: str, refs: list[str], chinese: bool) -> dict[str, float]:
        tokenize = "zh" if chinese else "13a"
        out: dict[str, float] = {}
        for n in (1, 2, 3):
            if f"bleu{n}" in metric_ids:
                bleu = BLEU(max_ngram_order=n, effective_order=True, tokenize=tokenize)
                out[f"bleu{n}"] = bleu.sentence_score(candidate, refs).score / 100
        if "bleu4" in metric_ids:
            out["bleu4"] = sacrebleu.sentence_bleu(candidate, refs, tokenize=tokenize).score / 100
        if rouge:
            best = rouge[chinese].score_multi(refs, candidate)
            out.update({k: best[k].fmeasure for k in rouge_types})
        if "meteor" in metric_ids:
            split = words[chinese]
            kwargs = {} if wordnet is None else {"wordnet": wordnet}
            out["meteor"] = meteor_score([split(r.strip()).split() for r in refs], split(candidate.strip()).split(),
                                         **kwargs)
        if "chrf++" in metric_ids:
            out["chrf++"] = sacrebleu.sentence_chrf(candidate, refs, word_order=2).score / 100
        return {k: min(1.0, max(0.0, v)) for k, v in out.items()}

    return score


def run(ctx: Context) -> list[Row]:
    import time

    from dialjudge.core.metrics import metric_ids, score_examples
    from dialjudge.core.metrics.batch import plan_pairs
    from dialjudge.core.metrics.wordnet import NoSynonyms, load_synonyms, load_wordnet, meteor_variant

    n_pairs = 400 if ctx.quick else 10_000
    examples = build_examples(ctx.data_dir, n_pairs)
    pairs, _ = plan_pairs(examples)
    started = time.perf_counter()
    # --quick: NLTK's meteor_score reads its synonyms from the engine's compact index (the same
    # synonyms, a test proves it) instead of NLTK's WordNet reader, whose load takes 8 s or more.
    reader = load_synonyms() if ctx.quick else load_wordnet()
    variant = meteor_variant()
    ctx.log(f"  WordNet: {variant} (loaded in {time.perf_counter() - started:.2f} s, not timed below); "
            f"{len(pairs)} pairs, {sum(p.chinese for p in pairs)} Chinese")
    wordnet = reader if reader is not None else NoSynonyms()

    rows: list[Row] = []
    baseline_total = 0.0
    largest_diff = 0.0
    for family, ids in FAMILIES.items():
        score = per_call_scorer(ids, wordnet)
        t_call, by_call = best_time(
            lambda score=score: {p.example_id: score(p.candidate, list(p.references), p.chinese) for p in pairs}, 1)
        baseline_total += t_call
        t_engine, engine = best_time(lambda ids=ids: score_examples(examples, ids, workers=None), 1)
        diff = max(abs(by_call[p.example_id][m] - engine[m][p.example_id]) for p in pairs for m in ids)
        largest_diff = max(largest_diff, diff)
        label = family if family != "METEOR" or variant == "wordnet" else "METEOR (exact+stem, no WordNet)"
        if family == "METEOR" and reader is not None and ctx.quick:
            label = "METEOR (per call: NLTK over the synonym index)"
        rows.append(speedup(f"metrics {label} [pairs/s]", len(pairs) / t_call, len(pairs) / t_engine,
                            TARGETS.get(family)))
        ctx.log(f"  {family}: per call {t_call:.2f} s, engine {t_engine:.2f} s, max |diff| {diff:.1e}")
    t_all, _ = best_time(lambda: score_examples(examples, metric_ids(), workers=None), 1)
    rows.insert(0, speedup(f"metrics all 9, {len(pairs):,} pairs [pairs/s]", len(pairs) / baseline_total,
                           len(pairs) / t_all, TARGETS["all 9"]))
    # Without repeats the remembered pair scores cannot help: the same measure on distinct pairs.
    seen: set[tuple[str, tuple[str, ...], bool]] = set()
    distinct = []
    by_id = {ex.id: ex for ex in examples}
    for pair in pairs:
        key = (pair.candidate, pair.references, pair.chinese)
        if key not in seen:
            seen.add(key)
            distinct.append(by_id[pair.example_id])
    distinct_pairs, _ = plan_pairs(distinct)
    everything = per_call_scorer(metric_ids(), wordnet)
    t_call, _ = best_time(lambda: [everything(p.candidate, list(p.references), p.chinese) for p in distinct_pairs], 1)
    t_engine, _ = best_time(lambda: score_examples(distinct, metric_ids(), workers=None), 1)
    rows.insert(1, speedup(f"metrics all 9, {len(distinct_pairs):,} distinct pairs only [pairs/s]",
                           len(distinct_pairs) / t_call, len(distinct_pairs) / t_engine, None))
    rows.append(at_most("metrics max |engine - per call|", largest_diff, 0.0, ""))
    return rows
