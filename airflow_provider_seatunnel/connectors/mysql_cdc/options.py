"""MySQL-CDC options as SeaTunnel names them: ``base-url`` (``jdbc:mysql://host:port/db``),
``username``, ``password``, ``database-names``, ``table-names`` (``database.table`` each),
``startup.mode`` (``initial``: snapshot then binlog; ``latest``: the binlog from the first run on),
``server-id`` (a number or a range ``5400-5408``), ``snapshot.split.size``, ``exactly_once``,
``format``. :func:`parse` raises :class:`OptionError` naming the key."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from ...spi import SOURCE
from ...spi.options import OptionError, as_int
from ...spi.optionspec import Option
from ..cdc.source import cdc_spec

#: the replica server ids this package takes when ``server-id`` is unset (SeaTunnel: a random one of a range)
DEFAULT_SERVER_IDS = (5400, 6400)

SPEC = cdc_spec(
    "The tables captured, database.table each (a list, or one comma-separated string).",
    Option("server-id", description="The replica server id, or a range such as 5400-5408 (the source's one binlog "
           "reader takes the first id); unset: one of a range of this package's, placed by the pipeline."),
)

@dataclass(frozen=True)
class MyCdcOptions:
    host: str
    port: int
    user: str | None
    password: str | None = field(repr=False, default=None)
    tables: tuple[str, ...] = ()  # database.table
    startup_mode: str = "initial"
    server_ids: tuple[int, int] | None = None
    url: str = ""
    schema_changes: bool = False  # schema-changes.enabled: follow columns added to the tables
    format: str = "default"

    @property
    def conn(self) -> dict[str, Any]:
        """What the driver's and workers' client connect with (holds the password)."""
        return {"host": self.host, "port": self.port, "user": self.user or "", "passwd": self.password or ""}

    def server_id(self, index: int, salt: str) -> int:
        """The replica server id of the source's one binlog reader, whatever table (``index``) asks: the first
        of ``server-id``, or one of a range of this package's placed by ``salt``."""
        low, high = self.server_ids or DEFAULT_SERVER_IDS
        if self.server_ids is None:
            low += int(hashlib.sha256(salt.encode()).hexdigest()[:6], 16) % max(1, high - low)
        return low


def _server_ids(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    text = value.strip()
    low_text, _, high_text = text.partition("-")
    low, high = as_int(low_text), as_int(high_text or low_text)
    if low is None or high is None or low < 1 or high < low:
        raise OptionError("server-id", f"server-id {text!r} is not a number or a range like 5400-5408")
    return low, high  # the one reader takes low


def _debezium_schema_changes(properties: Any) -> bool:
    """Whether Debezium's properties hold ``include.schema.changes = true`` (SeaTunnel 2.3.8's documented
    switch of MySQL-CDC's schema evolution), written flat or as nested HOCON paths."""
    value: Any = properties if isinstance(properties, dict) else {}
    if "include.schema.changes" in value:
        value = value["include.schema.changes"]
    else:
        for part in ("include", "schema", "changes"):
            value = value.get(part) if isinstance(value, dict) else None
    return str(value).strip().lower() == "true"


def parse(options: Any, section: str = SOURCE) -> MyCdcOptions:
    """The block's settings from its typed options (:data:`SPEC`); :class:`OptionError` for a URL that is not
    MySQL's, a table that is not ``database.table`` or a bad ``server-id``."""
    o = SPEC.parse(options, section, complete=True)
    text = o["base-url"].strip()
    if not text.startswith(("jdbc:mysql://", "jdbc:mariadb://")):
        raise OptionError("base-url", f"base-url {text!r} is not a MySQL JDBC URL", 'base-url = "jdbc:mysql://host:3306/db"')
    parts = urlsplit(text[len("jdbc:"):])
    if not parts.hostname:
        raise OptionError("base-url", f"base-url {text!r} names no host", 'base-url = "jdbc:mysql://host:3306/db"')
    tables = tuple(str(t).strip() for t in o["table-names"] if str(t).strip())
    if not tables:
        raise OptionError("table-names", "the option 'table-names' is required", 'table-names = ["shop.orders"]')
    for t in tables:
        if len(t.split(".")) != 2:
            raise OptionError("table-names", f"table {t!r} is not database.table", 'table-names = ["shop.orders"]')
    user, password = o["username"], o["password"]
    return MyCdcOptions(parts.hostname, parts.port or 3306, user, password, tables, o["startup.mode"],
                        _server_ids(o["server-id"]), text,
                        o["schema-changes.enabled"] or _debezium_schema_changes(o["debezium"]),
                        str(o["format"]).strip().lower())
