"""The Redis source and the sink's staging writes as a PySpark Python data source
(``pyspark.sql.datasource``), so Spark plans them as any source or sink: one partition per reader,
one write task per partition. Run time only (imports PySpark).

The whole spec (endpoint with credentials, what to read or stage) travels in one option,
:data:`SPEC_OPTION`, whose name Spark's redaction rule matches: plans and the UI show it as
``*********(redacted)``.

* Reading: ``partitions()`` lists the keys once (SCAN with MATCH ``keys``, COUNT ``batch_size``,
  TYPE of ``data_type``; the sink's bookkeeping keys skipped), sorted, and deals them in contiguous
  runs over exactly ``parallelism`` partitions; ``read()`` fetches ``batch_size`` keys per round
  trip and yields the rows (:mod:`.values`).
* Staging: each write task attempt appends its rows to its own list
  (:func:`.staging.stage_key`) and returns the list and its row count; ``commit`` (Spark's, once
  every task succeeded) appends those to the attempt's manifest, ``abort`` deletes them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.errors import DataError
from ...spi.schema import Schema, parse_fields
from ...spi.specsource import SpecSource
from ..values import ValueFormatError, convert, hash_fields, hash_json, key_text, row_of, rows_of_json, serializer
from .client import connected
from .options import HASH_KEY_FIELD, Endpoint
from .staging import PREFIX, STAGING_TTL, encode, encode_hash, manifest_key, stage_key, stages_key

NAME = "seatunnel_redis"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.redis.secret"


class RedisDataSource(SpecSource):
    """``spark.read.format("seatunnel_redis")`` / ``df.write.format(...)``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec, [f.name for f in schema.fields])


# ------------------------------------------------------------------------------------------------
# reading
# ------------------------------------------------------------------------------------------------

@dataclass
class KeysPartition(InputPartition):
    keys: list[bytes]


def list_keys(client: Any, pattern: str, count: int, redis_type: str) -> list[bytes]:
    """The keys matching ``pattern`` of type ``redis_type``, sorted; the sink's bookkeeping left out."""
    found = {k for k in client.scan_iter(match=pattern, count=count, _type=redis_type)
             if not k.startswith(PREFIX.encode())}
    return sorted(found)


def deal(keys: Sequence[bytes], readers: int) -> list[list[bytes]]:
    """``keys`` in ``readers`` contiguous runs of near-equal size (some empty when keys are few)."""
    size, extra = divmod(len(keys), readers)
    out, start = [], 0
    for i in range(readers):
        end = start + size + (1 if i < extra else 0)
        out.append(list(keys[start:end]))
        start = end
    return out


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        spec = self.spec
        endpoint = Endpoint.from_json(spec["endpoint"])
        with connected(endpoint, f"cannot list the keys matching {spec['keys']!r}") as client:
            keys = list_keys(client, spec["keys"], int(spec["batch_size"]), spec["redis_type"])
        return [KeysPartition(chunk) for chunk in deal(keys, max(1, int(spec["parallelism"])))]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        spec = self.spec
        keys: list[bytes] = getattr(partition, "keys", [])
        if not keys:
            return
        endpoint = Endpoint.from_json(spec["endpoint"])
        schema = parse_fields(spec["schema"]) if spec.get("schema") else None
        batch = max(1, int(spec["batch_size"]))
        with connected(endpoint, "cannot read") as client:
            for start in range(0, len(keys), batch):
                chunk = keys[start:start + batch]
                for key, value in zip(chunk, _fetch(client, spec["redis_type"], chunk), strict=True):
                    if value is None:
                        continue  # deleted since it was listed
                    try:
                        yield from _rows(spec, schema, key, value)
                    except ValueFormatError as e:
                        raise DataError(f"the value of key {key.decode('utf-8', 'replace')!r} at {endpoint.label}: "
                                        f"{e}") from None


def _fetch(client: Any, redis_type: str, keys: list[bytes]) -> list[Any]:
    if redis_type == "string":
        return list(client.mget(keys))
    pipe = client.pipeline(transaction=False)
    for key in keys:
        if redis_type == "list":
            pipe.lrange(key, 0, -1)
        elif redis_type == "set":
            pipe.smembers(key)
        elif redis_type == "zset":
            pipe.zrange(key, 0, -1)
        else:
            pipe.hgetall(key)
    return [None if v is None or (redis_type != "string" and not v) else v for v in pipe.execute()]


def _text(value: bytes) -> str:
    return value.decode("utf-8", "replace")


def _rows(spec: Mapping[str, Any], schema: Schema | None, key: bytes, value: Any) -> Iterator[tuple[Any, ...]]:
    """The rows of one key's value: each element of a list, set or zset; a string; a hash (one
    row, or one per field with ``hash_key_parse_mode = kv``)."""
    redis_type = spec["redis_type"]
    if redis_type == "hash":
        fields = {_text(f): _text(v) for f, v in value.items()}
        if schema is None:
            yield (hash_json({**fields, HASH_KEY_FIELD: _text(key)}),)
        elif spec.get("hash_key_parse_mode") == "kv":
            first, rest = schema.fields[0], Schema(schema.fields[1:])
            for name, text in fields.items():
                for row in rows_of_json(text, rest):
                    yield (convert(name, first.type), *row)
        else:
            yield row_of({**fields, HASH_KEY_FIELD: _text(key)}, schema)
        return
    elements = [value] if redis_type == "string" else sorted(value) if redis_type == "set" else value
    for element in elements:
        text = _text(element)
        if schema is None:
            yield (text,)
        else:
            yield from rows_of_json(text, schema)


# ------------------------------------------------------------------------------------------------
# staging writes
# ------------------------------------------------------------------------------------------------

@dataclass
class StagedPart(WriterCommitMessage):
    """What one write task staged: its list, the rows in it, its partition."""

    key: str
    rows: int
    partition: int


def row_encoder(spec: Mapping[str, Any], names: Sequence[str]) -> Any:
    """A function turning a row into its staged element: the key from the field ``key`` names (as
    SeaTunnel: a field of that exact name, else ``key`` itself), the value by ``format``."""
    key_option = str(spec["key"])
    at = names.index(key_option) if key_option in names else None
    literal = key_option.encode()
    value_of = serializer(names, spec["format"], spec.get("field_delimiter", ","))

    def key_of(row: Sequence[Any]) -> bytes:
        if at is None:
            return literal
        if row[at] is None:
            raise DataError(f"the key field '{key_option}' is null in a row")
        return key_text(row[at]).encode()

    if spec["redis_type"] == "hash":
        return lambda row: encode_hash(key_of(row), [(f.encode(), v.encode()) for f, v in hash_fields(names, row)])
    return lambda row: encode(key_of(row), value_of(row).encode())


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any], names: list[str]):
        self.spec, self.names = spec, names

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        spec = self.spec
        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        attempt = f"{task.stageId()}.{task.taskAttemptId()}" if task is not None else "0.0"
        key = stage_key(spec["commit_key"], spec["token"], partition, attempt)
        encoder = row_encoder(spec, self.names)
        batch = max(1, int(spec["batch_size"]))
        rows = 0
        endpoint = Endpoint.from_json(spec["endpoint"])
        with connected(endpoint, "cannot stage rows") as client:
            client.sadd(stages_key(spec["commit_key"]), key)
            client.expire(stages_key(spec["commit_key"]), STAGING_TTL)
            buffer: list[bytes] = []
            for row in iterator:
                buffer.append(encoder(row))
                if len(buffer) >= batch:
                    rows += _push(client, key, buffer)
            rows += _push(client, key, buffer)
            client.expire(key, STAGING_TTL)
        return StagedPart(key, rows, partition)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        spec = self.spec
        parts = [m for m in messages if isinstance(m, StagedPart)]
        manifest = manifest_key(spec["commit_key"], spec["token"])
        with connected(Endpoint.from_json(spec["endpoint"]), "cannot record the staged rows") as client:
            pipe = client.pipeline(transaction=True)
            pipe.delete(manifest)
            if parts:
                pipe.rpush(manifest, *[json.dumps([p.key, p.rows, p.partition]) for p in parts])
            pipe.expire(manifest, STAGING_TTL)
            pipe.execute()

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        spec = self.spec
        keys = [m.key for m in messages if isinstance(m, StagedPart)]
        if keys:
            with connected(Endpoint.from_json(spec["endpoint"]), "cannot discard staged rows") as client:
                client.delete(*keys)
                client.srem(stages_key(spec["commit_key"]), *keys)


def _push(client: Any, key: str, buffer: list[bytes]) -> int:
    """Append ``buffer`` to the list in one round trip; the rows appended."""
    if not buffer:
        return 0
    n = len(buffer)
    client.rpush(key, *buffer)
    buffer.clear()
    return n
