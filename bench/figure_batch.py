"""Figure 9: a 100,000-judgment batch run (issue 36: "a 100,000-judgment export and its import each
finish within 30 s on the 2-core machine").

A logprob run of one judge behind an OpenAI-compatible API (``continuation = "prefill"``: a batch file
states how the server continues) over ``big_dataset(100_000)``, in a fresh store in a temporary folder:

- export: ``write_batch`` (the run planned as the engine plans it, every prompt rendered, one request
  line per judgment written, the run stored awaiting its answers);
- import: ``import_answers`` of an answer file in the batch output format, one answer per request with
  the answer position's top log-probabilities (made here from the request file, outside the timing): every
  line matched by custom id, read by the API backend, put in the response cache and scored by the engine.

The figure checks that every judgment was scored. Times are single wall-clock runs (no ratio: there is
no earlier way to compare with); each row has its CPU time beside it. ``--quick``: 10,000 judgments.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from .common import Context, Row, at_most, equals
from .datasets import big_dataset

SECONDS = 30.0


def answers_for(requests: list[Path], out: Path) -> None:
    """An answer line per request (of every file the export was split into): a rating 1-5, with a top
    list at its position."""
    with out.open("w", encoding="utf-8") as handle:
        for n, line in enumerate(line for path in requests for line in path.open(encoding="utf-8")):
            request = json.loads(line)
            rating = str(n % 5 + 1)
            top = [{"token": str(d), "logprob": -0.1 if str(d) == rating else -3.0} for d in range(1, 6)]
            body = {"id": f"chatcmpl-{n}", "model": request["body"]["model"],
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": rating},
                                 "logprobs": {"content": [{"token": rating, "logprob": -0.1,
                                                           "top_logprobs": top}]}}],
                    "usage": {"prompt_tokens": 120, "completion_tokens": 1}}
            handle.write(json.dumps({"id": f"batch_req_{n}", "custom_id": request["custom_id"],
                                     "response": {"status_code": 200, "body": body}, "error": None}) + "\n")


def run(ctx: Context) -> list[Row]:
    from dialjudge.core.api import (
        RunRequest,
        plan_runs,
    )
    from dialjudge.core.api.batch import import_answers, write_batch
    from dialjudge.core.api.session import Session
    from dialjudge.core.config import Config, JudgeConfig

    n = 10_000 if ctx.quick else 100_000
    dataset = big_dataset(n)
    judge = JudgeConfig(name="api", backend="openai", model="m", base_url="http://127.0.0.1:9/v1",
                        extra={"continuation": "prefill"})
    with tempfile.TemporaryDirectory() as folder:
        session = Session(Config(path=None, judges={"api": judge}), store_path=Path(folder) / "runs.sqlite3")
        plan = plan_runs(RunRequest(template="likert-1to5", judges=("api",), mode="logprob", aspect="overall",
                                    quality="overall"), dataset, session.config)[0]
        requests, answers = Path(folder) / "requests.jsonl", Path(folder) / "answers.jsonl"
        export_s, export_cpu, exported = _timed(lambda: write_batch(session, plan, dataset, requests))
        ctx.log(f"[batch] export: {exported.requests} requests in {len(exported.files)} files, {export_s:.1f} s ({export_cpu:.1f} s CPU)")
        answers_for([Path(f.path) for f in exported.files], answers)
        import_s, import_cpu, imported = _timed(lambda: import_answers(session, exported.run_id, [answers], dataset))
        ctx.log(f"[batch] import: {imported.scored_now} answers scored in {import_s:.1f} s ({import_cpu:.1f} s CPU)")
    label = f"{n:,}"
    return [
        at_most(f"batch: export {label} judgments (s)", export_s, SECONDS, "s"),
        at_most("batch: export, CPU (s)", export_cpu, None, "s"),
        at_most(f"batch: import {label} answers (s)", import_s, SECONDS, "s"),
        at_most("batch: import, CPU (s)", import_cpu, None, "s"),
        equals("batch: answers scored", imported.scored_now, n),
    ]


def _timed(work: Any) -> tuple[float, float, Any]:
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return time.perf_counter() - wall, time.process_time() - cpu, result
