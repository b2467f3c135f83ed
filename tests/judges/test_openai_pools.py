"""Many requests in flight are spread over small connection pools (httpcore's pool cost grows with its size)."""

from __future__ import annotations

import httpx

from dialjudge.core.config import JudgeConfig
from dialjudge.core.judges.backends.openai_api import REQUESTS_PER_CLIENT, OpenAIBackend
from dialjudge.core.judges.types import Message


async def test_clients_cover_the_concurrency_in_small_pools() -> None:
    backend = OpenAIBackend(JudgeConfig(name="api", backend="openai", base_url="http://127.0.0.1:9/v1",
                                        model="m", concurrency=10))
    await backend.open()
    try:
        assert len(backend._clients) == -(-10 // REQUESTS_PER_CLIENT) == 3
    finally:
        await backend.close()
    assert backend._clients == [] and backend._client is None


class CountingClient:
    """Stands in for one httpx client: notes its number, then posts through the real one."""

    def __init__(self, number: int, client: httpx.AsyncClient, seen: list[int]) -> None:
        self.number, self.client, self.seen = number, client, seen

    async def post(self, *args: object, **kwargs: object) -> httpx.Response:
        self.seen.append(self.number)
        return await self.client.post(*args, **kwargs)


async def test_requests_take_the_clients_in_turn() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"choices": [{"message": {"content": "The score is 1."}}]})

    backend = OpenAIBackend(JudgeConfig(name="api", backend="openai", base_url="http://stub/v1", model="m",
                                        concurrency=8), transport=httpx.MockTransport(answer))
    await backend.open()
    (real,) = backend._clients  # an injected transport is one pool: one client
    seen: list[int] = []
    backend._clients = [CountingClient(i, real, seen) for i in range(3)]
    try:
        for _ in range(5):
            await backend._post(backend._payload((Message("user", "hi"),), "", probability=False, n_top=0,
                                                 max_tokens=4, temperature=0.0, seed=0), lambda body: body)
    finally:
        backend._clients = [real]
        await backend.close()
    assert seen == [0, 1, 2, 0, 1]
