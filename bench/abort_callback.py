"""What llama.cpp's abort callback costs a decode, as ratios measured in one run.

    PYTHONPATH=src python -m bench.abort_callback

The bundled SmolLM2 decodes a 600-token prompt (best of 5) with no abort callback, with a
Python callback, and with the callback the backend installs (``AbortFlag``: libc's strlen over
a flag byte where the platform allows, so no Python runs); first alone, then beside one Python
thread that never sleeps (what the app's statistics workers are while they compute). A Python
callback takes the interpreter lock at every graph node, so beside a busy thread each call waits
for it. Last, the installed callback is set and a decode must fail as aborted.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from dialjudge.core.judges.backends.abort_flag import AbortFlag
from dialjudge.core.judges.backends.llama import _without_extra_buffers, bundled_model_path, cpu_has_amx

PROMPT_TOKENS = 600


def load(path: str) -> Any:
    import llama_cpp

    # As the backend loads it: without the AMX buffers that crash some virtual machines.
    with _without_extra_buffers(cpu_has_amx()):
        return llama_cpp.Llama(path, n_ctx=2048, n_batch=512, verbose=False)


def best_decode_seconds(llm: Any, tokens: list[int], repeats: int = 5) -> float:
    import llama_cpp

    best = float("inf")
    for _ in range(repeats):
        llm.reset()
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(llm.ctx), True)
        started = time.perf_counter()
        llm.eval(tokens)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    import llama_cpp

    llm = load(str(bundled_model_path()))
    tokens = llm.tokenize(b"The quick brown fox jumps over the lazy dog. " * 80)[:PROMPT_TOKENS]
    flag = AbortFlag()
    python_callback = llama_cpp.ggml_abort_callback(lambda _data: flag.is_set())
    no_callback = llama_cpp.ggml_abort_callback(0)
    print(f"installed callback reads the flag without Python's lock: {flag.reads_without_the_interpreter_lock}")
    busy = threading.Event()

    def spin() -> None:
        count = 0
        while busy.is_set():
            count += 1

    for beside_a_busy_thread in (False, True):
        spinner = None
        if beside_a_busy_thread:
            busy.set()
            spinner = threading.Thread(target=spin, daemon=True)
            spinner.start()
        llama_cpp.llama_set_abort_callback(llm.ctx, no_callback, None)
        none = best_decode_seconds(llm, tokens)
        llama_cpp.llama_set_abort_callback(llm.ctx, python_callback, None)
        python = best_decode_seconds(llm, tokens)
        kept = flag.install(llama_cpp, llm.ctx)  # noqa: F841 (held while the context decodes)
        installed = best_decode_seconds(llm, tokens)
        where = "beside a busy Python thread" if beside_a_busy_thread else "alone"
        print(f"{where}: no callback {none:.3f} s; Python callback {python:.3f} s ({python / none:.2f}x); "
              f"installed callback {installed:.3f} s ({installed / none:.2f}x)")
        if spinner is not None:
            busy.clear()
            spinner.join()
    flag.set()
    try:
        best_decode_seconds(llm, tokens, repeats=1)
        print("the set flag did NOT abort the decode")
    except RuntimeError as error:
        print(f"the set flag aborted the decode: {error}")


if __name__ == "__main__":
    main()
