"""The connector of a file store with S3File's source and sink (:mod:`.storesource`,
:mod:`.storesink`, :mod:`.storecommits`), run with the store's :class:`.s3options.Dialect`:
:class:`OnStoreFile` (the file servers, HdfsFile) and :class:`S3Compatible` (S3File and the
object stores with an S3 API: OssFile, CosFile, ObsFile), whose plugins subclass it with their
own dialect and option names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from ...spi import (
    SINK,
    SOURCE,
    UNRENDERED,
    BatchSource,
    Capabilities,
    Connector,
    Dataset,
    FromConnection,
    Lineage,
    NeedsJars,
    RunContext,
    SaveModes,
    SchemaInference,
    TableLineage,
    Unnamed,
    Vertex,
)
from ...spi.contract import ConnectionInfo
from . import checks as file_checks
from . import s3checks
from .optionspec import S3_SPEC
from .s3options import CONN_OPTION, S3, Dialect, s3a_jars
from .storesink import StoreSinkVerbs

__all__ = ["OnStoreFile", "S3Compatible"]


def _asset(block: Mapping[str, Any]) -> str | Unnamed | None:
    from .options import written
    from .s3options import bucket_name, key_prefix

    bucket, path = written(block, "bucket"), written(block, "path")
    if bucket is None or path is None:
        return None
    text = f"{bucket}{path}"
    if UNRENDERED.search(text):
        return Unnamed(f"path {text!r}")
    try:
        return f"s3://{bucket_name(bucket)}/{key_prefix(path)}"
    except Exception:
        return None


class OnStoreFile(StoreSinkVerbs):
    """The source and sink of a plugin on S3File's code, run with its :attr:`dialect` (a class
    attribute or a property): S3File, the object stores, the file servers, HdfsFile. Its sink is
    :class:`.storesink.StoreSinkVerbs`, run by the engine."""

    dialect: ClassVar[Dialect]

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        raise NotImplementedError

    def table_assets(self, options: Mapping[str, Any], table: str) -> list[str | Unnamed]:
        from .placeholders import table_config

        return self.assets(table_config(options, table))

    def save_mode(self, run_id: str, vertex: Vertex) -> list[str] | None:
        from .storesink import save_mode

        return save_mode(run_id, vertex, self.dialect)

    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        from .storesource import read

        return read(ctx, vertex, self.dialect)


class S3Compatible(OnStoreFile, Connector, SchemaInference, Lineage, TableLineage, SaveModes, BatchSource,
             NeedsJars, FromConnection):
    name = "S3File"
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, inserts_only=True)
    option_spec = S3_SPEC
    connection_option = CONN_OPTION
    description = "Reads or writes text, csv, json, parquet and orc objects in an S3 bucket."
    #: how the plugin's blocks read as S3 settings (the source and sink take it)
    dialect: ClassVar[Dialect] = S3

    check = staticmethod(s3checks.check)
    schema = staticmethod(file_checks.schema)

    def jars(self, options: Mapping[str, Any], env: Mapping[str, Any]) -> list[str]:
        return s3a_jars(env)

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """From a connection of type ``aws``: ``access_key`` (login), ``secret_key`` (password),
        and from its extra ``endpoint_url`` (or ``service_config.s3.endpoint_url``), ``region_name``,
        ``aws_session_token``."""
        extra = dict(conn.extra or {})
        out: dict[str, Any] = {}
        if conn.login:
            out["access_key"] = str(conn.login)
        if conn.password:
            out["secret_key"] = str(conn.password)
        s3_config = (extra.get("service_config") or {}).get("s3") or {}
        endpoint = s3_config.get("endpoint_url") or extra.get("endpoint_url") or conn.host
        if endpoint:
            out["fs.s3a.endpoint"] = str(endpoint)
        if extra.get("region_name"):
            out["region"] = str(extra["region_name"])
        if extra.get("aws_session_token"):
            out["aws_session_token"] = str(extra["aws_session_token"])
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "access_key" not in options and "fs.s3a.aws.credentials.provider" not in options

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        found = _asset(options)
        return [found] if found is not None else []
