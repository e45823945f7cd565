"""FtpFile and SftpFile: text, csv, json, parquet, orc, xml and the other LocalFile formats on an FTP
or SFTP server, on the object-store code of :mod:`..files.onstore` with a file server as the store.

The file options are LocalFile's (:mod:`..localfile`); the server options are SeaTunnel's
(:mod:`.options`: ``host``, ``port``, ``user``, ``password``, ``path``, FtpFile's
``connection_mode``), or an Airflow connection (``ftp_conn_id``, ``sftp_conn_id``).

**Source**: the files under ``path``, skipping the sink's bookkeeping and the files of a commit in
progress or interrupted, read by Spark with LocalFile's readers (SFTP directly through Hadoop's
SFTP file system; FTP from a local spool the driver downloads into).

**Sink**: S3File's two-phase commit with the server as the store (:mod:`.store`): save modes once
per run, the attempt's token taken from the slot's fence record, each table written by Spark into
``<path>/.seatunnel-staging/<slot>/token-<n>/`` (FTP: written locally and uploaded), then the
commit recorded by compare-and-swap on the fence (a directory rename the server refuses when the
version exists) and the staged files renamed to their final names. A killed commit is rolled
forward by the next attempt; an overtaken attempt raises ``Superseded``. Not in STREAMING.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...spi import (
    SINK,
    SOURCE,
    BatchSource,
    Capabilities,
    ConnectionInfo,
    Connector,
    FromConnection,
    Lineage,
    SaveModes,
    SchemaInference,
    TableLineage,
    Unnamed,
)
from ...spi.options import JobConfig, PluginConfig, Problem
from ..files import checks as file_checks
from ..files.onstore import OnStoreFile
from ..files.options import written
from ..files.placeholders import store_assets
from ..files.s3options import Dialect
from . import checks

__all__ = ["ServerFile"]


class ServerFile(OnStoreFile, Connector, SchemaInference, Lineage, TableLineage, SaveModes, BatchSource,
                  FromConnection):
    capabilities = Capabilities(sections=frozenset({SOURCE, SINK}), committer=True, inserts_only=True)
    scheme = ""

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        return checks.check(plugin, job, self.connection_option)

    schema = staticmethod(file_checks.schema)

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """host, port, login (``user``) and password, and from the extra: FTP's ``passive``
        (``connection_mode``), SFTP's ``key_file`` or ``private_key``, ``host_key``, ``known_hosts`` and
        ``no_host_key_check`` (as Airflow's SSH provider names them)."""
        extra = dict(conn.extra or {})
        out: dict[str, Any] = {}
        for key, value in (("host", conn.host), ("port", conn.port), ("user", conn.login),
                           ("password", conn.password)):
            if value not in (None, ""):
                out[key] = value
        if self.scheme == "ftp" and "passive" in extra:
            passive = str(extra["passive"]).strip().lower() in ("true", "1", "yes")
            out["connection_mode"] = "passive_local" if passive else "active_local"
        if self.scheme == "sftp":
            for key in ("key_file", "private_key", "host_key", "known_hosts"):
                if extra.get(key):
                    out[key] = str(extra[key])
            if extra.get("no_host_key_check") is not None:
                out["no_host_key_check"] = str(extra["no_host_key_check"]).strip().lower()
        return out

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        return "host" not in options and "password" not in options

    def assets(self, options: Mapping[str, Any]) -> list[str | Unnamed]:
        """``<scheme>://<host>:<port>/<path>`` (the scheme's port when unset)."""
        port = written(options, "port")
        port = (21 if self.scheme == "ftp" else 22) if port is None else port
        return store_assets(options, "host", lambda host, path: f"{self.scheme}://{host}:{port}/{str(path).strip('/')}")

    @property
    def dialect(self) -> Dialect:  # type: ignore[override,misc]  # per plugin: FTP or SFTP
        from .runtime import dialect

        return dialect(self.name, self.scheme)
