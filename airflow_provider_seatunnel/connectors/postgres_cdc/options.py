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

from ...spi import SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option
from ..cdc.source import DEFAULT_SPLIT_SIZE, cdc_spec

PLUGINS = ("pgoutput",)
#: SeaTunnel's other plug-ins: accepted, the changes are decoded with pgoutput all the same (a warning says so)
OTHER_PLUGINS = ("decoderbufs", "wal2json", "wal2json_rds", "wal2json_streaming", "wal2json_rds_streaming")

SPEC = cdc_spec(
    "The tables captured, database.schema.table each, all in base-url's database (a list, or one "
    "comma-separated string).",
    Option("schema-names", "list", description="Accepted and not needed here. The tables are named by table-names."),
    Option("slot.name", identity=True, description="The replication slot (lower-case letters, digits and _; _<n> "
           "appended from the second table on); unset: one derived from the pipeline."),
    Option("decoding.plugin.name", "enum", "pgoutput", choices=PLUGINS + OTHER_PLUGINS,
           description="pgoutput; the others are accepted and decoded with pgoutput all the same."),
)

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
    format: str = "default"

    @property
    def conn(self) -> dict[str, Any]:
        """What the driver's and workers' client connect with (holds the password)."""
        return {"host": self.host, "port": self.port, "dbname": self.database, "user": self.user,
                "password": self.password}


def _url(url: str) -> tuple[str, str, int, str, dict[str, str]]:
    text = url.strip()
    if not text.startswith("jdbc:postgresql://"):
        raise OptionError("base-url", f"base-url {text!r} is not a PostgreSQL JDBC URL",
                          'base-url = "jdbc:postgresql://host:5432/db"')
    parts = urlsplit(text[len("jdbc:"):])
    database = parts.path.lstrip("/")
    if not parts.hostname or not database:
        raise OptionError("base-url", f"base-url {text!r} names no host or database",
                          'base-url = "jdbc:postgresql://host:5432/db"')
    return text, parts.hostname, parts.port or 5432, database, dict(parse_qsl(parts.query))


def _tables(items: tuple[Any, ...], database: str) -> tuple[str, ...]:
    names = [str(i).strip() for i in items if str(i).strip()]
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


def parse(options: Mapping[str, Any], section: str = SOURCE) -> PgCdcOptions:
    """The block's settings from its typed options (:data:`SPEC`); :class:`OptionError` for a URL that is not
    PostgreSQL's, a table outside its database, or a slot name PostgreSQL refuses."""
    o = SPEC.parse(options, section, complete=True)
    url, host, port, database, params = _url(o["base-url"])
    slot = o["slot.name"]
    if slot is not None and not slot.replace("_", "").isalnum():
        raise OptionError("slot.name", f"slot.name {slot!r} may hold lower-case letters, digits and '_' only")
    return PgCdcOptions(host, port, database, o["username"], o["password"], _tables(o["table-names"], database),
                        o["startup.mode"], None if slot is None else slot.lower(), o["decoding.plugin.name"],
                        o["snapshot.split.size"], url, schema_changes=o["schema-changes.enabled"], url_params=params,
                        format=str(o["format"]).strip().lower())
