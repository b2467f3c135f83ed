"""A fake OpenAI-compatible server on 127.0.0.1 that injects faults, for the reliability suite.

It serves ``/v1/chat/completions`` and ``/v1/completions``. A good answer is
deterministic in the prompt: a rating 1-5 from a hash of the prompt text,
written as "Score: N" and, when log-probabilities are asked for, one answer
position whose top tokens are the digits and yes/no. Which fault a request
gets is decided by a hash of (seed, prompt, how many times this prompt was
asked before), so the same run meets the same faults whatever order threads
send in. Every wait is bounded and ends when the server stops.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import socket
import struct
import threading
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

#: Every fault the server can inject.
FAULTS = (
    "timeout", "reset", "429-retry-after", "429", "500", "502", "503", "html", "truncated",
    "empty-choices", "choices-not-list", "choice-not-object", "no-logprobs", "positive-logprob",
    "nan-logprob", "string-logprob", "slow",
)
#: Faults that still deliver a correct answer.
HARMLESS = frozenset({"slow"})
#: Faults that only spoil an answer when log-probabilities were asked for.
LOGPROB_ONLY = frozenset({"no-logprobs", "positive-logprob", "nan-logprob", "string-logprob"})


def rating_for(prompt: str) -> int:
    return int(hashlib.sha256(prompt.encode("utf-8")).hexdigest(), 16) % 5 + 1


def top_tokens(rating: int) -> list[tuple[str, float]]:
    """The answer position's top tokens: the rating likeliest, its neighbours next, yes/no beside them."""
    out = [(str(d), -0.2 if d == rating else -2.0 if abs(d - rating) == 1 else -4.0) for d in range(1, 6)]
    # yes/no hold most of a yes/no question's probability (a model answering it), as the digits do a rating's.
    out += [("yes", -0.4 if rating >= 3 else -2.4), ("no", -2.4 if rating >= 3 else -0.4)]
    return sorted(out, key=lambda e: -e[1])


@dataclass
class FaultPlan:
    """Share of requests getting each fault (the rest are answered well)."""

    rates: dict[str, float] = field(default_factory=dict)
    seed: int = 0
    #: Every request answers with this HTTP status (401, 404, ...) instead.
    always_status: int | None = None
    #: How long a "timeout" request waits before giving up on the client, and a "slow" one before answering.
    hang_s: float = 2.0
    slow_s: float = 0.05
    #: Error answers quote the Authorization header back, as careless servers do.
    echo_key: bool = False
    #: Probability answers: the share of the answer position's probability on the digits 1-5 (None: most
    #: of it, as a model that answers with a rating). Below 1/2 the generated token is "A" (as in
    #: "A: yes, i've heard of it"), and the rest of the top list holds words. ``top_coverage`` is how much
    #: probability the listed tokens hold together (less than 1: a truncated list).
    valid_mass: float | None = None
    top_coverage: float = 1.0
    #: Honour continue_final_message: a request with it counts fewer prompt tokens (the prompt stops
    #: inside the started assistant turn), as vLLM does; without, the field is ignored.
    continues_final_message: bool = False
    #: What GET /props shows as the model's chat template (llama.cpp's server); None: no /props.
    chat_template: str | None = None

    def fault(self, prompt: str, attempt: int) -> str | None:
        digest = hashlib.sha256(f"{self.seed}|{attempt}|{prompt}".encode()).digest()
        x = int.from_bytes(digest[:8], "big") / 2**64
        edge = 0.0
        for name in FAULTS:
            edge += self.rates.get(name, 0.0)
            if x < edge:
                return name
        return None


def mixed(share: float, names: tuple[str, ...] = FAULTS) -> dict[str, float]:
    """``share`` of requests faulty, split evenly over ``names``."""
    return {n: share / len(names) for n in names}


@dataclass
class Stats:
    requests: int = 0
    #: Per prompt: requests received and correct answers delivered.
    per_prompt: Counter[str] = field(default_factory=Counter)
    good_answers: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    authorization: set[str] = field(default_factory=set)
    #: Every request body received, in order.
    payloads: list[dict[str, Any]] = field(default_factory=list)


class FaultServer:
    """Start with :meth:`start`; ``base_url`` ends in /v1. Use as a context manager."""

    def __init__(self, plan: FaultPlan | None = None) -> None:
        self.plan = plan or FaultPlan()
        self.stats = Stats()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def start(self) -> FaultServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # the name http.server calls
                server._handle(self)

            def do_GET(self) -> None:
                server._handle_get(self)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- one request ---------------------------------------------------------------------

    def _handle_get(self, h: BaseHTTPRequestHandler) -> None:
        template = self.plan.chat_template
        if h.path.rstrip("/").endswith("/props") and template is not None:
            return self._send(h, 200, json.dumps({"chat_template": template, "bos_token": "", "eos_token": "</s>"}))
        self._send(h, 404, json.dumps({"error": {"message": "not found"}}))

    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        length = int(h.headers.get("Content-Length") or 0)
        payload = json.loads(h.rfile.read(length) or b"{}")
        chat = h.path.endswith("/chat/completions")
        prompt = (json.dumps(payload.get("messages"), sort_keys=True) if chat else str(payload.get("prompt")))
        probability = bool(payload.get("logprobs"))
        with self._lock:
            attempt = self.stats.per_prompt[prompt]
            self.stats.per_prompt[prompt] += 1
            self.stats.requests += 1
            self.stats.authorization.add(h.headers.get("Authorization") or "")
            self.stats.payloads.append(payload)
        echo = f" (you sent {h.headers.get('Authorization')})" if self.plan.echo_key else ""
        if self.plan.always_status is not None:
            self._send(h, self.plan.always_status, json.dumps({"error": {"message": f"no such luck{echo}"}}))
            return
        fault = self.plan.fault(prompt, attempt)
        if fault in LOGPROB_ONLY and not probability:
            fault = None
        with self._lock:
            self.stats.faults[fault or "none"] += 1
        if fault == "timeout":
            self._stopping.wait(self.plan.hang_s)
            return self._reset(h)
        if fault == "reset":
            return self._reset(h)
        if fault == "slow":
            self._stopping.wait(self.plan.slow_s)
        if fault in ("429-retry-after", "429", "500", "502", "503"):
            status = int(fault[:3])
            headers = {"Retry-After": "0"} if fault == "429-retry-after" else {}
            return self._send(h, status, json.dumps({"error": {"message": f"fault {fault}{echo}"}}), headers)
        if fault == "html":
            return self._send(h, 200, "<html><body><h1>502 Bad Gateway</h1></body></html>",
                              {"Content-Type": "text/html"})
        body = self._answer(payload, prompt, chat, probability, fault)
        if fault == "truncated":
            text = json.dumps(body)
            return self._send(h, 200, text[: len(text) // 2])
        if fault is None or fault in HARMLESS:
            with self._lock:
                self.stats.good_answers[prompt] += 1
        self._send(h, 200, json.dumps(body))

    def _answer(self, payload: dict[str, Any], prompt: str, chat: bool, probability: bool,
                fault: str | None) -> Any:
        rating = rating_for(prompt)
        top = top_tokens(rating)
        generated = str(rating)
        if self.plan.valid_mass is not None:
            top = little_valid_mass(rating, self.plan.valid_mass, self.plan.top_coverage)
            generated = max(top, key=lambda e: e[1])[0]
        if fault == "positive-logprob":
            top = [(t, 0.7 if t == str(rating) else lp) for t, lp in top]
        elif fault == "nan-logprob":
            top = [(t, float("nan") if t == str(rating) else lp) for t, lp in top]
        elif fault == "string-logprob":
            top = [(t, "high" if t == str(rating) else lp) for t, lp in top]  # type: ignore[misc]
        usage = {"prompt_tokens": len(prompt) // 4, "completion_tokens": 3}
        if self.plan.continues_final_message and payload.get("continue_final_message"):
            usage["prompt_tokens"] -= 5  # no end of the assistant turn, no new turn after it
        if chat:
            choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant",
                                                  "content": generated if probability else f"Score: {rating}"}}
            if probability and fault != "no-logprobs":
                choice["logprobs"] = {"content": [{
                    "token": generated, "logprob": dict(top).get(generated, -0.2),
                    "top_logprobs": [{"token": t, "logprob": lp} for t, lp in top]}]}
        else:
            choice = {"index": 0, "finish_reason": "stop", "text": f" {generated}"}
            if probability and fault != "no-logprobs":
                choice["logprobs"] = {"tokens": [generated], "token_logprobs": [dict(top).get(generated, -0.2)],
                                      "top_logprobs": [dict(top)]}
        if fault == "empty-choices":
            return {"choices": [], "usage": usage}
        if fault == "choices-not-list":
            return {"choices": {"0": choice}, "usage": usage}
        if fault == "choice-not-object":
            return {"choices": ["Score: 3"], "usage": usage}
        return {"id": "fake", "object": "chat.completion" if chat else "text_completion",
                "model": payload.get("model"), "choices": [choice], "usage": usage}

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, text: str, headers: dict[str, str] | None = None) -> None:
        data = text.encode("utf-8")
        try:
            h.send_response(status)
            headers = {"Content-Type": "application/json", **(headers or {})}
            for k, v in headers.items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(data)))
            h.end_headers()
            h.wfile.write(data)
        except OSError:  # the client gave up first
            pass

    @staticmethod
    def _reset(h: BaseHTTPRequestHandler) -> None:
        """Close with a TCP reset instead of an answer."""
        with contextlib.suppress(OSError):
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        h.close_connection = True


def little_valid_mass(rating: int, mass: float, coverage: float = 1.0) -> list[tuple[str, float]]:
    """An answer position whose digits hold ``mass`` (shaped as :func:`top_tokens`) and words the rest of
    ``coverage``: what a chat model that did not start with a rating shows."""
    import math

    digits = [(t, math.exp(lp)) for t, lp in top_tokens(rating) if t.isdigit()]
    total = sum(p for _, p in digits)
    words = ("A", "The", "I", "Yes", "**", "Sure", "This", "It")
    weights = [0.5 ** i for i in range(len(words))]
    rest = max(coverage - mass, 0.0)
    out = [(t, math.log(mass * p / total)) for t, p in digits]
    out += [(w, math.log(rest * x / sum(weights))) for w, x in zip(words, weights)]
    return sorted(out, key=lambda e: -e[1])


def closed_port_url() -> str:
    """A loopback URL where nothing listens (connection refused)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
