"""A small batch engine for tests: posts each request line of a batch file to an OpenAI-compatible server
and writes the answer lines in the OpenAI Batch API's output format (as vLLM's run-batch does)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx


def replay(requests: Path, base_url: str, out: Path, *, timeout_s: float = 120.0) -> int:
    """Answer every line of ``requests`` through ``base_url`` (…/v1) into ``out``; returns the line count."""
    root = base_url[:-3] if base_url.endswith("/v1") else base_url
    lines = [json.loads(line) for line in requests.read_text(encoding="utf-8").splitlines() if line.strip()]
    with httpx.Client(timeout=timeout_s) as client, out.open("w", encoding="utf-8") as handle:
        for n, request in enumerate(lines):
            response = client.request(request["method"], root + request["url"], json=request["body"])
            record = {"id": f"batch_req_{n}", "custom_id": request["custom_id"],
                      "response": {"status_code": response.status_code, "request_id": f"req_{n}",
                                   "body": response.json()},
                      "error": None}
            handle.write(json.dumps(record) + "\n")
    return len(lines)
