"""An OpenAI-compatible model API for the LLM and Embedding tests: real HTTP on a free loopback port
(tests/http_server.py), answering the shapes SeaTunnel's providers read.

* ``/v1/chat/completions`` (and ``/openai/deployments/<model>/chat/completions``, Azure's): the user
  message is a JSON array of rows; the answer's content is a JSON array with, per row, ``Chinese`` when
  its ``name`` has a space, else ``American`` (a prompt asking for BOOLEAN gets ``True``/``False``, a
  prompt asking for INT the name's length);
* ``/v1/embeddings``: ``input`` a string or a list; each text's vector is
  ``[len(text), number of spaces, 1.5]``;
* ``/v1/qianfan/token`` and ``/v1/qianfan/embedding/<model>``: Baidu's OAuth and embeddings;
* ``/flaky/...``: the same, after ``failures`` answers of ``status`` (429 or 503) per key;
* every request needs ``Authorization: Bearer <KEY>`` (else 401), except QIANFAN's, which carry
  the OAuth token.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from typing import Any

KEY = "sk-test-0123456789abcdef"
TOKEN = "qianfan-token-42"


def label(row: dict[str, Any], prompt: str) -> Any:
    name = str(row.get("name", ""))
    if "BOOLEAN" in prompt:
        return "True" if " " in name else "False"
    if "INT" in prompt:
        return str(len(name))
    return "Chinese" if " " in name else "American"


def vector(text: str) -> list[float]:
    return [float(len(text)), float(text.count(" ")), 1.5]


def _authorized(seen: Any) -> bool:
    return seen.header("Authorization") == f"Bearer {KEY}"


def chat(seen: Any) -> tuple:
    if not _authorized(seen):
        return 401, {"error": {"message": "Incorrect API key provided"}}
    body = json.loads(seen.body)
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    rows = json.loads(user)
    content = json.dumps([label(r, system) for r in rows])
    return 200, {"id": "chatcmpl-1", "object": "chat.completion", "model": body.get("model"),
                 "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                              "finish_reason": "stop"}]}


def embeddings(seen: Any) -> tuple:
    if not _authorized(seen):
        return 401, {"error": {"message": "Incorrect API key provided"}}
    body = json.loads(seen.body)
    inputs = body.get("input", body.get("inputx"))
    texts = [inputs] if isinstance(inputs, str) else list(inputs)
    return 200, {"object": "list", "model": body.get("model", body.get("modelx")),
                 "data": [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)]}


def qianfan_token(seen: Any) -> tuple:
    if seen.query.get("client_id") != KEY or seen.query.get("client_secret") != "qf-secret":
        return 401, {"error": "invalid_client"}
    return 200, {"access_token": TOKEN, "expires_in": 2592000}


def qianfan_embedding(seen: Any) -> tuple:
    if seen.query.get("access_token") != TOKEN:
        return 200, {"error_code": 110, "error_msg": "Access token invalid or no longer valid"}
    texts = json.loads(seen.body)["input"]
    return 200, {"data": [{"object": "embedding", "index": i, "embedding": vector(t)} for i, t in enumerate(texts)]}


class Flaky:
    """Answers ``status`` to the first ``failures`` requests of each row (keyed by body), then as ``inner``."""

    def __init__(self, inner: Any, failures: int, status: int = 503, retry_after: str | None = None):
        self.inner, self.failures, self.status, self.retry_after = inner, failures, status, retry_after
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()

    def __call__(self, seen: Any) -> tuple:
        with self.lock:
            n = self.counts[seen.body] = self.counts.get(seen.body, 0) + 1
        if n <= self.failures:
            headers = {"Retry-After": self.retry_after} if self.retry_after else {}
            return self.status, {"error": {"message": "try again"}}, headers
        return self.inner(seen)


def slow(seconds: float) -> Any:
    def handler(seen: Any) -> tuple:
        time.sleep(seconds)
        return chat(seen)
    return handler


def install(server: Any) -> None:
    """The routes above on ``server`` (a tests.http_server server)."""
    server.route("/v1/chat/completions", chat)
    server.route("/openai/deployments/gpt-35-turbo/chat/completions", chat)
    server.route("/v1/embeddings", embeddings)
    server.route("/v1/qianfan/token", qianfan_token)
    server.route("/v1/qianfan/embedding/bge_large_en", qianfan_embedding)


@contextlib.contextmanager
def running() -> Iterator[Any]:
    from tests import http_server

    with http_server.running() as server:
        install(server)
        yield server
