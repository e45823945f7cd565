"""MongoDB options as SeaTunnel 2.3.8 names them, read once for both phases.

:func:`parse` turns a block's options into :class:`MongoOptions` or raises :class:`OptionError`
naming the key: the compile-time checks make it a located problem, the run a
``RuntimeConfigError``. Names, defaults and required options are SeaTunnel's (its option rule
requires ``uri``, ``database``, ``collection`` and ``schema`` for a source; a sink takes its row
type from its input). What differs from SeaTunnel is listed in :data:`DEVIATIONS`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ...spi import SINK, SOURCE
from ...spi.options import OptionError
from ...spi.optionspec import Option, OptionSpec
from ...spi.schema import Schema, TypeError_, schema_from_options

#: the block option naming an Airflow connection of type ``mongo`` (host, port, login, password, schema, extra)
CONN_OPTION = "mongo_conn_id"
#: the one field of a source read without a schema (SeaTunnel's simple text table)
TEXT_FIELD = "content"
#: SeaTunnel's types a source cannot read from BSON (its converter refuses them)
UNREADABLE_TYPES = ("tinyint", "smallint", "float", "time")

SPEC = OptionSpec((
    Option("uri", required=True, allow_blank=False, required_unless=(CONN_OPTION,), secret=True,
           description=f"The connection string, mongodb://user:password@host:port/... (or from {CONN_OPTION}); "
                       "it may hold credentials, so it is masked everywhere."),
    Option("database", required=True, allow_blank=False, identity=True,
           description="The database read or written."),
    Option("collection", required=True, allow_blank=False, identity=True,
           description="The collection read or written."),
    Option(CONN_OPTION, identity=True,
           description="An Airflow connection of type mongo: host, port, login, password, extra srv/authSource."),
    Option("schema", "map", description="The rows' fields (source: required by SeaTunnel, read from the BSON "
                                        "documents by name).", sections=(SOURCE, SINK)),
    Option("match.query", fallback=("matchQuery",), sections=(SOURCE,),
           description="A filter in MongoDB's extended JSON, e.g. {\"age\": {\"$gt\": 20}}."),
    Option("match.projection", sections=(SOURCE,), description="A projection in extended JSON."),
    Option("partition.split-key", default="_id", allow_blank=False, sections=(SOURCE,),
           description="The field the collection is split on into the plan's readers."),
    Option("partition.split-size", "long", 64 * 1024 * 1024, minimum=1, sections=(SOURCE,),
           description="SeaTunnel's bytes per split; here the plan's parallelism decides the splits."),
    Option("cursor.no-timeout", "bool", True, sections=(SOURCE,),
           description="Keep the server from closing an idle cursor."),
    Option("fetch.size", "int", 2048, minimum=1, sections=(SOURCE,),
           description="Documents per batch the server returns."),
    Option("max.time-min", "long", 600, minimum=1, sections=(SOURCE,),
           description="The query's time limit, passed as maxTimeMS as SeaTunnel does."),
    Option("flat.sync-string", "bool", False, sections=(SOURCE,),
           description="The whole document as the JSON text of the one string field."),
    Option("buffer-flush.max-rows", "int", 1000, minimum=1, sections=(SINK,),
           description="Rows per bulk write."),
    Option("buffer-flush.interval", "long", 30000, minimum=0, sections=(SINK,),
           description="Milliseconds between flushes (here: every staged batch is flushed when full or at the "
                       "end of its partition)."),
    Option("retry.max", "int", 3, minimum=0, sections=(SINK,),
           description="Retries of a failed bulk write."),
    Option("retry.interval", "long", 1000, minimum=0, sections=(SINK,),
           description="Milliseconds between retries."),
    Option("upsert-enable", "bool", False, sections=(SINK,),
           description="Write INSERT and UPDATE_AFTER rows as upserts by primary-key."),
    Option("primary-key", "list", fallback=("upsert-key",), sections=(SINK,),
           description="The fields that find a row's document (upserts, updates, deletes)."),
    Option("transaction", "bool", False, sections=(SINK,),
           description="SeaTunnel: commit through MongoDB transactions. Here every write is exactly-once "
                       "through the fenced commit log whatever its value."),
))

DEVIATIONS = (
    "parallelism: the source splits the collection on partition.split-key into exactly the plan's parallelism "
    "ranges (boundaries at evenly spaced documents); SeaTunnel sizes its splits by partition.split-size",
    "sink: exactly-once through a per-attempt staging collection and a fenced commit log "
    "(__seatunnel_commits), whatever transaction says; SeaTunnel without transaction writes at least once",
    "sink: a commit is applied document by document (no multi-document transaction): a reader may see part "
    "of it while it is applied, and a killed commit is completed by the next attempt, never duplicated",
    "sink: UPDATE_BEFORE rows are skipped (SeaTunnel fails the job on them)",
    "sink: an INSERT without an _id field gets its ObjectId when it is staged (so a completed commit "
    "never inserts it twice); SeaTunnel's driver assigns it when it writes",
)


@dataclass(frozen=True)
class MongoOptions:
    """One block, checked. ``uri`` is None at compile time when ``mongo_conn_id`` gives it."""

    section: str
    uri: str | None = field(repr=False)
    database: str
    collection: str
    schema: Schema | None = None
    match_query: dict[str, Any] | None = None
    projection: dict[str, Any] | None = None
    split_key: str = "_id"
    no_timeout: bool = True
    fetch_size: int = 2048
    max_time_ms: int = 600
    flat: bool = False
    batch: int = 1000
    retry_max: int = 3
    retry_interval_ms: int = 1000
    upsert: bool = False
    primary_key: tuple[str, ...] = ()
    transaction: bool = False

    @property
    def label(self) -> str:
        """How messages name the target: never the uri (it may hold credentials)."""
        return f"mongodb {self.database}.{self.collection}"

    def output_schema(self) -> Schema:
        """The rows a source produces: the declared schema, else ``content string``."""
        from ...spi.schema import Field, parse_type

        if self.schema is not None:
            return self.schema
        return Schema((Field(TEXT_FIELD, parse_type("string")),))


_WORD = re.compile(r"[A-Za-z_$][\w$.]*")
_LITERALS = frozenset({"true", "false", "null"})


def strict_json(text: str) -> str:
    """MongoDB's relaxed JSON (unquoted keys such as ``{c_int: 2}``, single-quoted strings, as SeaTunnel's
    driver reads ``match.query``) as strict JSON: bare words other than true/false/null are quoted."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            j, chars = i + 1, []
            while j < n and text[j] != c:
                if text[j] == "\\" and j + 1 < n:
                    chars.append(text[j:j + 2])
                    j += 2
                    continue
                chars.append('\\"' if text[j] == '"' else text[j])
                j += 1
            out.append('"' + "".join(chars) + '"')
            i = j + 1
            continue
        word = _WORD.match(text, i)
        if word and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "._")):
            out.append(word.group() if word.group() in _LITERALS else json.dumps(word.group()))
            i = word.end()
            continue
        out.append(c)
        i += 1
    return "".join(out)


def extended_json(key: str, text: Any) -> dict[str, Any]:
    """A filter or projection given as MongoDB extended JSON, keys quoted or not: parsed here (compile
    time, no driver); the run parses the result again with the driver's extended-JSON reader."""
    if isinstance(text, Mapping):
        return dict(text)
    try:
        value = json.loads(strict_json(str(text)))
    except ValueError as e:
        raise OptionError(key, f"{key} is not JSON: {e}", 'write a document such as {"age": {"$gt": 20}}') from None
    if not isinstance(value, dict):
        raise OptionError(key, f"{key} must be a JSON document, not {type(value).__name__}",
                          'write a document such as {"age": {"$gt": 20}}')
    return value


def _schema(options: Mapping[str, Any], section: str) -> Schema | None:
    try:
        schema = schema_from_options(options)
    except TypeError_ as e:
        raise OptionError("schema", str(e)) from None
    if section == SOURCE and schema is not None:
        for f in schema.fields:
            name = f.type.name
            if name in UNREADABLE_TYPES:
                raise OptionError("schema", f"field '{f.name}': SeaTunnel's MongoDB source cannot read type {name} "
                                            "from BSON", "use int, bigint, double or string")
    return schema


def parse(options: Mapping[str, Any], section: str, need_uri: bool = True) -> MongoOptions:
    """The block's options, checked (:data:`SPEC`, then the rules it cannot declare). ``need_uri``
    false: a block naming ``mongo_conn_id`` may leave ``uri`` to the connection (compile time)."""
    o = SPEC.parse(options, section, complete=True)
    uri = o["uri"]
    if uri is None and (need_uri or o[CONN_OPTION] is None):
        raise OptionError("uri", "the option 'uri' is required",
                          f'set uri = "mongodb://host:27017" (or {CONN_OPTION} = "<an Airflow connection>")')
    if uri is not None and not str(uri).startswith(("mongodb://", "mongodb+srv://")):
        raise OptionError("uri", "uri must start with mongodb:// or mongodb+srv://", 'uri = "mongodb://host:27017"')
    schema = _schema(options, section)
    common: dict[str, Any] = {"uri": uri, "database": o["database"], "collection": o["collection"], "schema": schema}
    if section == SINK:
        keys = tuple(str(k) for k in o["primary-key"] or ())
        if o["upsert-enable"] and not keys:
            raise OptionError("primary-key", "upsert-enable needs primary-key (the fields that find a document)",
                              'set primary-key = ["id"]')
        return MongoOptions(SINK, batch=o["buffer-flush.max-rows"], retry_max=o["retry.max"],
                            retry_interval_ms=o["retry.interval"], upsert=o["upsert-enable"], primary_key=keys,
                            transaction=o["transaction"], **common)
    if o["flat.sync-string"] and (schema is None or len(schema.fields) != 1 or
                                  schema.fields[0].type.name != "string"):
        raise OptionError("flat.sync-string", "flat.sync-string needs a schema of exactly one string field",
                          "schema = { fields { data = string } }")
    query = extended_json("match.query", o["match.query"]) if o["match.query"] is not None else None
    projection = extended_json("match.projection", o["match.projection"]) if o["match.projection"] is not None \
        else None
    return MongoOptions(SOURCE, match_query=query, projection=projection, split_key=o["partition.split-key"],
                        no_timeout=o["cursor.no-timeout"], fetch_size=o["fetch.size"], max_time_ms=o["max.time-min"],
                        flat=o["flat.sync-string"], **common)
