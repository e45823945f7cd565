"""The LLM and Embedding transforms: each row sent to a model's HTTP API, the answers as new columns.

SeaTunnel 2.3.8's options, defaults and rules (:mod:`.options`), its request and response shapes per
provider (OPENAI, DOUBAO, KIMIAI, MICROSOFT, QIANFAN, CUSTOM) and its retries-free sending made bounded
(:mod:`.client`). The calls run in Spark's Python workers (``mapInArrow``, :mod:`.worker`), one client
per partition, so a transform's requests go out at its parallelism. The API key comes from the block
(``api_key``, a ``${...}`` variable) or an Airflow connection (``model_conn_id``); it is a secret: never
in a plan shown, a task id, a log or a message. The user's docs: docs/models.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from ...spi import TRANSFORM, Capabilities, ConnectionInfo, Connector, FromConnection, SchemaInference, Transform
from ...spi.options import JobConfig, OptionError, PluginConfig, Problem
from ...spi.optionspec import OptionSpec
from ...spi.schema import Schema
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


class ModelTransform(Connector, Transform, SchemaInference, FromModelConnection):
    """What the two model transforms share: their options checked by ``option_spec`` and the
    transform's own :meth:`rules` (with the input's field names when they are known), and the output
    schema: the input's fields and what :meth:`output` adds."""

    capabilities = Capabilities(sections=frozenset({TRANSFORM}))
    option_spec: ClassVar[OptionSpec]

    @staticmethod
    def rules(o: Mapping[str, Any], names: Sequence[str] | None) -> None:
        """Raise :class:`OptionError` where ``o`` breaks the transform's rules (``names``: the input's fields)."""

    def output(self, o: Mapping[str, Any], source: Schema) -> Schema:
        """The output schema: ``source`` with the transform's new fields."""
        raise NotImplementedError

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        o = self.option_spec.valid(plugin.options, TRANSFORM)
        if o is None:
            return []
        try:
            self.rules(o, None)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        return []

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        source, o = inputs[0] if inputs else None, self.option_spec.valid(plugin.options, TRANSFORM)
        if source is None or o is None:
            return None, []
        try:
            self.rules(o, source.names)
        except OptionError as e:
            return None, [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        return self.output(o, source), []
