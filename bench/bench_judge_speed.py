"""How fast the bundled judge scores dialogue responses, and what prefix reuse buys.

On ~20 USR Topical-Chat candidates (4 contexts x 5 candidates, ordered by
context as a run orders them), rendered with the shipped ``likert-1to5``
template, this measures items/s and prompt tokens evaluated per item for
GENERATE and LOGPROB scoring, each with and without KV-cache prefix reuse, and
the model's raw prompt-processing rate (tokens/s) as the ceiling.

    python bench/bench_judge_speed.py [--data ../shared/data] [--threads 1] [--max-tokens 48]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from dialjudge.core.config import Sampling
from dialjudge.core.judges.backends.llama import LlamaBackend
from dialjudge.core.judges.scoring import score_result
from dialjudge.core.judges.types import JudgeRequest, Message, OutputKind, OutputSpec, RenderedPrompt, ScoringMode

REPO_ROOT = Path(__file__).resolve().parents[1]
USR_TOPICAL = Path("usr") / "usr_topical_chat.json"
QUALITY = "Overall"


@dataclass
class Row:
    mode: str
    reuse: bool
    items: int
    seconds: float
    prompt_tokens: float
    evaluated_tokens: float
    extra_tokens: float
    scored: int

    @property
    def items_per_s(self) -> float:
        return self.items / self.seconds


def default_data_dir() -> Path:
    env = os.environ.get("DIALJUDGE_SHARED_DATA")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data"


def load_prompts(data_dir: Path, contexts: int, per_context: int) -> list[tuple[str, RenderedPrompt]]:
    """(item id, prompt) for the first candidates of the first contexts, grouped by context."""
    path = data_dir / USR_TOPICAL
    try:
        from dialjudge.core.loaders import load_dataset
        from dialjudge.core.judges.render import render_prompt
        from dialjudge.core.judges.templates import get_template
    except ImportError:  # an older checkout: plain JSON and a fixed prompt of similar length
        return _fallback_prompts(path, contexts, per_context)

    dataset = load_dataset(path)
    template = get_template("likert-1to5")
    groups: dict[str, list] = {}
    for example in dataset.examples:
        if example.is_reference:
            continue
        group = groups.setdefault(example.group_id, [])
        if len(group) < per_context:
            group.append(example)
    chosen = [g for g in groups.values() if len(g) == per_context][:contexts]
    return [(ex.id, render_prompt(template, ex, quality=QUALITY)) for group in chosen for ex in group]


def _fallback_prompts(path: Path, contexts: int, per_context: int) -> list[tuple[str, RenderedPrompt]]:
    spec = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:",
                      modes=(ScoringMode.GENERATE, ScoringMode.LOGPROB))
    out = []
    for i, record in enumerate(json.loads(path.read_text(encoding="utf-8"))[:contexts]):
        candidates = [r for r in record["responses"] if r.get("model") != "Original Ground Truth"]
        for j, r in enumerate(candidates[:per_context]):
            user = (f"Rate the response for overall quality.\nUse this scale: 1 = very poor ... 5 = excellent.\n"
                    f"Reply with one short sentence of reasoning, then a final line \"Score: N\".\n\n"
                    f"Fact: {record['fact']}\nDialogue:\n{record['context']}\nResponse: {r['response']}")
            messages = (Message("system", "You are a careful evaluator of dialogue responses."), Message("user", user))
            out.append((f"tc-{i:03d}-{j}", RenderedPrompt(messages, spec, "fixed")))
    return out


async def raw_prompt_rate(backend: LlamaBackend, prompts: list[tuple[str, RenderedPrompt]]) -> tuple[float, int]:
    """Tokens/s evaluating whole prompts from an empty cache: the ceiling for any scoring mode."""
    session = backend._session
    assert session is not None

    def measure() -> tuple[float, int]:
        tokens_done, seconds = 0, 0.0
        for _, prompt in prompts[:: max(1, len(prompts) // 4)]:
            tokens = session.tokenize(session.format(prompt.messages))
            session._truncate(0)
            started = time.perf_counter()
            session.eval_prompt(tokens, reuse_prefix=False)
            seconds += time.perf_counter() - started
            tokens_done += len(tokens)
        return tokens_done / seconds, tokens_done

    return await backend._on_worker(measure)


async def run_mode(backend: LlamaBackend, prompts: list[tuple[str, RenderedPrompt]], mode: ScoringMode,
                   reuse: bool, sampling: Sampling) -> Row:
    backend.reuse_prefix = reuse
    await backend._on_worker(backend._session._truncate, 0)  # every configuration starts cold
    requests = [JudgeRequest(item, prompt, mode, sampling, top_k=0) for item, prompt in prompts]
    started = time.perf_counter()
    results = [await backend.complete(r) for r in requests]
    seconds = time.perf_counter() - started
    judgments = [score_result(r, res, "smollm2") for r, res in zip(requests, results)]
    return Row(
        mode=mode.value, reuse=reuse, items=len(results), seconds=seconds,
        prompt_tokens=statistics.mean(r.prompt_tokens for r in results),
        evaluated_tokens=statistics.mean(r.evaluated_tokens for r in results),
        extra_tokens=statistics.mean(r.completion_tokens for r in results),
        scored=sum(1 for j in judgments if not j.failed),
    )


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=default_data_dir(), help="the shared data folder")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (default 1)")
    parser.add_argument("--contexts", type=int, default=4)
    parser.add_argument("--per-context", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=48, help="generation limit in generate mode")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)

    if not (args.data / USR_TOPICAL).is_file():
        print(f"{args.data / USR_TOPICAL} not found (pass --data)", file=sys.stderr)
        return 2
    prompts = load_prompts(args.data, args.contexts, args.per_context)
    backend = LlamaBackend(n_ctx=4096, n_threads=args.threads)
    load_started = time.perf_counter()
    await backend.open()
    load_s = time.perf_counter() - load_started
    try:
        rate, rate_tokens = await raw_prompt_rate(backend, prompts)
        sampling = Sampling(max_tokens=args.max_tokens)
        rows = [await run_mode(backend, prompts, mode, reuse, sampling)
                for mode in (ScoringMode.LOGPROB, ScoringMode.GENERATE) for reuse in (True, False)]
    finally:
        await backend.close()

    print(f"model {backend.identity}, {args.threads} thread(s), loaded in {load_s:.2f} s")
    print(f"items: {len(prompts)} USR Topical-Chat candidates ({args.contexts} contexts x {args.per_context}), "
          f"template likert-1to5, quality {QUALITY}")
    print(f"raw prompt processing (empty cache, {rate_tokens} tokens): {rate:.0f} tokens/s")
    print(f"{'mode':<9} {'reuse':<5} {'items/s':>8} {'s/item':>7} {'prompt tok':>10} {'evaluated':>9} "
          f"{'extra tok':>9} {'eval tok/s':>10} {'scored':>6}")
    for r in rows:
        print(f"{r.mode:<9} {'yes' if r.reuse else 'no':<5} {r.items_per_s:>8.2f} {r.seconds / r.items:>7.2f} "
              f"{r.prompt_tokens:>10.0f} {r.evaluated_tokens:>9.1f} {r.extra_tokens:>9.1f} "
              f"{r.evaluated_tokens * r.items / r.seconds:>10.0f} {r.scored:>3}/{r.items}")
    print("extra tok: generated tokens (generate) or answer-trie tokens (logprob); "
          "eval tok/s: evaluated prompt tokens per wall second")
    if args.json:
        args.json.write_text(json.dumps({
            "model": backend.identity, "threads": args.threads, "raw_prompt_tokens_per_s": rate,
            "rows": [{**vars(r), "items_per_s": r.items_per_s} for r in rows]}, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
