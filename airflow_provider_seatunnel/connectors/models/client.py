"""Sending a model request (``requests``; runs in Spark's Python workers), SeaTunnel 2.3.8's request and
response shapes per provider, and how a failure is classified.

Sending: a POST with a JSON body, timeouts of :data:`CONNECT_TIMEOUT` and :data:`READ_TIMEOUT` seconds
(SeaTunnel's 20 s; its CUSTOM provider waits for ever, here it does not), on one keep-alive session per
worker. A connection failure, a timeout and the answers 408, 429 and 5xx are retried, up to
:data:`ATTEMPTS` attempts in all, after a pause doubling from :data:`BACKOFF` seconds (or the answer's
``Retry-After``, at most :data:`MAX_PAUSE`), then fail as a transient :class:`PipelineError` (Airflow
retries the task). Any other answer but 200 fails at once as the deterministic
:class:`RuntimeConfigError` (401 a wrong key, 400 a refused body: a retry meets the same answer); an
answer that does not have the provider's shape, or holds a value that does not convert, as the
deterministic :class:`DataError`. SeaTunnel itself retries nothing: any answer but 200 fails its task.
Messages name the transform and the URL without its query string (a QIANFAN access token travels
there), never the key, and quote at most :data:`SNIPPET` characters of the answer.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

from ...spi.errors import DataError, PipelineError, RuntimeConfigError
from .options import Endpoint

CONNECT_TIMEOUT = 20.0
READ_TIMEOUT = 20.0
ATTEMPTS = 4
BACKOFF = 0.25
MAX_PAUSE = 10.0
SNIPPET = 300
#: the largest answer read (a larger one fails the request as a data error instead of filling the worker's memory)
MAX_ANSWER_BYTES = 64 * 1024 * 1024
#: answers retried (besides 5xx)
RETRY_STATUSES = (408, 429)


def safe_url(url: str) -> str:
    """``url`` without its query string and credentials (for messages)."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc.rsplit("@", 1)[-1], parts.path, "", ""))


class Client:
    """One worker's connection to a model endpoint: ``post`` sends with the retries above.

    ``sleep`` is the pause function (tests count pauses instead of waiting)."""

    def __init__(self, plugin: str, endpoint: Endpoint, sleep: Callable[[float], None] = time.sleep):
        import requests

        self.plugin, self.endpoint, self.sleep = plugin, endpoint, sleep
        self.session = requests.Session()
        self.session.trust_env = False  # no proxy from the environment: the key goes only where api_path says
        self.requests = 0
        self._token: str | None = None

    def close(self) -> None:
        self.session.close()

    def post(self, url: str, body: Any, headers: Mapping[str, str]) -> Any:
        """The JSON of a 200 answer to a POST of ``body``; raises as the module says."""
        return self._send("POST", url, headers, json.dumps(body, ensure_ascii=False).encode("utf-8"))

    def get(self, url: str) -> Any:
        return self._send("GET", url, {}, None)

    def _send(self, method: str, url: str, headers: Mapping[str, str], data: bytes | None) -> Any:
        import requests

        where = f"{self.plugin}: {method} {safe_url(url)}"
        last = ""
        for attempt in range(1, ATTEMPTS + 1):
            self.requests += 1
            pause = BACKOFF * 2 ** (attempt - 1)
            try:
                answer = self.session.request(method, url, data=data, headers=dict(headers), stream=True,
                                              timeout=(CONNECT_TIMEOUT, READ_TIMEOUT), allow_redirects=False)
                payload = _bounded(answer, where)
            except requests.Timeout:
                last = f"no answer within {READ_TIMEOUT:g} s"
            except requests.RequestException as e:
                last = f"cannot connect ({type(e).__name__})"
            else:
                body = payload.decode("utf-8", errors="replace")
                if answer.status_code == 200:
                    try:
                        return json.loads(body)
                    except ValueError:
                        raise DataError(f"{where} answered 200 with no JSON: {_snippet(body)}") from None
                text = f"answered {answer.status_code}: {_snippet(body)}"
                if answer.status_code not in RETRY_STATUSES and answer.status_code < 500:
                    raise RuntimeConfigError(f"{where} {text}{_hint(answer.status_code)}")
                last = text
                pause = max(pause, _retry_after(answer.headers.get("Retry-After")))
            if attempt < ATTEMPTS:
                self.sleep(min(pause, MAX_PAUSE))
        raise PipelineError(f"{where} failed {ATTEMPTS} times; last: {last}")

    # -- SeaTunnel's shapes ------------------------------------------------------------------------

    def chat(self, prompt: str, rows_json: str, lower: bool = False) -> list[str]:
        """The LLM's answer to one request (``rows_json``: a JSON array of rows), as SeaTunnel reads it: the
        first choice's content (lower-cased with ``lower``: a BOOLEAN output) parsed as a JSON array of
        strings (CUSTOM: the values ``custom_response_parse`` selects, as they are)."""
        e = self.endpoint
        if e.provider == "CUSTOM":
            body = substitute(e.body, {"model": e.model, "input": rows_json, "prompt": prompt})
            return [_text(v) for v in self._selected(self.post(e.url, body, dict(e.headers)))]
        messages = [{"role": "system", "content": prompt}, {"role": "user", "content": rows_json}]
        body = {"messages": messages} if e.provider == "MICROSOFT" else {"model": e.model, "messages": messages}
        answer = self.post(e.url, body, self._bearer())
        try:
            content = answer["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise DataError(f"{self.plugin}: the answer has no choices[0].message.content: "
                            f"{_snippet(json.dumps(answer))}") from None
        content = str(content).lower() if lower else str(content)
        return [_text(v) for v in _json_array(self.plugin, content)]

    def vectors(self, inputs: Sequence[Any]) -> list[list[float]]:
        """The embeddings of one request's ``inputs`` (the values of one row's fields, at most
        ``single_vectorized_input_number``)."""
        e = self.endpoint
        if e.provider == "CUSTOM":
            answer = self.post(e.url, custom_embedding_body(e.body, e.model, inputs), dict(e.headers))
            return [_floats(self.plugin, v) for v in self._selected(answer)]
        if e.provider == "QIANFAN":
            url = f"{e.url.rstrip('/')}/{e.model}?{urlencode({'access_token': self._access_token()})}"
            answer = self.post(url, {"input": list(inputs)}, {"Content-Type": "application/json"})
            if isinstance(answer, Mapping) and answer.get("error_code") is not None:
                if answer.get("error_code") == 110:  # an expired token: the next request takes a new one
                    self._token = None
                raise PipelineError(f"{self.plugin}: QIANFAN answered error {answer.get('error_code')}: "
                                    f"{_snippet(str(answer.get('error_msg')))}")
        elif e.provider == "OPENAI":
            if len(inputs) > 1:
                raise RuntimeConfigError(f"{self.plugin}: OpenAI model only supports single input "
                                         "(set single_vectorized_input_number = 1)")
            answer = self.post(e.url, {"model": e.model, "input": str(inputs[0])}, self._bearer())
        else:
            answer = self.post(e.url, {"model": e.model, "input": list(inputs)}, self._bearer())
        data = answer.get("data") if isinstance(answer, Mapping) else None
        if not isinstance(data, list):
            return []
        return [_floats(self.plugin, item.get("embedding") if isinstance(item, Mapping) else None) for item in data]

    def _bearer(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.endpoint.api_key}", "Content-Type": "application/json"}

    def _access_token(self) -> str:
        if self._token is None:
            e = self.endpoint
            query = urlencode({"grant_type": "client_credentials", "client_id": e.api_key or "",
                               "client_secret": e.secret_key or ""})
            answer = self.get(f"{e.oauth_path}?{query}")
            token = answer.get("access_token") if isinstance(answer, Mapping) else None
            if not isinstance(token, str):
                raise RuntimeConfigError(f"{self.plugin}: the OAuth answer of {safe_url(e.oauth_path or '')} "
                                         "has no access_token")
            self._token = token
        return self._token

    def _selected(self, answer: Any) -> list[Any]:
        from .jsonpath import select

        try:
            found = select(answer, self.endpoint.parse or "$")
        except ValueError as e:
            raise RuntimeConfigError(f"{self.plugin}: custom_response_parse: {e}") from None
        if not isinstance(found, list):
            raise DataError(f"{self.plugin}: custom_response_parse {self.endpoint.parse} selects "
                            f"{_snippet(json.dumps(found))}, not a list")
        return found


_PLACEHOLDER = "\\$\\{{{}(:[^}}]*)?\\}}"


def substitute(node: Any, values: Mapping[str, str]) -> Any:
    """``node`` (a request body) with ``${name}`` / ``${name:default}`` of ``values`` replaced in every
    string at any depth (an empty value takes the default), as SeaTunnel's CUSTOM LLM does; in one pass, so
    a row's text that reads like a placeholder is sent as it is."""
    if isinstance(node, Mapping):
        return {k: substitute(v, values) for k, v in node.items()}
    if isinstance(node, list):
        return [substitute(v, values) for v in node]
    if isinstance(node, str) and values:
        pattern = "\\$\\{(?P<name>" + "|".join(re.escape(n) for n in values) + ")(?P<default>:[^}]*)?\\}"

        def repl(m: re.Match) -> str:
            value, default = values[m.group("name")], m.group("default")
            if value:
                return value
            return default[1:].strip() if default else m.group(0)

        return re.sub(pattern, repl, node)
    return node


def custom_embedding_body(body: Any, model: str, inputs: Sequence[Any]) -> Any:
    """SeaTunnel's CUSTOM embedding body: of its top-level members, a string naming ``${model}`` gets the
    model, else one naming ``${input}`` the first input; an array becomes the inputs; the rest stays."""
    out: dict[str, Any] = {}
    for key, value in (body or {}).items():
        if isinstance(value, str) and re.search(_PLACEHOLDER.format("model"), value):
            value = substitute(value, {"model": model})
        elif isinstance(value, str) and re.search(_PLACEHOLDER.format("input"), value):
            value = substitute(value, {"input": str(inputs[0])})
        elif isinstance(value, list):
            value = list(inputs)
        out[key] = value
    return out


def _bounded(answer: Any, where: str) -> bytes:
    """The answer's body, at most :data:`MAX_ANSWER_BYTES` (else a DataError); the connection released."""
    chunks, size = [], 0
    try:
        for chunk in answer.iter_content(chunk_size=65536):
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise DataError(f"{where} answered more than {MAX_ANSWER_BYTES // (1024 * 1024)} MiB")
            chunks.append(chunk)
    finally:
        answer.close()
    return b"".join(chunks)


def _json_array(plugin: str, content: str) -> list[Any]:
    try:
        values = json.loads(content)
    except ValueError:
        raise DataError(f"{plugin}: the model's answer is not a JSON array: {_snippet(content)}") from None
    if not isinstance(values, list):
        raise DataError(f"{plugin}: the model's answer is not a JSON array: {_snippet(content)}")
    return values


def _text(value: Any) -> str:
    """A value as Jackson converts it to a Java String (null stays None)."""
    if value is None or isinstance(value, str):
        return value  # type: ignore[return-value]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def _floats(plugin: str, value: Any) -> list[float]:
    if not isinstance(value, list) or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
        raise DataError(f"{plugin}: an embedding is not an array of numbers: {_snippet(json.dumps(value))}")
    return [float(x) for x in value]


def _retry_after(value: str | None) -> float:
    try:
        return max(0.0, float(value)) if value else 0.0
    except ValueError:
        return 0.0


def _hint(status: int) -> str:
    return {401: " (check api_key)", 403: " (check api_key and the model's access)",
            404: " (check api_path and model)"}.get(status, "")


def _snippet(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= SNIPPET else text[:SNIPPET] + "..."
