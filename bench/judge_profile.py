"""Where the local judge's seconds go: ``python -m bench.judge_profile [--contexts N] [--data DIR]``.

Runs the engine's default probability scoring with the bundled model on USR Topical-Chat (the
judge figure's items) and times each step of the llama backend on its worker thread: prompt
chunks (``eval_prompt``), the first-token list (``first_answer_tokens``), the answer trie
(``answer_logprobs``), chat formatting and tokenizing, and reading the logits. It does so with the
answer trie walked token by token and evaluated as one multi-sequence batch, and then measures
on the same prompts:

- raw prompt processing (whole prompts from an empty cache, batches of 512): the ceiling;
- the same tokens at the prompts' tails in chunks of 8/32/64/128/256 tokens: what chunk size costs;
- the unique parts of one context's candidates evaluated one after another vs as sequences of one
  batch (does batching candidates pay on CPU?).

Numbers go to stdout; nothing is asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .common import default_data_dir


def say(text: str) -> None:
    print(text, flush=True)  # as it goes: a run takes minutes


class StepTimer:
    """Wraps methods of the backend's session class and sums their seconds (worker thread only)."""

    def __init__(self, cls: Any, names: list[str]) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._originals = {name: getattr(cls, name) for name in names}
        self._cls = cls
        for name, original in self._originals.items():
            setattr(cls, name, self._timed(name, original))

    def _timed(self, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - started
                self.calls[name] += 1
        return timed

    def restore(self) -> None:
        for name, original in self._originals.items():
            setattr(self._cls, name, original)


STEPS = ["format", "tokenize", "eval_prompt", "last_logprobs", "first_answer_tokens", "answer_logprobs",
         "trie_logprobs", "_answer_tokens"]


def profile_run(dataset: Any, judge: Any, batch_answers: bool) -> tuple[float, int, dict[str, float], dict[str, int]]:
    from dialjudge.core.judges.backends import llama
    from dialjudge.core.judges.types import ScoringMode

    from .figure_judge import engine_run

    timer = StepTimer(llama._Session, STEPS)
    original_init = llama.LlamaBackend.__init__

    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        self.batch_answers = batch_answers

    llama.LlamaBackend.__init__ = init  # type: ignore[method-assign]  # a benchmark's switch, restored below
    try:
        seconds, summary, _ = engine_run(dataset, judge, ScoringMode.LOGPROB, reuse_prefix=True)
    finally:
        llama.LlamaBackend.__init__ = original_init  # type: ignore[method-assign]
        timer.restore()
    return seconds, summary.done, dict(timer.seconds), dict(timer.calls)


def rate_by_chunk(llm: Any, tokens: list[list[int]], sizes: list[int], tail: int) -> dict[int, float]:
    """Tokens/s evaluating the last ``tail`` tokens of each prompt in chunks of each size."""
    rates = {}
    for size in sizes:
        done, seconds = 0, 0.0
        for prompt in tokens:
            head = len(prompt) - tail
            llm.reset()
            llm.eval(prompt[:head])
            started = time.perf_counter()
            for start in range(head, len(prompt), size):
                llm.eval(prompt[start:start + size])
            seconds += time.perf_counter() - started
            done += tail
        rates[size] = done / seconds
    return rates


def candidates_batched(model_path: str, n_threads: int, prompts: list[list[int]]) -> tuple[float, float, int]:
    """Seconds to evaluate the candidates' unique parts one after another, and as one batch of
    sequences over their shared prefix; and the tokens in that batch."""
    import llama_cpp
    import llama_cpp.llama_cpp as low

    from dialjudge.core.judges.backends.llama import _with_answer_sequences

    common = min(next((i for i, (a, b) in enumerate(zip(prompts[0], p)) if a != b), len(p)) for p in prompts[1:])
    tails = [p[common:] for p in prompts]
    total = sum(len(t) for t in tails)
    with _with_answer_sequences(len(prompts) + 1):
        llm = llama_cpp.Llama(model_path=model_path, n_ctx=4096, n_batch=2048, n_ubatch=2048, n_threads=n_threads,
                              n_threads_batch=n_threads, verbose=False)
    memory = low.llama_get_memory(llm.ctx)
    llm.reset()
    llm.eval(prompts[0][:common])
    started = time.perf_counter()
    for tail in tails:
        llm.n_tokens = common
        low.llama_memory_seq_rm(memory, -1, common, -1)
        llm.eval(tail)
    one_by_one = time.perf_counter() - started
    low.llama_memory_seq_rm(memory, -1, common, -1)
    for seq in range(1, len(tails) + 1):
        low.llama_memory_seq_cp(memory, 0, seq, 0, common)
    batch = low.llama_batch_init(total, 0, 1)
    i = 0
    for seq, tail in enumerate(tails, start=1):
        for k, token in enumerate(tail):
            batch.token[i], batch.pos[i], batch.n_seq_id[i] = token, common + k, 1
            batch.seq_id[i][0] = seq
            batch.logits[i] = k == len(tail) - 1
            i += 1
    batch.n_tokens = total
    started = time.perf_counter()
    status = low.llama_decode(llm.ctx, batch)
    together = time.perf_counter() - started
    low.llama_batch_free(batch)
    llm.close()
    if status != 0:
        raise RuntimeError(f"llama_decode failed ({status})")
    return one_by_one, together, total


def main(argv: list[str] | None = None) -> int:
    from .__main__ import measure_this_checkout

    measure_this_checkout()
    parser = argparse.ArgumentParser(prog="python -m bench.judge_profile", description=__doc__.splitlines()[0])
    parser.add_argument("--contexts", type=int, default=2, help="USR contexts (5 candidates each)")
    parser.add_argument("--data", type=Path, default=default_data_dir())
    args = parser.parse_args(argv)

    from dialjudge.core.config import bundled_judge
    from dialjudge.core.judges.backends.llama import bundled_model_path

    from .figure_judge import ceiling_tokens_per_s, prompt_token_lists, threads, usr_subset

    n_threads = threads()
    judge = dataclasses.replace(bundled_judge(), n_threads=n_threads)
    dataset = usr_subset(args.data, args.contexts, 5)
    model_path = str(bundled_model_path())
    say(f"bundled model, {n_threads} threads, {len(dataset)} items ({args.contexts} contexts x 5 candidates)")
    for batch_answers in (False, True):
        seconds, done, steps, calls = profile_run(dataset, judge, batch_answers)
        how = "one batch" if batch_answers else "token by token"
        say(f"\nanswer trie {how}: {done} items in {seconds:.2f} s = {done / seconds:.3f} items/s; per item:")
        for name in STEPS:
            if name in steps:
                say(f"  {name:<20} {1000 * steps[name] / done:8.1f} ms  ({calls[name] / done:.1f} calls)")
        inside = steps.get("eval_prompt", 0) + steps.get("first_answer_tokens", 0) + steps.get("answer_logprobs", 0) \
            + steps.get("format", 0)
        say(f"  {'engine + rest':<20} {1000 * (seconds - inside) / done:8.1f} ms  (the run's time not in the above)")

    ids = [ex.id for ex in dataset.examples]
    tokens = prompt_token_lists(dataset, model_path, ids)
    say(f"\nceiling (whole prompts, batches of 512): "
          f"{ceiling_tokens_per_s(tokens[:: max(1, len(tokens) // 4)], n_threads, model_path):.0f} tok/s")
    import llama_cpp

    llm = llama_cpp.Llama(model_path=model_path, n_ctx=4096, n_batch=512, n_threads=n_threads,
                          n_threads_batch=n_threads, verbose=False)
    tail = 192
    rates = rate_by_chunk(llm, tokens[:3], [8, 32, 64, 128, 256], tail)
    llm.close()
    say(f"the last {tail} tokens of a prompt in chunks of N tokens: "
          + ", ".join(f"N={n}: {r:.0f} tok/s" for n, r in rates.items()))
    one_by_one, together, total = candidates_batched(model_path, n_threads, tokens[:5])
    say(f"5 candidates of one context, their {total} unique tokens: one after another {one_by_one:.2f} s "
          f"({total / one_by_one:.0f} tok/s), as 5 sequences of one batch {together:.2f} s ({total / together:.0f} tok/s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
