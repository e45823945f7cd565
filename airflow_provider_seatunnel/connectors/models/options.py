"""The options the LLM and Embedding transforms share and their own, as SeaTunnel 2.3.8 declares them,
with the endpoints of each model provider and the Airflow connection that may give the credentials."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...spi.options import OptionError
from ...spi.optionspec import Option

#: an Airflow connection giving the API key (password) and, in its extra, ``api_path``, ``secret_key`` and
#: ``oauth_path``; options the block sets win
CONN_OPTION = "model_conn_id"

#: SeaTunnel's providers, each with its default chat-completions and embeddings endpoints ("": none)
PROVIDERS: dict[str, tuple[str, str]] = {
    "OPENAI": ("https://api.openai.com/v1/chat/completions", "https://api.openai.com/v1/embeddings"),
    "DOUBAO": ("https://ark.cn-beijing.volces.com/api/v3/chat/completions",
               "https://ark.cn-beijing.volces.com/api/v3/embeddings"),
    "QIANFAN": ("", "https://aip.baidubce.com/rpc/2.0/ai_custom/v1/wenxinworkshop/embeddings"),
    "KIMIAI": ("https://api.moonshot.cn/v1/chat/completions", ""),
    "MICROSOFT": ("", ""),
    "CUSTOM": ("", ""),
    "LOCAL": ("", ""),
}
#: the providers each transform runs (SeaTunnel 2.3.8 refuses the others when its task opens)
LLM_PROVIDERS = ("OPENAI", "DOUBAO", "KIMIAI", "MICROSOFT", "CUSTOM")
EMBEDDING_PROVIDERS = ("OPENAI", "DOUBAO", "QIANFAN", "CUSTOM")
#: the keys of ``custom_config``
CUSTOM_KEYS = ("custom_response_parse", "custom_request_headers", "custom_request_body")
#: header names whose values are credentials (``custom_request_headers``), hidden wherever options are shown
AUTH_HEADERS = frozenset({"authorization", "proxy-authorization", "api-key", "x-api-key", "apikey", "cookie"})


def common_options(key_providers: tuple[str, ...]) -> tuple[Option, ...]:
    """The options both transforms declare; ``api_key`` is required for ``key_providers`` (unless a
    connection gives it)."""
    return (
        Option("model_provider", "enum", required=True, choices=tuple(PROVIDERS),
               description="The model provider: OPENAI, DOUBAO, QIANFAN, KIMIAI, MICROSOFT, CUSTOM (LOCAL is "
               "refused, as by SeaTunnel)."),
        Option("model", required=True, allow_blank=False, description="The model's name, e.g. `gpt-4o-mini`."),
        Option("api_key", required_if=(("model_provider", key_providers),), required_unless=(CONN_OPTION,),
               secret=True, description="The API key, sent as `Authorization: Bearer <key>` (QIANFAN: the OAuth "
               "client id); or the password of the connection `model_conn_id`."),
        Option("secret_key", secret=True, description="QIANFAN: the OAuth client secret."),
        Option("api_path", fallback=("openai.api_path",), description="The endpoint's URL; default: the "
               "provider's (MICROSOFT: `${model}` in it is replaced by `model`)."),
        Option("oauth_path", description="QIANFAN: the OAuth token endpoint."),
        Option("process_batch_size", "int", 100, fallback=("inference_batch_size",), minimum=1,
               description="Rows a Python worker takes from Spark at a time (requests are sent as SeaTunnel "
               "sends them, see the docs)."),
        Option("custom_config", "map", required_if=(("model_provider", ("CUSTOM",)),),
               description="CUSTOM: `custom_request_headers`, `custom_request_body` (with `${model}`, "
               "`${input}`, `${prompt}`) and `custom_response_parse` (a JSONPath)."),
        Option(CONN_OPTION, description="An Airflow connection: its password is `api_key`; its extra may "
               "give `api_path`, `secret_key` and `oauth_path`."),
    )


@dataclass(frozen=True)
class Endpoint:
    """Where and how one transform block sends its requests (typed from its options)."""

    provider: str
    model: str
    url: str
    api_key: str | None = None
    secret_key: str | None = None
    oauth_path: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    body: Any = None
    parse: str | None = None

    def to_json(self) -> dict[str, Any]:
        """What a Python worker is handed (plain values)."""
        return {"provider": self.provider, "model": self.model, "url": self.url, "api_key": self.api_key,
                "secret_key": self.secret_key, "oauth_path": self.oauth_path, "headers": list(self.headers),
                "body": self.body, "parse": self.parse}

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Endpoint:
        return Endpoint(**{**data, "headers": tuple(tuple(h) for h in data.get("headers") or ())})


def endpoint(o: Mapping[str, Any], llm: bool) -> Endpoint:
    """The endpoint of parsed options ``o`` (LLM's when ``llm``, else Embedding's); raises OptionError."""
    provider = str(o["model_provider"]).upper()
    chat, embed = PROVIDERS[provider]
    url = o["api_path"] or (chat if llm else embed)
    if provider == "MICROSOFT" and url:
        url = url.replace("${model}", str(o["model"]))
    if not url:
        raise OptionError("api_path", f"model_provider {provider} has no default endpoint: set api_path")
    custom = o["custom_config"] or {}
    if provider == "CUSTOM":
        for key in CUSTOM_KEYS:
            if custom.get(key) is None:
                raise OptionError("custom_config", f"custom_config.{key} is required with model_provider CUSTOM")
        if not isinstance(custom["custom_request_headers"], Mapping):
            raise OptionError("custom_config", "custom_config.custom_request_headers must be an object of headers")
        if not isinstance(custom["custom_request_body"], Mapping):
            raise OptionError("custom_config", "custom_config.custom_request_body must be an object")
    if provider == "QIANFAN":
        for key in ("secret_key", "oauth_path"):
            if not o[key]:
                raise OptionError(key, f"{key} is required with model_provider QIANFAN")
    headers = tuple((str(k), str(v)) for k, v in (custom.get("custom_request_headers") or {}).items())
    return Endpoint(provider, str(o["model"]), str(url), o["api_key"], o["secret_key"], o["oauth_path"], headers,
                    custom.get("custom_request_body"), custom.get("custom_response_parse"))


def connection_options(password: str | None, extra: Mapping[str, Any]) -> dict[str, Any]:
    """The options an Airflow connection gives a block: ``api_key`` from its password, ``api_path``,
    ``secret_key`` and ``oauth_path`` from its extra."""
    out: dict[str, Any] = {}
    if password:
        out["api_key"] = password
    for key in ("api_path", "secret_key", "oauth_path"):
        if isinstance(extra.get(key), str) and extra[key]:
            out[key] = extra[key]
    return out
