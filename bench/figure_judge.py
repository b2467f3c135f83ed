"""Figure 2: the bundled local judge (SmolLM2-135M, llama.cpp) on USR Topical-Chat.

- baseline, the papers' path: generate at temperature 0.7, up to 512 new tokens, parse the
  answer; every prompt evaluated from scratch (no prefix reuse);
- value, the engine's default: probability scoring (logprob; the expected rating over the
  valid answers) with prefix reuse and candidates of one context in a row.

Both run through the engine with the same template (adv-0to1, the shipped default of the
CLI) and the same thread count (every core). Also reported: prompt tokens evaluated per item
against the part of each prompt not shared with the previous one (what prefix reuse cannot
avoid), evaluated tokens per second against the raw prompt-processing rate of the model at
the same thread count (the ceiling, measured in this run), and the parse failures of the
app's first run on the bundled sample with nothing changed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import Context, Row, at_least, at_most, equals, failed, speedup

TEMPLATE = "adv-0to1"
ASPECT = "coherence"


def threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def usr_subset(data_dir: Path, contexts: int, per_context: int) -> Any:
    """The first ``per_context`` candidates (not the reference) of the first ``contexts`` contexts."""
    from dialjudge.core.loaders.usr import read_usr
    from dialjudge.core.model import Dataset

    dataset = read_usr(data_dir / "usr" / "usr_topical_chat.json")
    groups: dict[str, list[Any]] = {}
    for ex in dataset.examples:
        if not ex.is_reference and len(groups.setdefault(ex.group_id, [])) < per_context:
            groups[ex.group_id].append(ex)
    chosen = [ex for group in list(groups.values())[:contexts] for ex in group]
    return Dataset(dataset.name, chosen, meta=dict(dataset.meta))


def engine_run(dataset: Any, judge: Any, mode: Any, *, reuse_prefix: bool, quality: str = "Overall",
               template: str = TEMPLATE, aspect: str = ASPECT, top_k: int = 0) -> tuple[float, Any, list[Any]]:
    """(seconds, summary, judgments in run order) of one fresh engine run with the bundled model."""
    from dialjudge.core.judges.backends import make_backend
    from dialjudge.core.judges.prompts.templates import get_template
    from dialjudge.core.judges.run.config import RunConfig
    from dialjudge.core.judges.run.engine import RunEngine
    from dialjudge.core.judges.run.events import JudgmentScored
    from dialjudge.core.judges.run.options import EngineOptions
    from dialjudge.core.judges.store.run_store import RunStore

    config = RunConfig.build(dataset, get_template(template), [judge], aspect=aspect, quality=quality,
                             mode=mode, top_k=top_k)
    backend = make_backend(judge)
    if hasattr(backend, "reuse_prefix"):
        backend.reuse_prefix = reuse_prefix
    judgments: list[Any] = []
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.sqlite3")
        try:
            engine = RunEngine(config, dataset, {judge.name: backend}, store,
                               EngineOptions(use_cache=False, resume=False))
            engine.subscribe(lambda e: judgments.append(e.judgment) if isinstance(e, JudgmentScored) else None)

            async def go() -> Any:
                await backend.open()  # the model load is not part of the run's time
                started = time.perf_counter()
                summary = await engine.run()
                seconds = time.perf_counter() - started
                await backend.close()
                return seconds, summary

            seconds, summary = asyncio.run(go())
        finally:
            store.close()
    return seconds, summary, judgments


def prompt_token_lists(dataset: Any, model_path: str, order: list[str]) -> list[list[int]]:
    """The token ids of each item's prompt in run order, formatted as the llama backend formats
    them (the model's chat template with the generation prompt; BOS where the model adds one)."""
    import llama_cpp
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    from dialjudge.core.judges.prompts.render import render_prompt
    from dialjudge.core.judges.prompts.templates import get_template

    template = get_template(TEMPLATE)
    by_id = {ex.id: ex for ex in dataset.examples}
    # The whole model (135M parameters: a fraction of a second), not vocab_only: llama-cpp-python
    # 0.3.36 still makes a context for a vocabulary-only model (n_ctx_train 0), which crashed
    # in libggml-cpu on this machine (a general protection fault that ended the full bench run).
    llm = llama_cpp.Llama(model_path=model_path, n_ctx=4096, verbose=False)
    eos, bos = llm.token_eos(), llm.token_bos()
    formatter = Jinja2ChatFormatter(
        template=llm.metadata["tokenizer.chat_template"],
        eos_token=llm._model.token_get_text(eos) if eos != -1 else "",
        bos_token=llm._model.token_get_text(bos) if bos != -1 else "", add_generation_prompt=True)
    adds_bos = bool(llama_cpp.llama_vocab_get_add_bos(llama_cpp.llama_model_get_vocab(llm.model)))
    out = []
    for item in order:
        prompt = render_prompt(template, by_id[item], quality="Overall", aspect=ASPECT)
        text = formatter(messages=[m.to_dict() for m in prompt.messages]).prompt
        tokens = llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        if adds_bos and bos != -1 and (not tokens or tokens[0] != bos):
            tokens.insert(0, bos)
        out.append(tokens)
    llm.close()
    return out


def unique_tokens(token_lists: list[list[int]]) -> list[int]:
    """Per prompt, the tokens after its common prefix with the previous prompt."""
    out, previous = [], []
    for tokens in token_lists:
        common = 0
        for a, b in zip(previous, tokens):
            if a != b:
                break
            common += 1
        out.append(len(tokens) - common)
        previous = tokens
    return out


def ceiling_in_child(token_lists: list[list[int]], n_threads: int, model_path: str) -> float | str:
    """:func:`ceiling_tokens_per_s` in a child process: tokens per second, or why it gave none.

    Why a child: on the Intel (AVX-512 + AMX) machine of 2026-11-25, evaluating these whole
    prompts with a plain ``Llama`` (llama.cpp's AMX weight buffers on) ended the process with a general
    protection fault inside libggml-cpu (the same instruction every time, at n_batch 512, 256 and 64),
    which took the whole benchmark with it. The baseline now loads the model with the backend's own
    settings (:func:`~dialjudge.core.judges.backends.llama.open_llama`: no AMX buffers where the CPU
    advertises AMX) and ran on such a machine on 2026-11-28; the child stays, so that a CPU whose
    llama.cpp crashes in another way still costs one row, not the benchmark."""
    import json
    import subprocess

    with tempfile.TemporaryDirectory() as tmp:
        tokens_file = Path(tmp) / "tokens.json"
        tokens_file.write_text(json.dumps(token_lists), encoding="utf-8")
        code = ("import json, sys; from bench.figure_judge import ceiling_tokens_per_s; "
                f"print(ceiling_tokens_per_s(json.load(open({str(tokens_file)!r})), {n_threads}, {model_path!r}))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             cwd=Path(__file__).resolve().parent.parent)
    if out.returncode != 0:
        signal = f"signal {-out.returncode}" if out.returncode < 0 else f"exit status {out.returncode}"
        return f"llama.cpp's raw prompt processing ended its process ({signal})"
    return float(out.stdout.strip().splitlines()[-1])


def ceiling_tokens_per_s(token_lists: list[list[int]], n_threads: int, model_path: str) -> float:
    """Raw prompt processing: whole prompts evaluated from an empty cache, tokens per second, with the model
    loaded as the judge's backend loads it (its context, batch size, weight buffers and sequences)."""
    from dialjudge.core.judges.backends.llama import ANSWER_SEQUENCES, cpu_has_amx, open_llama

    llm = open_llama(Path(model_path), n_ctx=4096, n_threads=n_threads, n_threads_batch=n_threads, n_gpu_layers=0,
                     extra_buffers=not cpu_has_amx(), n_seq_max=ANSWER_SEQUENCES)
    done, seconds = 0, 0.0
    for tokens in token_lists:
        llm.reset()  # eval() then drops the whole cache: every prompt is evaluated from empty
        started = time.perf_counter()
        llm.eval(tokens)
        seconds += time.perf_counter() - started
        done += len(tokens)
    llm.close()
    return done / seconds


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.config import Sampling, bundled_judge
    from dialjudge.core.judges.backends.llama import bundled_model_path
    from dialjudge.core.judges.types import ScoringMode

    n_threads = threads()
    base = bundled_judge()
    fast_judge = dataclasses.replace(base, n_threads=n_threads)
    paper_judge = dataclasses.replace(base, n_threads=n_threads, sampling=Sampling(temperature=0.7, max_tokens=512))

    # The papers' path takes seconds to tens of seconds per item: a few items measure its rate.
    paper_set = usr_subset(ctx.data_dir, 1 if ctx.quick else 2, 1 if ctx.quick else 2)
    # --quick: one context's first 3 candidates (the first prompt is evaluated whole, the next
    # two reuse its prefix).
    fast_set = usr_subset(ctx.data_dir, 1 if ctx.quick else 4, 3 if ctx.quick else 5)
    paper_rate = None
    if not ctx.quick:  # up to 512 sampled tokens per item: tens of seconds each on 2 cores
        t_paper, s_paper, _ = engine_run(paper_set, paper_judge, ScoringMode.GENERATE, reuse_prefix=False)
        paper_rate = s_paper.done / t_paper
        ctx.log(f"  papers' path: {s_paper.done} items in {t_paper:.1f} s, {s_paper.failures} parse failures")
    t_fast, s_fast, judgments = engine_run(fast_set, fast_judge, ScoringMode.LOGPROB, reuse_prefix=True)
    fast_rate = s_fast.done / t_fast
    evaluated = [j.evaluated_tokens for j in judgments]
    answer = [j.completion_tokens for j in judgments]
    ctx.log(f"  logprob + reuse: {s_fast.done} items in {t_fast:.1f} s, {s_fast.failures} failures")

    model_path = str(bundled_model_path())
    tokens = prompt_token_lists(fast_set, model_path, [j.item_id for j in judgments])
    # The backend's count adds the answer prefix ("The score is"), a few tokens.
    mismatched = sum(abs(len(t) - j.prompt_tokens) > 8 for t, j in zip(tokens, judgments))
    if mismatched:
        ctx.log(f"  note: {mismatched} prompts tokenized here differ in length from the backend's")
    unique = unique_tokens(tokens)
    # Whole prompts of about 800 tokens, 5 s each on 2 cores: --quick measures the ceiling on one.
    ceiling = ceiling_in_child(tokens[:1] if ctx.quick else tokens[:: max(1, len(tokens) // 6)], n_threads,
                               model_path)
    eval_rate = (sum(evaluated) + sum(answer)) / t_fast
    ctx.log(f"  prompt tokens {statistics.mean(len(t) for t in tokens):.0f}/item, unique "
            f"{statistics.mean(unique):.0f}, evaluated {statistics.mean(evaluated):.0f}, answer "
            f"{statistics.mean(answer):.0f}; ceiling "
            f"{f'{ceiling:.0f} tok/s' if isinstance(ceiling, float) else ceiling}, engine {eval_rate:.0f} tok/s")

    # The app's first run on the bundled sample with nothing changed (template likert-1to5 on the
    # sample's first quality, the bundled judge, the default mode), verified through the engine.
    from dialjudge.core.dataset_catalogue import open_dataset
    from dialjudge.core.planning import plan_run

    sample = open_dataset("sample", remember=False)
    quality = "overall"
    plan = plan_run(sample, _default_config(), template="likert-1to5", judges=[base.name], aspect=quality, quality=quality,
                    limit=3 if ctx.quick else None)
    t_app, s_app, _ = _plan_run(plan, sample, base)
    ctx.log(f"  app default run on the sample: mode {plan.config.mode.value}, top-{plan.config.top_k}: "
            f"{s_app.done} items in {t_app:.1f} s, {s_app.failures} failures")

    label = f"judge items/s, logprob+reuse vs papers' generate (t=0.7, 512 tok), {n_threads} threads"
    return [
        speedup(label, paper_rate, fast_rate, 10.0) if paper_rate is not None
        else Row(f"{label} (papers' path skipped in --quick)", None, fast_rate, None, "", None),
        at_most("judge prompt tokens evaluated per item vs unique prompt part (<= 1.2x)",
                statistics.mean(evaluated), 1.2 * statistics.mean(unique), "tok", baseline=statistics.mean(unique)),
        at_least(f"judge evaluated tok/s vs raw prompt processing at {n_threads} threads (>= 85%)", eval_rate,
                 0.85 * ceiling, "tok/s", baseline=ceiling) if isinstance(ceiling, float)
        else failed(f"judge evaluated tok/s vs raw prompt processing at {n_threads} threads", ceiling),
        at_most("judge answer tokens scored per item (answer trie)", statistics.mean(answer), None, "tok"),
        equals(f"judge parse failures, app's default run on the sample ({s_app.done} items, "
               f"{plan.config.mode.value})", float(s_app.failures), 0.0),
    ]


def _default_config() -> Any:
    """The configuration of a user without a config file: the bundled judge only."""
    from dialjudge.core.config import BUNDLED_JUDGE, Config, bundled_judge

    return Config(path=None, judges={BUNDLED_JUDGE: bundled_judge()})


def _plan_run(plan: Any, dataset: Any, judge: Any) -> tuple[float, Any, list[Any]]:
    from dialjudge.core.judges.backends import make_backend
    from dialjudge.core.judges.run.engine import RunEngine
    from dialjudge.core.judges.run.options import EngineOptions
    from dialjudge.core.judges.store.run_store import RunStore

    backend = make_backend(judge)
    with tempfile.TemporaryDirectory() as tmp:
        store = RunStore(Path(tmp) / "runs.sqlite3")
        try:
            started = time.perf_counter()
            summary = asyncio.run(RunEngine(plan.config, dataset, {judge.name: backend}, store,
                                            EngineOptions(resume=False, use_cache=False, close_backends=True)).run())
            return time.perf_counter() - started, summary, []
        finally:
            store.close()
