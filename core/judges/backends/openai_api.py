"""A judge behind an OpenAI-compatible HTTP API (OpenAI, vLLM, llama.cpp's server, Ollama).

The API key is read from the environment variable named by
``JudgeConfig.api_key_env`` when the client opens; it is never stored on this
object, never logged and never part of a result or an error message (text that
comes back from the server is scrubbed of it).

Requests that time out, fail to connect, or get 429 / 5xx are retried with
exponential backoff and jitter, waiting what a ``Retry-After`` header asks for
when there is one. The sleep function is injectable so tests do not wait.

Probability modes ask for ``logprobs`` with ``top_logprobs`` (chat) or
``logprobs: N`` (completions) and a few tokens at temperature 0. An API shows
log-probabilities only along the tokens it generated, so answers are read like
this: the answer position is the first generated position after an echo of the
answer prefix (e.g. "Score:"), if any; a top token there that spells a choice
(ignoring case and surrounding space) adds its probability to that choice. A
token that only begins a choice ("0" of "0.7", or a bare space before "4") is
followed only if it is the token the server generated: the next position's top
tokens then complete it, with the joint probability. Mass on beginnings the
server did not generate cannot be seen and is left out, so for multi-token
choices the distribution covers the choices that share the generated answer's
first tokens (e.g. "0.0".."0.9" when the model wrote "0.7"). ``choice_probs``
is normalised over what was found. Nothing falls back silently to another mode:
:meth:`OpenAIBackend.check_mode` probes the server and refuses a probability
mode when it returns no log-probabilities.

A chat endpoint answers a new assistant turn, so a template's answer prefix
("Score:") cannot simply be sent: the model then writes whatever it likes, and a
valid rating that happens to sit in the top list is not its answer. So before a
probability run :meth:`OpenAIBackend.check_mode` settles, once, how the server is
made to continue after the prefix (``options.continuation``, see
core.judges.run.probability): the completions endpoint with the model's chat template
applied by dialjudge (from ``options.chat_template`` or llama.cpp's ``/props``),
vLLM's ``continue_final_message`` (checked: the server must count fewer prompt
tokens with it than without), or an assistant prefill the user vouches for.
Where none works, probability modes are refused with the reason, unless the judge
says ``continuation = "unprefixed"``. Either way each answer records the
probability its valid answers hold at the answer position (a lower bound when
the top list does not cover the position), and scoring fails the answers with
too little of it. :meth:`OpenAIBackend.runtime_info` names the way chosen.

Constrained generate runs (core.judges.prompts.grammar) send ``response_format`` with
a JSON schema for JSON answers, or with ``options.constrain_with = "grammar"``
the GBNF grammar in llama.cpp's ``grammar`` field; other answers cannot be
constrained over this API, and :meth:`OpenAIBackend.check_constraint` refuses
them before the run starts.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import random
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from ...errors import BackendError
from ...judge_config import JudgeConfig
from ..prompts.constraint import AnswerConstraint
from ..prompts.grammar import GrammarError, build_grammar, json_schema
from ..run.config import scrub_url
from ..run.failures import FailureKind, RequestFailed
from ..run.probability import continuation
from ..types import BackendResult, JudgeRequest, Message, ScoringMode
from .answers import (
    answer_choices,
    is_partial_answer,
    logsumexp,
    match_choice,
    normalize_answer,
    normalize_logprobs,
    top_logprobs_count,
)
from .chat_template import from_mapping, load_chat_template
from .kind import BackendKind, register_backend

if TYPE_CHECKING:
    import httpx  # heavy to import: only when an API judge is used

    from .chat_template import ChatTemplate

# httpx is imported where it is used: importing it also loads its command-line
# helpers (rich, click), which dialjudge.core must not pull in on import.

Sleep = Callable[[float], Awaitable[None]]
_T = TypeVar("_T")

#: OpenAI's (and vLLM's default) limit on top_logprobs.
MAX_TOP_LOGPROBS = 20
#: Tokens generated in probability modes: room for an echoed answer prefix and a multi-token answer.
PROBABILITY_MAX_TOKENS = 12
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504}) | frozenset(range(520, 530))
#: Requests in flight per HTTP client. httpcore's pool looks at every connection it holds on
#: each request and answer, so at 64 in flight one pool spent more CPU than the requests
#: (and kept only 20 alive); several small pools, used in turn, keep that cost flat.
REQUESTS_PER_CLIENT = 4
#: A top list covering this much of a position's probability shows every answer that matters there.
COMPLETE_COVERAGE = 0.999

#: How a probability-mode request continues after the answer prefix, as runs and status lines say it.
SCORING_WAYS = {
    "template": "completions endpoint with the model's chat template applied by dialjudge, continued after "
                "the answer prefix",
    "plain": "completions endpoint, plain text without a chat template, continued after the answer prefix",
    "continue": "chat endpoint with continue_final_message, continued after the answer prefix",
    "prefill": "chat endpoint with an assistant prefill of the answer prefix (options.continuation; not verified)",
    "unprefixed": "chat endpoint without the answer prefix (options.continuation = \"unprefixed\"): only "
                  "answers that start with a valid answer with enough probability are scored",
}


@dataclass(frozen=True)
class _Position:
    """One generated token and the most likely tokens at its position."""

    token: str
    top: tuple[tuple[str, float], ...]


class OpenAIBackend:
    """A judge reached over HTTP; up to ``config.concurrency`` requests in flight."""

    def __init__(self, config: JudgeConfig, *, transport: httpx.AsyncBaseTransport | None = None,
                 sleep: Sleep = asyncio.sleep, rng: random.Random | None = None,
                 backoff_base: float = 0.5, backoff_cap: float = 30.0, max_retry_after: float = 300.0) -> None:
        if not config.base_url:
            raise BackendError(f"judge {config.name!r}: base_url is required for the openai backend")
        if not config.model:
            raise BackendError(f"judge {config.name!r}: model is required for the openai backend")
        self.config = config
        self.name = config.name
        self.base_url = config.base_url.rstrip("/")
        self.model = config.model
        self.endpoint = config.endpoint
        # Identity and messages name the server without any user:password part of its URL:
        # the identity is stored with cached answers, messages reach the screen.
        self.public_url = scrub_url(self.base_url) or ""
        self.identity = f"openai:{self.public_url}#{self.model}"
        # How probability answers are asked changes them: cached ones are reused only for the same way.
        asked = [f"{key}={config.extra[key]}" for key in ("continuation", "chat_template") if config.extra.get(key)]
        if asked:
            self.identity += ";" + ";".join(asked)
        self.max_concurrency = config.concurrency
        self._transport = transport
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._backoff_base = backoff_base
        self._backoff_cap = backoff_cap
        self._max_retry_after = max_retry_after
        self._client: httpx.AsyncClient | None = None
        self._clients: list[httpx.AsyncClient] = []
        self._turn = 0
        self._slots: asyncio.Semaphore | None = None
        #: options.continuation, and the way probability requests are sent once check_mode settled it.
        self.continuation = continuation(config)
        self.scoring_way: str | None = None
        self._template: ChatTemplate | None = None

    # -- lifecycle ----------------------------------------------------------

    async def open(self) -> None:
        if self._client is not None:
            return
        import httpx  # heavy to import: only when an API judge is used

        env = self.config.api_key_env
        auth = None
        if env:
            if not self.config.api_key():
                raise BackendError(f"judge {self.name!r}: the environment variable {env} (api_key_env) is not set")
            auth = _key_from_environment(self.config, self.name)
        # An injected transport (tests) is one pool already: one client.
        n_clients = 1 if self._transport is not None else -(-self.max_concurrency // REQUESTS_PER_CLIENT)
        per_client = -(-self.max_concurrency // n_clients)
        # Building an SSL context loads the CA store (about 0.1 s): once, shared by the clients.
        ssl_context = httpx.create_ssl_context()
        self._clients = [httpx.AsyncClient(
            base_url=self.base_url, headers={"Content-Type": "application/json"}, auth=auth,
            timeout=httpx.Timeout(self.config.timeout), transport=self._transport, verify=ssl_context,
            limits=httpx.Limits(max_connections=per_client, max_keepalive_connections=per_client),
        ) for _ in range(n_clients)]
        self._client = self._clients[0]
        self._turn = 0
        self._slots = asyncio.Semaphore(self.max_concurrency)

    async def close(self) -> None:
        for client in self._clients:
            await client.aclose()
        self._clients = []
        self._client = None
        self._slots = None

    def runtime_info(self) -> dict[str, Any]:
        """What a run records about this judge: how probability answers were asked for."""
        if self.scoring_way is None:
            return {}
        way = SCORING_WAYS[self.scoring_way]
        if self._template is not None and self.scoring_way == "template":
            way += f" (template from {self._template.source})"
        return {"where": f"{self.public_url} ({self.model})", "scoring": way, "continuation": self.scoring_way}

    async def check_mode(self, mode: ScoringMode, top_k: int) -> None:
        """Probability modes need log-probabilities and a way to continue after the answer prefix:
        settled here, once, with a few small probe requests."""
        if mode is ScoringMode.GENERATE:
            return
        if top_k > MAX_TOP_LOGPROBS:
            raise BackendError(f"judge {self.name!r}: top_k is {top_k}, but APIs return at most "
                               f"{MAX_TOP_LOGPROBS} top log-probabilities")
        if self.scoring_way is None:
            self.scoring_way = await self._choose_continuation(mode)
        messages = (Message("user", "Is water wet? Answer yes or no."),)
        payload = self._probability_payload(messages, "Answer:", n_top=5, max_tokens=1, seed=0)
        try:
            path = self._probability_path()
            await self._post(payload, lambda body: self._read(body, probability=True,
                                                              completions=path == "/completions"), path=path)
        except RequestFailed as exc:
            if not isinstance(exc, _NoLogprobs):
                raise
            raise BackendError(
                f"judge {self.name!r}: the server at {self.public_url} (model {self.model}, {self.endpoint} "
                f"endpoint) returned no log-probabilities, so mode {mode.value} cannot be used; "
                "use mode generate, or a server that returns logprobs"
            ) from None

    async def _choose_continuation(self, mode: ScoringMode) -> str:
        """How this server is made to continue after the answer prefix, or BackendError saying why none works."""
        how = self.continuation
        if how in ("prefill", "unprefixed"):
            return how  # the user's word: a prefill cannot be told apart from a new turn by its answer
        template = await self._find_template() if how in ("auto", "template") else None
        if self.endpoint == "completions":
            if how in ("auto", "template") and template is not None:
                self._template = template
                return "template"
            if how == "template":
                raise self._refusal(mode, "no chat template is known for it")
            return "plain"
        if template is not None:
            self._template = template
            return "template"
        if how == "template":
            raise self._refusal(mode, "no chat template is known for it")
        if await self._continues_final_message():
            return "continue"
        raise self._refusal(mode, "no chat template is known for its completions endpoint (set "
                                  "options.chat_template to the model's GGUF or tokenizer_config.json), and it "
                                  "ignores continue_final_message")

    def _refusal(self, mode: ScoringMode, why: str) -> BackendError:
        return BackendError(
            f"judge {self.name!r}: the server at {self.public_url} (model {self.model}) cannot be made to continue "
            f"after the template's answer prefix: {why}. A chat answer starts a new turn, so mode {mode.value} "
            "would read probabilities wherever a valid answer happens to appear instead of the model's answer. "
            "Set options.chat_template, or options.continuation = \"unprefixed\" to score only answers that "
            "start with a valid answer with enough probability (options.min_valid_mass), or use mode generate")

    async def _find_template(self) -> ChatTemplate | None:
        """The model's chat template: options.chat_template, else what the server shows at /props."""
        path = self.config.extra.get("chat_template")
        if isinstance(path, str) and path:
            return await asyncio.to_thread(load_chat_template, path)
        assert self._client is not None
        root = self.base_url[:-3] if self.base_url.endswith("/v1") else self.base_url
        try:
            response = await self._client.get(root + "/props")
            body = response.json() if response.status_code == 200 else None
        except Exception:  # a server without /props (most): no template from it
            return None
        return from_mapping(body, f"{scrub_url(root)}/props") if isinstance(body, dict) else None

    async def _continues_final_message(self) -> bool:
        """Whether the chat endpoint honours continue_final_message: with it the prompt stops after the
        started assistant turn, so the server counts fewer prompt tokens than for the same messages
        closed and followed by a new turn. A server that ignores the field counts the same."""
        messages = [{"role": "user", "content": "Is water wet? Answer yes or no."},
                    {"role": "assistant", "content": "Answer:"}]
        plain = {"model": self.model, "messages": messages, "max_tokens": 1, "temperature": 0.0}
        continued = {**plain, "continue_final_message": True, "add_generation_prompt": False}
        try:
            closed = await self._post(plain, _prompt_tokens, path="/chat/completions")
            open_turn = await self._post(continued, _prompt_tokens, path="/chat/completions")
        except RequestFailed:  # e.g. 400 for an unknown field
            return False
        return 0 < open_turn < closed

    async def check_constraint(self, request: JudgeRequest) -> None:
        """Constrained answers: a JSON schema (``response_format``) where the answer is a JSON object,
        or a GBNF grammar for llama.cpp's server (``options.constrain_with = "grammar"``)."""
        self._constraint_fields(request)

    def _constraint_fields(self, request: JudgeRequest) -> dict[str, Any]:
        """The request fields that hold the answer to the template's format (none when unconstrained)."""
        if request.constrain is AnswerConstraint.OFF:
            return {}

        spec = request.prompt.output
        how = self.config.extra.get("constrain_with", "json_schema")
        if how == "grammar":  # llama.cpp's server (and llama-cpp-python's) take GBNF in "grammar"
            return {"grammar": build_grammar(spec, request.constrain, max_tokens=request.sampling.max_tokens).gbnf}
        if how != "json_schema":
            raise BackendError(f"judge {self.name!r}: options.constrain_with must be 'json_schema' or 'grammar', "
                               f"not {how!r}")
        try:
            schema = json_schema(spec)
        except GrammarError:
            raise BackendError(
                f"judge {self.name!r}: OpenAI-compatible servers constrain answers with a JSON schema "
                f"(response_format), which fits only JSON answers, and this template answers with a "
                f"{spec.kind.value}; for a llama.cpp server set options.constrain_with = \"grammar\" "
                "(it takes a GBNF grammar), or run without --constrain") from None
        if request.constrain is AnswerConstraint.REASONING and not spec.reasoning_key:
            raise BackendError(f"judge {self.name!r}: a JSON schema cannot put free reasoning before the JSON "
                               "answer; run without --reasoning, or use options.constrain_with = \"grammar\" "
                               "on a llama.cpp server")
        # With a JSON schema the reasoning is the object's own reasoning key, written first.
        return {"response_format": {"type": "json_schema",
                                    "json_schema": {"name": "judge_answer", "strict": True, "schema": schema}}}

    # -- requests -----------------------------------------------------------

    async def complete(self, request: JudgeRequest) -> BackendResult:
        path, payload = self.request_body(request)
        started = time.perf_counter()
        result = await self._post(payload, lambda body: self.result_from_body(request, body, path=path), path=path)
        result.latency_s = time.perf_counter() - started
        return result

    def request_body(self, request: JudgeRequest) -> tuple[str, dict[str, Any]]:
        """The endpoint path (after the base URL) and JSON body :meth:`complete` sends for ``request``;
        a batch file (core.judges.batch) writes the very same."""
        spec = request.prompt.output
        s = request.sampling
        if request.mode is not ScoringMode.GENERATE:
            choices = answer_choices(spec, request.mode)
            n_top = min(MAX_TOP_LOGPROBS, max(top_logprobs_count(request.top_k), len(choices) + 5))
            payload = self._probability_payload(request.prompt.messages, spec.answer_prefix, n_top=n_top,
                                                max_tokens=PROBABILITY_MAX_TOKENS, seed=request.seed)
            return self._probability_path(), payload
        payload = self._payload(request.prompt.messages, "", probability=False, n_top=0,
                                max_tokens=s.max_tokens, temperature=s.temperature, seed=request.seed)
        payload.update(top_p=s.top_p, presence_penalty=s.presence_penalty,
                       frequency_penalty=s.frequency_penalty)
        payload.update(self._constraint_fields(request))
        return self._path(), payload

    def result_from_body(self, request: JudgeRequest, body: Any, *, path: str) -> BackendResult:
        """The server's answer ``body`` to :meth:`request_body`'s request, read as :meth:`complete` reads
        it; a malformed answer raises RequestFailed with the reason."""
        spec = request.prompt.output
        probability = request.mode is not ScoringMode.GENERATE
        answer = self._read(body, probability=probability, completions=path == "/completions")
        result = BackendResult(raw_output=answer.text, prompt_tokens=answer.prompt_tokens,
                               evaluated_tokens=max(answer.prompt_tokens - answer.cached_tokens, 0),
                               completion_tokens=answer.completion_tokens)
        if probability:
            choices = answer_choices(spec, request.mode)
            # Where the server continued after the prefix the answer starts at once; else an echo is skipped.
            echo = spec.answer_prefix if self._probability_way() in ("unprefixed", "prefill") else ""
            logprobs, top, start = _read_answer(answer.positions, choices, echo, top_logprobs_count(request.top_k))
            result.choice_probs = normalize_logprobs(logprobs)
            result.top_logprobs = top
            result.valid_mass = min(1.0, math.exp(logsumexp(logprobs.values())))
            # Below a top list that does not cover its position, valid answers may hide: a lower bound.
            listed = answer.positions[start].top if start < len(answer.positions) else ()
            result.mass_is_lower_bound = sum(math.exp(lp) for _, lp in listed) < COMPLETE_COVERAGE
        return result

    def settle_without_server(self, mode: ScoringMode) -> None:
        """How probability answers are asked, settled from the judge's options alone: a batch file is
        answered later, elsewhere, so no probe can ask the server (:meth:`check_mode` does that live).
        A BackendError says why a probability mode cannot be written for this judge."""
        if mode is ScoringMode.GENERATE or self.scoring_way is not None:
            return
        how = self.continuation
        if how in ("prefill", "unprefixed", "continue"):
            self.scoring_way = how  # the user's word, as live; "continue" is vLLM's continue_final_message
            return
        path = self.config.extra.get("chat_template")
        if isinstance(path, str) and path:
            self._template = load_chat_template(path)
            self.scoring_way = "template"
            return
        raise BackendError(
            f"judge {self.name!r}: a batch file is answered without dialjudge asking the server first, so it "
            f"cannot find out how the server at {self.public_url} (model {self.model}) continues after the "
            f"template's answer prefix; mode {mode.value} needs options.chat_template (the model's GGUF or "
            "tokenizer_config.json: the completions endpoint with the chat template applied here) or "
            "options.continuation = \"continue\" (vLLM), \"prefill\" or \"unprefixed\"; or use mode generate")

    def _probability_way(self) -> str:
        """The way settled by check_mode; before it (a direct call), the configured endpoint as it is."""
        if self.scoring_way is not None:
            return self.scoring_way
        return "plain" if self.endpoint == "completions" else "unprefixed"

    def _probability_path(self) -> str:
        return "/completions" if self._probability_way() in ("template", "plain") else "/chat/completions"

    def _probability_payload(self, messages: Sequence[Message], answer_prefix: str, *, n_top: int,
                             max_tokens: int, seed: int) -> dict[str, Any]:
        way = self._probability_way()
        payload: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens, "temperature": 0.0, "seed": seed}
        if way == "template":
            assert self._template is not None
            payload.update(prompt=self._template.format(messages) + answer_prefix, logprobs=n_top)
        elif way == "plain":
            payload.update(prompt=completion_prompt(messages, answer_prefix), logprobs=n_top)
        else:
            chat = [m.to_dict() for m in messages]
            if way in ("continue", "prefill") and answer_prefix:
                chat.append({"role": "assistant", "content": answer_prefix})
                if way == "continue":
                    payload.update(continue_final_message=True, add_generation_prompt=False)
            payload.update(messages=chat, logprobs=True, top_logprobs=n_top)
        extra = self.config.extra.get("extra_body", {})
        if isinstance(extra, Mapping):
            payload.update(extra)
        return payload

    def _payload(self, messages: Sequence[Message], answer_prefix: str, *, probability: bool, n_top: int,
                 max_tokens: int, temperature: float, seed: int) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.model, "max_tokens": max_tokens,
                                   "temperature": temperature, "seed": seed}
        if self.endpoint == "chat":
            # Chat APIs cannot continue a started assistant turn, so the answer
            # prefix is not sent; an echo of it is skipped when reading the answer.
            payload["messages"] = [m.to_dict() for m in messages]
            if probability:
                payload.update(logprobs=True, top_logprobs=n_top)
        else:
            payload["prompt"] = completion_prompt(messages, answer_prefix if probability else "")
            if probability:
                payload["logprobs"] = n_top
        extra = self.config.extra.get("extra_body", {})
        if isinstance(extra, Mapping):
            payload.update(extra)
        return payload

    def _path(self) -> str:
        return "/chat/completions" if self.endpoint == "chat" else "/completions"

    async def _post(self, payload: dict[str, Any], read: Callable[[Any], _T], *, path: str | None = None) -> _T:
        if self._client is None or self._slots is None:
            raise BackendError(f"judge {self.name!r}: the client is not open (open() was not awaited)")
        async with self._slots:
            return await self._post_with_retries(payload, read, path or self._path())

    async def _post_with_retries(self, payload: dict[str, Any], read: Callable[[Any], _T], path: str) -> _T:
        """Send until ``read`` accepts an answer. Timeouts, resets, 429, 5xx and unreadable
        200 answers are retried with backoff; an answer without log-probabilities once;
        401/403/404 and other client errors never."""
        import httpx  # heavy to import: only when an API judge is used

        assert self._client is not None
        url = self.public_url + path  # for messages only
        attempts = self.config.max_retries + 1
        missing_logprobs = 0
        for attempt in range(attempts):
            last = attempt == attempts - 1
            wait: float | None = None
            try:
                client = self._clients[self._turn % len(self._clients)]
                self._turn += 1
                response = await client.post(path, json=payload)
                status = response.status_code
                if status < 400:
                    return read(_decode(response))
            except httpx.TimeoutException:
                problem, kind = f"{url} gave no answer within {self.config.timeout:g} s", FailureKind.TRANSIENT
            except httpx.ConnectError as exc:
                problem = f"cannot connect to {url} ({self._transport_reason(exc, 'connection refused')})"
                kind = FailureKind.CONNECTION
            except httpx.TransportError as exc:
                problem = f"the connection to {url} broke ({self._transport_reason(exc, 'connection reset')})"
                kind = FailureKind.TRANSIENT
            except _NoLogprobs as exc:
                missing_logprobs += 1
                if missing_logprobs > 1 or last:
                    raise _NoLogprobs(f"judge {self.name!r}: {url}: {exc}", FailureKind.MALFORMED) from None
                problem, kind = str(exc), FailureKind.MALFORMED
            except _BadAnswer as exc:
                problem, kind = f"{url}: {exc}", FailureKind.MALFORMED
            else:
                if status in (401, 403):
                    raise RequestFailed(self._status_message(response, url), FailureKind.AUTH)
                if status == 404:
                    raise RequestFailed(self._status_message(response, url), FailureKind.NOT_FOUND)
                if status not in RETRY_STATUSES:
                    raise RequestFailed(self._status_message(response, url), FailureKind.OTHER)
                problem, kind = self._status_message(response, url), FailureKind.TRANSIENT
                wait = _retry_after(response.headers.get("Retry-After"))
            if last:
                if not problem.startswith("judge "):
                    problem = f"judge {self.name!r}: {problem}"
                raise RequestFailed(f"{problem} (gave up after {attempts} attempts)", kind)
            if wait is None:
                ceiling = min(self._backoff_cap, self._backoff_base * 2**attempt)
                wait = ceiling * (0.5 + 0.5 * self._rng.random())
            await self._sleep(min(wait, self._max_retry_after))
        raise AssertionError("unreachable")

    def _transport_reason(self, exc: Exception, fallback: str) -> str:
        text = self._scrub(str(exc)).strip().splitlines()
        return text[-1][:200] if text and text[-1] else fallback

    def _scrub(self, text: str) -> str:
        """Server text may quote the key back; it never reaches a message."""
        key = self.config.api_key()
        return text.replace(key, "[api key]") if key else text

    def _status_message(self, response: httpx.Response, url: str) -> str:
        status = response.status_code
        where = f"judge {self.name!r}: {url} answered HTTP {status}"
        if status in (401, 403):
            # Servers quote (parts of) a rejected key in the body: say nothing from it.
            env = self.config.api_key_env
            hint = f"check the key in ${env}" if env else "this server needs an API key: set api_key_env"
            return f"{where} ({'unauthorized' if status == 401 else 'forbidden'}); {hint}"
        detail = " ".join(_error_detail(response).split())
        if status == 404:
            detail = f"{detail}; check base_url and the model name ({self.model})" if detail else \
                f"check base_url and the model name ({self.model})"
        return f"{where}: {self._scrub(detail)}" if detail else where

    def _read(self, body: Any, *, probability: bool, completions: bool | None = None) -> _Answer:
        """Every field of an answer checked: a malformed one raises _BadAnswer with a plain reason."""
        choice = _first_choice(body)
        chat = self.endpoint == "chat" if completions is None else not completions
        if chat:
            message = _optional(choice, "message", dict, "the message of the server's choice is not an object")
            content = _optional(message or {}, "content", str, "the message content is not text")
            text = content or ""
        else:
            text = _optional(choice, "text", str, "the text of the server's choice is not text") or ""
        positions: list[_Position] = []
        if probability:
            positions = self._positions(choice, chat=chat)
            if not positions or not any(p.top for p in positions):
                raise _NoLogprobs("the server's answer had no log-probabilities", FailureKind.MALFORMED)
        prompt_tokens, completion_tokens, cached = _usage(body)
        return _Answer(self._scrub(text), positions, prompt_tokens, completion_tokens, cached)

    def _positions(self, choice: Mapping[str, Any], *, chat: bool) -> list[_Position]:
        logprobs = _optional(choice, "logprobs", dict, "the log-probabilities are not an object") or {}
        if chat:
            out = []
            entries = _optional(logprobs, "content", list, "the log-probability content is not a list") or []
            for entry in entries:
                if not isinstance(entry, dict):
                    raise _BadAnswer("a log-probability entry is not an object")
                token = _optional(entry, "token", str, "a log-probability token is not text") or ""
                tops = _optional(entry, "top_logprobs", list, "top_logprobs is not a list") or []
                top = []
                for alternative in tops:
                    if not isinstance(alternative, dict) or not isinstance(alternative.get("token"), str):
                        raise _BadAnswer("a top log-probability has no token text")
                    top.append((alternative["token"], _logprob(alternative.get("logprob"), alternative["token"])))
                out.append(_Position(token, tuple(top)))
            return out
        tokens = _optional(logprobs, "tokens", list, "the log-probability tokens are not a list") or []
        tops = _optional(logprobs, "top_logprobs", list, "top_logprobs is not a list") or []
        positions = []
        for tok, top in zip(tokens, tops, strict=False):
            if not isinstance(tok, str):
                raise _BadAnswer("a log-probability token is not text")
            if top is not None and not isinstance(top, dict):
                raise _BadAnswer("an entry of top_logprobs is not an object")
            pairs = [(str(t), _logprob(lp, str(t))) for t, lp in (top or {}).items()]
            positions.append(_Position(tok, tuple(sorted(pairs, key=lambda e: -e[1]))))
        return positions


@dataclass(frozen=True)
class _Answer:
    """What one validated server answer says."""

    text: str
    positions: list[_Position]
    prompt_tokens: int
    completion_tokens: int
    cached_tokens: int


class _BadAnswer(RequestFailed):
    """A 200 answer that cannot be read; retried like a 5xx."""

    def __init__(self, message: str, kind: FailureKind = FailureKind.MALFORMED) -> None:
        super().__init__(message, kind)


class _NoLogprobs(RequestFailed):
    """An answer without log-probabilities: retried once, then the item fails (not the run)."""


#: Servers print log(1) as a tiny positive number now and then; more than this is no rounding.
LOGPROB_ROUNDING = 1e-6


def _logprob(value: Any, token: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise _BadAnswer(f"log-probability {_short(value)} for token {token!r} is not a number")
    number = float(value)
    if math.isnan(number) or math.isinf(number) and number > 0:
        raise _BadAnswer(f"log-probability {_short(value)} for token {token!r} is not a finite number")
    if number > LOGPROB_ROUNDING:
        raise _BadAnswer(f"log-probability {number:g} for token {token!r} is positive (a probability above 1)")
    return min(number, 0.0)


def _decode(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:  # also UnicodeDecodeError
        text = " ".join(response.text[:80].split())
        if not text:
            raise _BadAnswer("the server's answer was empty") from None
        if text[0] in "{[":
            raise _BadAnswer(f"the server's answer is cut short or broken JSON (it begins {text[:40]!r})") from None
        raise _BadAnswer(f"the server's answer is not JSON (it begins {text!r})") from None


def _first_choice(body: Any) -> Mapping[str, Any]:
    if not isinstance(body, dict):
        raise _BadAnswer("the server's answer is not a JSON object")
    choices = body.get("choices")
    if choices is None:
        raise _BadAnswer("the server's answer had no choices")
    if not isinstance(choices, list):
        raise _BadAnswer("the server's answer had choices that are not a list")
    if not choices:
        raise _BadAnswer("the server's answer had an empty list of choices")
    if not isinstance(choices[0], dict):
        raise _BadAnswer("the server's first choice is not an object")
    return choices[0]


def _optional(container: Mapping[str, Any], key: str, kind: type, reason: str) -> Any:
    value = container.get(key)
    if value is not None and not isinstance(value, kind):
        raise _BadAnswer(reason)
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def completion_prompt(messages: Sequence[Message], answer_prefix: str = "") -> str:
    """Plain text for the completions endpoint, where the server applies no chat template."""
    text = "\n\n".join(m.content for m in messages)
    return f"{text}\n\n{answer_prefix}" if answer_prefix else f"{text}\n\n"


def _prompt_tokens(body: Any) -> int:
    _first_choice(body)  # a malformed answer is retried like any other
    return _usage(body)[0]


def _read_answer(positions: Sequence[_Position], choices: Sequence[str], answer_prefix: str,
                 k: int) -> tuple[dict[str, float], list[tuple[str, float]], int]:
    """Choice log-probabilities and the K most likely first answer tokens (see the module doc).

    The answer position is a position preceded only by whitespace or by an echo of
    the answer prefix; the first such position where the generated text begins
    an answer wins, else the first one where any top token spells an answer.
    """
    prefix_key = normalize_answer(answer_prefix)
    readings: list[tuple[int, dict[str, float]]] = []
    written = ""
    for start, position in enumerate(positions):
        key = normalize_answer(written)
        if key == "" or (prefix_key and key == prefix_key):
            found: dict[str, list[float]] = {c: [] for c in choices}
            _walk(positions, start, "", 0.0, choices, found)
            logprobs = {c: logsumexp(v) for c, v in found.items()}
            if any(math.isfinite(v) for v in logprobs.values()):
                if _answer_begins(positions, start, choices):
                    return logprobs, _first_tokens(positions, start, k), start
                readings.append((start, logprobs))
        written += position.token
    if readings:
        start, logprobs = readings[0]
        return logprobs, _first_tokens(positions, start, k), start
    return {c: -math.inf for c in choices}, _first_tokens(positions, 0, k), 0


def _answer_begins(positions: Sequence[_Position], start: int, choices: Sequence[str]) -> bool:
    text = ""
    for position in positions[start:]:
        text += position.token
        if normalize_answer(text):
            return match_choice(text, choices) is not None or is_partial_answer(text, choices)
    return False


def _walk(positions: Sequence[_Position], index: int, text: str, logprob: float,
          choices: Sequence[str], found: dict[str, list[float]]) -> None:
    if index >= len(positions):
        return
    position = positions[index]
    for token, token_logprob in position.top:
        joined = text + token
        total = logprob + token_logprob
        choice = match_choice(joined, choices)
        goes_on = normalize_answer(joined) == "" or is_partial_answer(joined, choices)
        if goes_on and token == position.token:
            if choice is not None:
                # "1" that may go on to "10": it counts only where the model stops.
                following = positions[index + 1].top if index + 1 < len(positions) else ()
                longer = sum(math.exp(lp) for t, lp in following if _continues(joined, t, choice, choices))
                found[choice].append(total + math.log1p(-min(longer, 1.0 - 1e-12)))
            _walk(positions, index + 1, joined, total, choices, found)
        elif choice is not None:
            found[choice].append(total)


def _continues(text: str, token: str, choice: str, choices: Sequence[str]) -> bool:
    """Whether ``token`` after the complete answer ``text`` turns it into a longer answer."""
    longer = text + token
    if normalize_answer(longer) == normalize_answer(text):
        return False
    return is_partial_answer(longer, choices) or match_choice(longer, choices) not in (None, choice)


def _first_tokens(positions: Sequence[_Position], start: int, k: int) -> list[tuple[str, float]]:
    """The top tokens at the answer position, a bare space joined to the tokens after it."""
    position = positions[start]
    top = list(position.top)
    if (position.token and not position.token.strip() and start + 1 < len(positions)
            and any(t == position.token for t, _ in top)):
        space_logprob = next(lp for t, lp in top if t == position.token)
        joined = [(position.token + t, space_logprob + lp) for t, lp in positions[start + 1].top]
        top = [(t, lp) for t, lp in top if t != position.token] + joined
    return sorted(top, key=lambda e: -e[1])[:k]


def _usage(body: Mapping[str, Any]) -> tuple[int, int, int]:
    """Token counts; a server that reports them oddly is not worth failing an item for."""
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    details = usage.get("prompt_tokens_details")
    details = details if isinstance(details, dict) else {}
    return (_count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens")),
            _count(details.get("cached_tokens")))


def _count(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return 0
    return max(int(value), 0)


def _retry_after(value: str | None) -> float | None:
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _error_detail(response: httpx.Response) -> str:
    try:
        body = response.json()
    except ValueError:
        return response.text.strip()[:300]
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])[:300]
        if isinstance(error, str):
            return error[:300]
        if body.get("detail"):
            return str(body["detail"])[:300]
    return str(body)[:300]


def _key_from_environment(config: JudgeConfig, judge: str) -> httpx.Auth:
    """Adds the bearer key to each request, read from the environment just then,
    so that neither the backend nor its HTTP client keeps a copy."""
    import httpx  # heavy to import: only when an API judge is used

    class KeyFromEnvironment(httpx.Auth):
        def auth_flow(self, request: httpx.Request) -> Any:
            key = config.api_key()
            if not key:
                raise BackendError(f"judge {judge!r}: the environment variable {config.api_key_env} "
                                   "(api_key_env) is no longer set")
            request.headers["Authorization"] = f"Bearer {key}"
            yield request

    return KeyFromEnvironment()


register_backend(BackendKind(name="openai", create=OpenAIBackend, required_keys=("base_url", "model"),
                             paid_per_token=True))
