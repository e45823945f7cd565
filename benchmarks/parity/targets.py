"""Jdbc, Kafka, Elasticsearch, RabbitMQ, InfluxDB and Cassandra targets for the harness (and Paimon's local
warehouses, :mod:`benchmarks.parity.paimon_tables`): the test servers of tests/ (``tests/pg.py``,
``tests/mysql.py``, ``tests/kafka_server.py``, ``tests/opensearch_server.py``, ``tests/rabbitmq_server.py``,
``tests/influxdb_server.py``, ``tests/cassandra_server.py``), started once per harness run, a fresh table, topic,
index, queue, database or keyspace per engine run, read back. RabbitMQ, InfluxDB and Cassandra runs also get an
input filled before the run (:data:`RABBITMQ_MESSAGES` in the queue ``source_queue``, :data:`INFLUX_POINTS` in
the measurement ``src``, :data:`CASSANDRA_SOURCE_ROWS` in the table ``src``), for the source cases.

A :class:`Target` gives each run its variables (``url``/``user``/``password``/``database``/``table``, or
``bootstrap``/``topic``) and reads what the run wrote: a :class:`~benchmarks.parity.compare.Table` (rows as
text, and for tables the column types the sink created) or Kafka records as ``(key, value)``.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from .compare import Table

#: the messages of a RabbitMQ run's ``source_queue`` (JSON rows: id bigint, name string, score double)
RABBITMQ_MESSAGES = ('{"id": 1, "name": "ann", "score": 1.5}', '{"id": 2, "name": null, "score": 2.25}',
                     '{"id": 3, "name": "b, c", "score": -0.5}')
#: the points of an InfluxDB run's measurement ``src``: c_int 0..11, two hosts, one point a second
INFLUX_POINTS = tuple(
    f'src,host=h{i % 2} c_int={i}i,c_double={i / 4},c_str="s{i}",c_bool={str(i % 3 == 0).lower()} '
    f"{1_700_000_000 + i}000000000" for i in range(12))

#: the tables of a Cassandra run's keyspace: the sink case's two (empty) and the source case's ``src`` and
#: ``src_null`` (one row of NULLs in the columns SeaTunnel 2.3.8 reads without failing)
CASSANDRA_COLUMNS = ("id int PRIMARY KEY, c_big bigint, c_str text, c_double double, c_float float, c_bool boolean, "
                     "c_dec decimal, c_date date, c_ts timestamp, c_list list<text>, c_map map<text, int>")
CASSANDRA_TABLES = {"sink_t": CASSANDRA_COLUMNS, "sink_b": CASSANDRA_COLUMNS,
                    "src": CASSANDRA_COLUMNS + ", c_small smallint, c_tiny tinyint, c_uuid uuid, c_inet inet, "
                    "c_varint varint, c_blob blob, c_set set<int>",
                    "src_null": "id int PRIMARY KEY, c_int int, c_big bigint, c_double double, c_bool boolean, "
                                "c_str text"}
#: the rows of ``src`` (CQL literals, in the column order of CASSANDRA_TABLES["src"])
CASSANDRA_SOURCE_ROWS = (
    "1, 10000000000, 'a', 1.5, 0.25, true, 12.34, '2024-01-02', '2024-01-02 03:04:05.123+0000', ['x', 'y'], "
    "{'k': 1}, 7, 1, 6ba7b810-9dad-11d1-80b4-00c04fd430c8, '10.0.0.1', 123456789012345678901234567890, 0xcafe, {3, 1}",
    "2, -3, 'b, c', 0.25, -1.5, false, -0.5, '1999-12-31', '1999-12-31 23:59:59+0000', [], {}, -7, -1, "
    "00000000-0000-0000-0000-000000000000, '::1', -1, 0x, {}")


@dataclass
class Target:
    kind: str
    server: Any

    def variables(self, tag: str) -> dict[str, str]:
        """A fresh table or topic named after ``tag`` (the engine and run)."""
        name = f"parity_{tag}_{uuid.uuid4().hex[:8]}"
        if self.kind == "kafka":
            self.server.create_topic(name)
            return {"bootstrap": self.server.bootstrap, "topic": name}
        if self.kind == "elasticsearch":
            return {"hosts": self.server.url, "index": name}
        if self.kind == "rabbitmq":
            self.server.publish(f"{name}_src", list(RABBITMQ_MESSAGES))
            return {"host": self.server.host, "port": str(self.server.port), "user": self.server.user,
                    "password": self.server.password, "queue": name, "source_queue": f"{name}_src"}
        if self.kind == "cassandra":
            return self._cassandra(name)
        if self.kind == "paimon":
            return {"warehouse": str(self.server.fresh(name)),
                    "source_warehouse": str(self.server.fresh(f"{name}_src", source=True))}
        if self.kind == "influxdb":
            self.server.reset(name)
            self.server.write(name, list(INFLUX_POINTS))
            return {"url": self.server.url, "user": self.server.user, "password": self.server.password,
                    "database": name}
        return {"url": self.server.url, "user": self.server.user, "password": self.server.password,
                "database": self.server.database, "table": name}

    def _cassandra(self, keyspace: str) -> dict[str, str]:
        """A fresh keyspace with :data:`CASSANDRA_TABLES`, ``src`` holding :data:`CASSANDRA_SOURCE_ROWS`."""
        self.server.keyspace(keyspace)
        names = "id, c_big, c_str, c_double, c_float, c_bool, c_dec, c_date, c_ts, c_list, c_map, c_small, c_tiny, " \
                "c_uuid, c_inet, c_varint, c_blob, c_set"
        self.server.execute(*[f"CREATE TABLE {keyspace}.{t} ({cols})" for t, cols in CASSANDRA_TABLES.items()],
                            *[f"INSERT INTO {keyspace}.src ({names}) VALUES ({r})" for r in CASSANDRA_SOURCE_ROWS],
                            f"INSERT INTO {keyspace}.src_null (id) VALUES (1)")
        return {"host": self.server.host, "keyspace": keyspace, "user": "cassandra", "password": "cassandra"}

    def read_cassandra(self, keyspace: str) -> list[tuple[bytes | None, bytes | None]]:
        """Cassandra: the rows of ``sink_t`` and ``sink_b`` as ``(b"<table>", JSON of text values)`` and each
        table's column types (``(b"types:<table>", JSON)``), as the server reports them."""
        out: list[tuple[bytes | None, bytes | None]] = []
        for table in ("sink_t", "sink_b"):
            types_q = ("SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = %s AND "
                       "table_name = %s")
            types, rows = self.server.execute(types_q, f"SELECT JSON * FROM {keyspace}.{table}",
                                              params=[(keyspace, table)])
            out.extend((table.encode(), json.dumps(json.loads(r[0]), sort_keys=True).encode()) for r in rows)
            out.append((f"types:{table}".encode(), json.dumps(dict(sorted(types))).encode()))
        return out

    def read_table(self, table: str) -> Table:
        """The table's rows (text, NULL as None) and its columns' types as the database reports them."""
        if self.kind == "postgres":
            types = self.server.sql("SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE "
                                    f"attrelid = 'public.{table}'::regclass AND attnum > 0 AND NOT attisdropped "
                                    "ORDER BY attnum")
            rows = self.server.sql(f"SELECT * FROM public.{table}")
        else:
            types = self.server.sql("SELECT column_name, column_type FROM information_schema.columns WHERE "
                                    f"table_schema = DATABASE() AND table_name = '{table}' ORDER BY ordinal_position")
            rows = self.server.sql(f"SELECT * FROM `{table}`")
        return Table(tuple(str(c) for c, _ in types), tuple(str(t) for _, t in types), tuple(tuple(r) for r in rows))

    def read_records(self, topic: str) -> list[tuple[bytes | None, bytes | None]]:
        return [(k, v) for k, v, _, _ in self.server.consume(topic, isolation="read_uncommitted")]

    def read_messages(self, variables: dict[str, str]) -> list[tuple[bytes | None, bytes | None]]:
        """RabbitMQ: the messages of ``queue`` as (None, body), then those left in ``source_queue`` as
        (``b"left"``, body); each taken and returned (unacknowledged)."""
        out: list[tuple[bytes | None, bytes | None]] = []
        with self.server.channel() as ch:
            for key, queue in ((None, variables["queue"]), (b"left", variables["source_queue"])):
                if not self.server.count(queue):
                    continue
                while True:
                    method, _, body = ch.basic_get(queue, auto_ack=False)
                    if method is None:
                        break
                    out.append((key, bytes(body)))
        return out

    def read_points(self, variables: dict[str, str]) -> list[tuple[bytes | None, bytes | None]]:
        """InfluxDB: the points of the measurements ``keyed`` (``(b"keyed", JSON)``, time included) and ``plain``
        (``(b"plain", JSON)``, without their time: each engine stamps its own), then each measurement's field
        types (``(b"types:<m>", JSON)``)."""
        db = variables["database"]
        out: list[tuple[bytes | None, bytes | None]] = []
        for m in ("keyed", "plain"):
            rows = self.server.query(f'SELECT * FROM "{m}"', db)
            if not rows:
                continue
            for row in rows:
                if m == "plain":
                    row.pop("time", None)
                out.append((m.encode(), json.dumps(row, sort_keys=True).encode()))
            types = {r["fieldKey"]: r["fieldType"] for r in self.server.query(f'SHOW FIELD KEYS FROM "{m}"', db)}
            out.append((f"types:{m}".encode(), json.dumps(types, sort_keys=True).encode()))
        return out

    def read_documents(self, index: str) -> list[tuple[bytes | None, bytes | None]]:
        """The documents of ``<index>_keyed`` as (``_id``, source JSON with sorted keys) and of ``<index>_plain``
        as (None, source JSON): ids the server or the sink generated are no data."""
        out: list[tuple[bytes | None, bytes | None]] = []
        for suffix, keyed in (("_keyed", True), ("_plain", False)):
            if f"{index}{suffix}" not in self.server.indices():
                continue
            for doc_id, doc in self.server.docs(f"{index}{suffix}").items():
                text = json.dumps(doc, sort_keys=True).encode()
                out.append((f"{suffix}:{doc_id}".encode() if keyed else suffix.encode(), text))
        return out


#: a target kind -> the tests/ helper module that starts its server (``start()`` -> a server with ``stop()``)
SERVERS = {"postgres": "tests.pg", "mariadb": "tests.mysql", "kafka": "tests.kafka_server",
           "elasticsearch": "tests.opensearch_server", "rabbitmq": "tests.rabbitmq_server",
           "influxdb": "tests.influxdb_server", "cassandra": "tests.cassandra_server",
           "paimon": "benchmarks.parity.paimon_tables"}


@contextlib.contextmanager
def started(kind: str) -> Iterator[Target]:
    """The test server of ``kind`` (a key of :data:`SERVERS`) for the block."""
    server = importlib.import_module(SERVERS[kind]).start()
    try:
        yield Target(kind, server)
    finally:
        server.stop()
