"""A minimal OpenAI-compatible chat server for the API figure: python -m bench.api_stub --delay 0.2

Answers every POST .../chat/completions after a fixed delay with a fixed score
("The score is 0.7."), keeps connections alive (HTTP/1.1), and answers a given
share of requests with 429 and ``Retry-After: 0.2`` instead. It prints its port
on the first line of stdout, then serves until killed. Runs in its own process,
so that the client's event loop and the server's do not share one core's time
in one interpreter. Standard library only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys

ANSWER = json.dumps({
    "id": "stub", "object": "chat.completion", "model": "stub",
    "choices": [{"index": 0, "message": {"role": "assistant", "content": "The score is 0.7."},
                 "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 200, "completion_tokens": 6, "total_tokens": 206},
}).encode()
TOO_MANY = b'{"error": {"message": "rate limited (stub)"}}'


class Stub:
    def __init__(self, delay: float, rate_429: float, seed: int) -> None:
        self.delay = delay
        self.rate_429 = rate_429
        self.rng = random.Random(seed)
        self.requests = 0
        self.refused = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value.strip())
                if length:
                    await reader.readexactly(length)
                self.requests += 1
                if self.rng.random() < self.rate_429:
                    self.refused += 1
                    writer.write(self._response(429, TOO_MANY, b"Retry-After: 0.2\r\n"))
                else:
                    await asyncio.sleep(self.delay)
                    writer.write(self._response(200, ANSWER))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    @staticmethod
    def _response(status: int, body: bytes, extra: bytes = b"") -> bytes:
        reason = b"OK" if status == 200 else b"Too Many Requests"
        return (b"HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n%s"
                b"Connection: keep-alive\r\n\r\n" % (status, reason, len(body), extra)) + body


async def serve(delay: float, rate_429: float, seed: int) -> None:
    stub = Stub(delay, rate_429, seed)
    server = await asyncio.start_server(stub.handle, "127.0.0.1", 0, backlog=1024)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--delay", type=float, default=0.2, help="seconds before each answer")
    parser.add_argument("--rate-429", type=float, default=0.0, help="share of requests answered 429")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    try:
        asyncio.run(serve(args.delay, args.rate_429, args.seed))
    except KeyboardInterrupt:
        sys.exit(0)


if __name__ == "__main__":
    main()
