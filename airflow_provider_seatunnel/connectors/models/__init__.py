"""The LLM and Embedding transforms: each row sent to a model's HTTP API, the answers as new columns.

SeaTunnel 2.3.8's options, defaults and rules (:mod:`.options`), its request and response shapes per
provider (OPENAI, DOUBAO, KIMIAI, MICROSOFT, QIANFAN, CUSTOM) and its retries-free sending made bounded
(:mod:`.client`). The calls run in Spark's Python workers (``mapInArrow``, :mod:`.worker`), one client
per partition, so a transform's requests go out at its parallelism. The API key comes from the block
(``api_key``, a ``${...}`` variable) or an Airflow connection (``model_conn_id``); it is a secret: never
in a plan shown, a task id, a log or a message. The user's docs: docs/models.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import ConnectionInfo, FromConnection
from .options import AUTH_HEADERS, CONN_OPTION, connection_options


class FromModelConnection(FromConnection):
    """``model_conn_id``: the password gives ``api_key``; the extra ``api_path``, ``secret_key``, ``oauth_path``."""

    connection_option = CONN_OPTION
    #: the credential-bearing headers of ``custom_config.custom_request_headers``
    secret_headers = AUTH_HEADERS

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        return connection_options(conn.password, conn.extra or {})

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return False
