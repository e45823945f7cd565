"""Jdbc, Kafka and Elasticsearch targets for the harness: the test servers of tests/ (``tests/pg.py``,
``tests/mysql.py``, ``tests/kafka_server.py``, ``tests/opensearch_server.py``), started once per harness run, a
fresh table, topic or index name per engine run, read back.

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
           "elasticsearch": "tests.opensearch_server"}


@contextlib.contextmanager
def started(kind: str) -> Iterator[Target]:
    """The test server of ``kind`` (a key of :data:`SERVERS`) for the block."""
    server = importlib.import_module(SERVERS[kind]).start()
    try:
        yield Target(kind, server)
    finally:
        server.stop()
