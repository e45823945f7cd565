"""The Clickhouse source and the sink's staging writes as a PySpark Python data source, so Spark plans them as
any source or sink: one partition per reader, one write task per partition. Run time only (imports PySpark).

The spec (endpoint with credentials, what to read or stage) travels in one option, :data:`SPEC_OPTION`,
whose name Spark's redaction rule matches: plans and the UI show it as ``*********(redacted)``.

* Reading: SeaTunnel's Clickhouse source has one split (its enumerator gives the query to one reader): the
  first of the plan's ``parallelism`` partitions runs ``sql`` and streams its answer (``JSONCompactEachRow``,
  line by line); the others are empty.
* Staging: each write task creates its own staging table (``CREATE TABLE ... AS`` the target; a retried
  task drops the one its earlier try left) and inserts its rows ``bulk_size`` a request as ``JSONEachRow``;
  with primary_key it also stages the keys to delete (its rows are the last change of each key already: the
  driver reduced them): every key, or only the deleted ones when the target is a ReplacingMergeTree ordered by
  the key (it replaces a key's row by itself, as SeaTunnel relies on). A DELETE or UPDATE_BEFORE row without
  primary_key fails the task (deterministic).
  It returns its partition and rows; Spark's commit records them as the attempt's manifest.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceReader, DataSourceWriter, InputPartition, WriterCommitMessage

from ...spi.errors import DataError
from ...spi.specsource import SpecSource
from . import client, staging
from .client import quote
from .options import Endpoint
from .types import READ_SETTINGS, WRITE_SETTINGS, json_lines, row_reader

NAME = "seatunnel_clickhouse"
#: the option holding the spec: Spark's redaction rule (``secret``) hides its value in plans
SPEC_OPTION = "seatunnel.clickhouse.secret"
#: the row kinds (codes) that delete: UPDATE_BEFORE and DELETE
DELETE_KINDS = (1, 3)


class ClickhouseDataSource(SpecSource):
    """``spark.read.format("seatunnel_clickhouse")`` / ``df.write.format(...)``, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(self.spec)

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec)


@dataclass
class QueryPartition(InputPartition):
    sql: str | None


class _Reader(DataSourceReader):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def partitions(self) -> Sequence[InputPartition]:
        readers = max(1, int(self.spec["parallelism"]))
        return [QueryPartition(self.spec["sql"] if i == 0 else None) for i in range(readers)]

    def read(self, partition: InputPartition) -> Iterator[tuple[Any, ...]]:
        import json

        sql = getattr(partition, "sql", None)
        if not sql:
            return
        spec = self.spec
        endpoint = Endpoint.from_json(spec["endpoint"])
        read = row_reader(spec["types"])
        for line in client.lines(endpoint, sql, spec["database"], settings=READ_SETTINGS):
            yield read(json.loads(line))


@dataclass
class StagedPart(WriterCommitMessage):
    """What one write task staged: its partition and its rows (and keys, with primary_key)."""

    partition: int
    rows: int
    keys: int


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def _create(self, endpoint: Endpoint, table: str, keys: bool) -> None:
        spec = self.spec
        target = f"{quote(spec['database'])}.{quote(spec['table'])}"
        if keys:
            columns = ", ".join(quote(k) for k in spec["primary_key"])
            sql = (f"CREATE TABLE {staging.full(table)} ENGINE = MergeTree ORDER BY tuple() AS SELECT {columns} "
                   f"FROM {target} WHERE 0")
        else:  # the target's structure; a MergeTree's engine too (its partitions move), else a plain MergeTree
            # (a Distributed or Buffer target's engine would send the staged rows on into its real table)
            engine = "" if spec["move"] else " ENGINE = MergeTree ORDER BY tuple()"
            sql = f"CREATE TABLE {staging.full(table)} AS {target}{engine}"
        client.execute(endpoint, sql, doing="cannot create a staging table")

    def _insert(self, endpoint: Endpoint, table: str, names: list[str], rows: list[Any]) -> None:
        if not rows:
            return
        columns = ", ".join(quote(n) for n in names)
        client.execute(endpoint, f"INSERT INTO {staging.full(table)} ({columns}) FORMAT JSONEachRow",
                       json_lines(names, rows), settings=WRITE_SETTINGS, doing="cannot stage rows")
        rows.clear()

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        spec = self.spec
        task = TaskContext.get()
        partition = task.partitionId() if task is not None else 0
        endpoint = Endpoint.from_json(spec["endpoint"])
        names, keys = list(spec["columns"]), list(spec["primary_key"])
        key_at = [names.index(k) for k in keys]
        width, kind_at, bulk = len(names), int(spec["kind_index"]), max(1, int(spec["bulk_size"]))
        rows_table = staging.name("stg", spec["commit_key"], spec["token"], partition)
        keys_table = staging.name("del", spec["commit_key"], spec["token"], partition)
        for table in (rows_table, keys_table):
            staging.drop(endpoint, table)
        created: set[str] = set()
        rows_buf: list[Any] = []
        keys_buf: list[Any] = []
        count = key_count = 0
        for row in iterator:
            values, kind = list(row)[:width], int(row[kind_at])
            if not keys and kind in DELETE_KINDS:
                raise DataError("a DELETE or UPDATE_BEFORE row reached the Clickhouse sink without primary_key: set "
                                "primary_key to apply it, or filter such rows out (FilterRowKind)")
            if keys and (kind in DELETE_KINDS or not spec["replacing"]):
                keys_buf.append([values[i] for i in key_at])
                key_count += 1
            if kind not in DELETE_KINDS:
                rows_buf.append(values)
                count += 1
            for table, buf, cols, is_keys in ((rows_table, rows_buf, names, False), (keys_table, keys_buf, keys, True)):
                if len(buf) >= bulk:
                    if table not in created:
                        self._create(endpoint, table, is_keys)
                        created.add(table)
                    self._insert(endpoint, table, cols, buf)
        for table, buf, cols, is_keys in ((rows_table, rows_buf, names, False), (keys_table, keys_buf, keys, True)):
            if buf and table not in created:
                self._create(endpoint, table, is_keys)
            self._insert(endpoint, table, cols, buf)
        return StagedPart(partition, count, key_count)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        """Record the parts Spark committed (partition, rows, keys) as the attempt's manifest."""
        spec = self.spec
        parts = sorted([m.partition, m.rows, m.keys] for m in messages if isinstance(m, StagedPart))
        staging.write_manifest(Endpoint.from_json(spec["endpoint"]), spec["commit_key"], int(spec["token"]), parts)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        """Nothing to do: the engine discards the attempt's staging."""


__all__ = ["NAME", "SPEC_OPTION", "ClickhouseDataSource", "StagedPart"]
