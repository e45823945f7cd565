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

from ...spi.options import MISSING, OptionError, as_bool, as_int, lookup
from ..cdc.source import LATER_STARTUP_MODES

STARTUP_MODES = ("initial", "latest")
#: the replica server ids this package takes when ``server-id`` is unset (SeaTunnel: a random one of a range)
DEFAULT_SERVER_IDS = (5400, 6400)


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

    @property
    def conn(self) -> dict[str, Any]:
        """What the driver's and workers' client connect with (holds the password)."""
        return {"host": self.host, "port": self.port, "user": self.user or "", "passwd": self.password or ""}

    def server_id(self, index: int, salt: str) -> int:
        """A replica server id for the ``index``-th table's reader: distinct per table, in ``server-id``'s range
        (or a range of this package's, placed by ``salt``)."""
        low, high = self.server_ids or DEFAULT_SERVER_IDS
        if self.server_ids is None:
            low += int(hashlib.sha256(salt.encode()).hexdigest()[:6], 16) % max(1, high - low - len(self.tables))
        return low + index


def opt(options: Any, key: str, default: Any = None) -> Any:
    value = lookup(options, key)
    return default if value is MISSING or value is None else value


def _server_ids(options: Any, tables: int) -> tuple[int, int] | None:
    value = opt(options, "server-id")
    if value is None:
        return None
    text = str(value).strip()
    low_text, _, high_text = text.partition("-")
    low, high = as_int(low_text), as_int(high_text or low_text)
    if low is None or high is None or low < 1 or high < low:
        raise OptionError("server-id", f"server-id {text!r} is not a number or a range like 5400-5408")
    return low, high  # fewer ids than tables: the readers take low, low + 1... (a warning says so)


def schema_changes(options: Any) -> bool:
    value = opt(options, "schema-changes.enabled", False)
    parsed = as_bool(value)
    if parsed is None:
        raise OptionError("schema-changes.enabled", f"schema-changes.enabled must be true or false, found {value!r}")
    return parsed


def parse(options: Any) -> MyCdcOptions:
    url = opt(options, "base-url")
    if url is None:
        raise OptionError("base-url", "the option 'base-url' is required", 'base-url = "jdbc:mysql://host:3306/db"')
    text = str(url).strip()
    if not text.startswith(("jdbc:mysql://", "jdbc:mariadb://")):
        raise OptionError("base-url", f"base-url {text!r} is not a MySQL JDBC URL", 'base-url = "jdbc:mysql://host:3306/db"')
    parts = urlsplit(text[len("jdbc:"):])
    if not parts.hostname:
        raise OptionError("base-url", f"base-url {text!r} names no host", 'base-url = "jdbc:mysql://host:3306/db"')
    names = opt(options, "table-names")
    items = names if isinstance(names, list) else str(names or "").split(",")
    tables = tuple(str(t).strip() for t in items if str(t).strip())
    if not tables:
        raise OptionError("table-names", "the option 'table-names' is required", 'table-names = ["shop.orders"]')
    for t in tables:
        if len(t.split(".")) != 2:
            raise OptionError("table-names", f"table {t!r} is not database.table", 'table-names = ["shop.orders"]')
    mode = str(opt(options, "startup.mode", "initial")).strip().lower()
    if mode not in STARTUP_MODES + LATER_STARTUP_MODES:
        raise OptionError("startup.mode", f"unknown startup.mode '{mode}'", "use initial or latest")
    split = as_int(opt(options, "snapshot.split.size", 8096))
    if split is None or split < 1:
        raise OptionError("snapshot.split.size", "snapshot.split.size must be a positive integer")
    user, password = opt(options, "username"), opt(options, "password")
    return MyCdcOptions(parts.hostname, parts.port or 3306, None if user is None else str(user),
                        None if password is None else str(password), tables, mode,
                        _server_ids(options, len(tables)), text, schema_changes(options))
