"""Jdbc, Kafka, Elasticsearch, RabbitMQ and InfluxDB targets for the harness: the test servers of tests/
(``tests/pg.py``, ``tests/mysql.py``, ``tests/kafka_server.py``, ``tests/opensearch_server.py``,
``tests/rabbitmq_server.py``, ``tests/influxdb_server.py``), started once per harness run, a fresh table, topic,
index, queue or database per engine run, read back. RabbitMQ and InfluxDB runs also get an input filled before
the run (:data:`RABBITMQ_MESSAGES` in the queue ``source_queue``, :data:`INFLUX_POINTS` in the measurement
``src``), for the source cases.

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
        if self.kind == "influxdb":
            self.server.reset(name)
            self.server.write(name, list(INFLUX_POINTS))
            return {"url": self.server.url, "user": self.server.user, "password": self.server.password,
                    "database": name}
        return {"url": self.server.url, "user": self.server.user, "password": self.server.password,
                "database": self.server.database, "table": name}

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
           "influxdb": "tests.influxdb_server"}


@contextlib.contextmanager
def started(kind: str) -> Iterator[Target]:
    """The test server of ``kind`` (a key of :data:`SERVERS`) for the block."""
    server = importlib.import_module(SERVERS[kind]).start()
    try:
        yield Target(kind, server)
    finally:
        server.stop()
