"""Postgres-CDC options as SeaTunnel names them: ``base-url`` (``jdbc:postgresql://host:port/db``),
``username``, ``password``, ``database-names``, ``schema-names``, ``table-names``
(``database.schema.table`` each), ``startup.mode`` (``initial``: snapshot then changes; ``latest``:
changes from the start of the stream), ``slot.name``, ``decoding.plugin.name`` (``pgoutput``; the
others are decoded with pgoutput all the same),
``snapshot.split.size``, ``exactly_once``, ``format``. :func:`parse` raises :class:`OptionError`
naming the key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ...spi.options import MISSING, OptionError, as_bool, as_int, lookup
from ..cdc.source import LATER_STARTUP_MODES

STARTUP_MODES = ("initial", "latest")
#: SeaTunnel's other modes and plug-ins: they plan, but cannot run here
PLUGINS = ("pgoutput",)
#: SeaTunnel's other plug-ins: accepted, the changes are decoded with pgoutput all the same (a warning says so)
OTHER_PLUGINS = ("decoderbufs", "wal2json", "wal2json_rds", "wal2json_streaming", "wal2json_rds_streaming")
DEFAULT_SPLIT_SIZE = 8096


@dataclass(frozen=True)
class PgCdcOptions:
    host: str
    port: int
    database: str
    user: str | None
    password: str | None = field(repr=False, default=None)
    tables: tuple[str, ...] = ()  # schema.table
    startup_mode: str = "initial"
    slot: str | None = None
    plugin: str = "pgoutput"
    split_size: int = DEFAULT_SPLIT_SIZE
    url: str = ""
    schema_changes: bool = False  # schema-changes.enabled: follow columns added to the tables
    url_params: Mapping[str, str] = field(default_factory=dict)

    @property
    def conn(self) -> dict[str, Any]:
        """What the driver's and workers' client connect with (holds the password)."""
        return {"host": self.host, "port": self.port, "dbname": self.database, "user": self.user,
                "password": self.password}


def opt(options: Mapping[str, Any], key: str, default: Any = None) -> Any:
    value = lookup(options, key)
    return default if value is MISSING or value is None else value


def _list(options: Mapping[str, Any], key: str) -> list[str]:
    value = opt(options, key)
    if value is None:
        return []
    items = value if isinstance(value, list) else str(value).split(",")
    return [str(i).strip() for i in items if str(i).strip()]


def _url(options: Mapping[str, Any]) -> tuple[str, str, int, str, dict[str, str]]:
    url = opt(options, "base-url")
    if url is None:
        raise OptionError("base-url", "the option 'base-url' is required", 'base-url = "jdbc:postgresql://host:5432/db"')
    text = str(url).strip()
    if not text.startswith("jdbc:postgresql://"):
        raise OptionError("base-url", f"base-url {text!r} is not a PostgreSQL JDBC URL",
                          'base-url = "jdbc:postgresql://host:5432/db"')
    parts = urlsplit(text[len("jdbc:"):])
    database = parts.path.lstrip("/")
    if not parts.hostname or not database:
        raise OptionError("base-url", f"base-url {text!r} names no host or database",
                          'base-url = "jdbc:postgresql://host:5432/db"')
    return text, parts.hostname, parts.port or 5432, database, dict(parse_qsl(parts.query))


def _tables(options: Mapping[str, Any], database: str) -> tuple[str, ...]:
    names = _list(options, "table-names")
    if not names:
        raise OptionError("table-names", "the option 'table-names' is required",
                          'table-names = ["db.public.orders"] (database.schema.table)')
    out = []
    for name in names:
        parts = name.split(".")
        if len(parts) != 3:
            raise OptionError("table-names", f"table {name!r} is not database.schema.table",
                              f'table-names = ["{database}.public.{parts[-1]}"]')
        if parts[0] != database:
            raise OptionError("table-names", f"table {name!r} is not in the database of base-url ({database})",
                              "capture the tables of one database per source")
        out.append(f"{parts[1]}.{parts[2]}")
    return tuple(out)


def schema_changes(options: Any) -> bool:
    value = opt(options, "schema-changes.enabled", False)
    parsed = as_bool(value)
    if parsed is None:
        raise OptionError("schema-changes.enabled", f"schema-changes.enabled must be true or false, found {value!r}")
    return parsed


def parse(options: Mapping[str, Any]) -> PgCdcOptions:
    url, host, port, database, params = _url(options)
    mode = str(opt(options, "startup.mode", "initial")).strip().lower()
    if mode not in STARTUP_MODES + LATER_STARTUP_MODES:
        raise OptionError("startup.mode", f"unknown startup.mode '{mode}'", "use initial or latest")
    plugin = str(opt(options, "decoding.plugin.name", "pgoutput")).strip().lower()
    if plugin not in PLUGINS + OTHER_PLUGINS:
        raise OptionError("decoding.plugin.name", f"unknown decoding.plugin.name '{plugin}'", "use pgoutput")
    split = as_int(opt(options, "snapshot.split.size", DEFAULT_SPLIT_SIZE))
    if split is None or split < 1:
        raise OptionError("snapshot.split.size", "snapshot.split.size must be a positive integer")
    slot = opt(options, "slot.name")
    if slot is not None and not str(slot).replace("_", "").isalnum():
        raise OptionError("slot.name", f"slot.name {slot!r} may hold lower-case letters, digits and '_' only")
    user, password = opt(options, "username"), opt(options, "password")
    return PgCdcOptions(host, port, database, None if user is None else str(user),
                        None if password is None else str(password), _tables(options, database), mode,
                        None if slot is None else str(slot).lower(), plugin, split, url,
                        schema_changes=schema_changes(options), url_params=params)
