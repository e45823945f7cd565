"""MySQL-CDC: a MySQL or MariaDB database's tables, their snapshot then every change, with row kinds.

SeaTunnel's options (:mod:`.options`). STREAMING: every table's snapshot at one binlog position
(one consistent-snapshot transaction), then the row events of all the tables after that position,
read by one replica connection (:mod:`.runtime`, :mod:`.datasource`); binlog positions are the
stream's offsets in the pipeline's checkpoint, so a restore re-reads from the last recorded
micro-batch on. BATCH: the tables once.

Needs ``mysql-replication`` and ``PyMySQL`` (extra ``cdc``); the server ``log_bin`` with
``binlog_format = ROW`` and ``binlog_row_image = FULL``; a user with ``SELECT``, ``REPLICATION
SLAVE`` and ``REPLICATION CLIENT`` (and ``RELOAD`` on MySQL, for the snapshot's lock). The user's
docs: docs/cdc.md.
"""

from __future__ import annotations

from ...spi import SOURCE, Capabilities
from ..cdc.source import CdcSource
from .options import SPEC, MyCdcOptions, parse

__all__ = ["CONNECTOR", "MySqlCdc"]


class MySqlCdc(CdcSource):
    name = "MySQL-CDC"
    #: not exclusive_stream: the binlog has no consumer position, any number of queries may read it
    capabilities = Capabilities(sections=frozenset({SOURCE}))
    option_spec = SPEC  # required, identity (base-url, table-names) and secrets come from it
    runtime = ".runtime"
    description = "Captures a MySQL or MariaDB database's tables: a snapshot, then every change (the binlog)."

    parse = staticmethod(parse)

    def asset(self, parsed: MyCdcOptions, table: str) -> str:
        """``mysql://host:port/database/table``."""
        return f"mysql://{parsed.host}:{parsed.port}/{table.replace('.', '/')}"


CONNECTOR = MySqlCdc()
