"""The restore trials' first targets (:mod:`restore_faults`): what a sink block is and reads back, the resources
trials share, and the sinks of the LocalFile, Jdbc (PostgreSQL, MariaDB) and Redis types.

Each type's sinks are two sink blocks of one pipeline reading the dataset "rows" (``id bigint, name string, grp
string``); each target holds a row of an earlier run before a trial, and its reader returns what a reader sees.
"""

from __future__ import annotations

import contextlib
import csv
import json
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from airflow_provider_seatunnel.connectors import localfile as lf

Row = tuple

class Resources(contextlib.ExitStack):
    """What sink types share within one benchmark run (the PostgreSQL server), released at exit."""

    postgres: Any = None
    connect: Any = None  # the Spark Connect server of the Connect-mode types (connect_targets.py)


@dataclass
class Sink:
    """One sink block of the job and how to read back what its target holds."""

    name: str
    block: str  # the HOCON block (reads the dataset "rows": id bigint, name string, grp string)
    seed: Callable[[], None]  # make the target hold rows of an earlier run (and nothing of earlier trials)
    read: Callable[[], list[Row]]  # the rows a reader sees now (old rows included)
    raw: Callable[[], int] | None = None  # informative count (files a naive reader lists, staging tables left)
    old: list[Row] = field(default_factory=list)
    upsert: bool = False  # keyed by id: an input row replaces an old row with its id

    def final(self, expected: list[Row]) -> list[Row]:
        """What the target must hold after a complete run: the old rows plus the input (upsert:
        the old rows whose id the input does not have, plus the input)."""
        if not self.upsert:
            return self.old + expected
        ids = {r[0] for r in expected}
        return [r for r in self.old if r[0] not in ids] + expected


def localfile_sinks(work: Path, rows: int, resources: Resources) -> list[Sink]:
    """Two LocalFile sinks in one pipeline: json files of ``rows // 8`` rows, and csv partitioned by ``grp``."""
    def reader(target: Path, fmt: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            out: list[Row] = []
            for path in lf.list_input_files({"path": str(target)}):
                text = Path(path).read_text()
                if fmt == "json":
                    out.extend((r["id"], r["name"], r["grp"]) for r in map(json.loads, text.splitlines()) if r)
                else:
                    grp = re.search(r"/grp=([^/]*)/", path)
                    out.extend((int(r[0]), r[1], grp.group(1) if grp else r[2]) for r in csv.reader(text.splitlines()))
            return out
        return read

    def raw(target: Path) -> Callable[[], int]:
        return lambda: sum(1 for p in target.rglob("*") if p.is_file()
                           and not any(x.startswith((".", "_")) for x in p.relative_to(target).parts))

    def seeder(target: Path, fmt: str) -> Callable[[], None]:
        def seed() -> None:
            shutil.rmtree(target, ignore_errors=True)
            if fmt == "json":
                target.mkdir(parents=True)
                (target / "old.json").write_text(json.dumps({"id": -1, "name": "old", "grp": "g0"}) + "\n")
            else:
                (target / "grp=g0").mkdir(parents=True)
                (target / "grp=g0" / "old.csv").write_text("-1,old\n")
        return seed

    a, b = work / "sink_json", work / "sink_csv"
    return [
        Sink("LocalFile json", f'LocalFile {{ plugin_input = "rows", path = "{a}", file_format_type = "json", '
                               f"batch_size = {max(1, rows // 8)} }}",
             seeder(a, "json"), reader(a, "json"), raw(a), [(-1, "old", "g0")]),
        Sink("LocalFile csv", f'LocalFile {{ plugin_input = "rows", path = "{b}", file_format_type = "csv", '
                              'partition_by = ["grp"] }',
             seeder(b, "csv"), reader(b, "csv"), raw(b), [(-1, "old", "g0")]),
    ]


def _postgres(resources: Resources) -> Any:
    """The private PostgreSQL server of this benchmark run (tests/pg.py), started once, stopped at exit."""
    if resources.postgres is None:
        from tests import pg

        resources.postgres = pg.start()
        resources.callback(resources.postgres.stop)
    return resources.postgres


def jdbc_sinks(work: Path, rows: int, resources: Resources, upsert: bool = False) -> list[Sink]:
    """Two Jdbc sinks in one pipeline writing two PostgreSQL tables (``generate_sink_sql``): plain
    INSERTs into tables without a key, or (``upsert``) ``primary_keys = ["id"]`` into tables keyed by
    ``id`` holding a stale row with the id of an input row. The second sink writes in batches of 100."""
    server = _postgres(resources)
    prefix = "upsert" if upsert else "plain"
    old = [(-1, "old", "g0")] + ([(0, "stale", "g9")] if upsert else [])

    # staging tables are named after the upstream table ("rows") and a hash of (run, pipeline, sink,
    # table): the count covers both sinks, and each trial starts without any
    staging_sql = "SELECT tablename FROM pg_tables WHERE schemaname = 'public' AND tablename LIKE 'st\\_stage\\_%'"

    def seeder(table: str) -> Callable[[], None]:
        def seed() -> None:
            staging = [r[0] for r in server.sql(staging_sql)]
            key = " PRIMARY KEY" if upsert else ""
            values = ", ".join(f"({i}, '{n}', '{g}')" for i, n, g in old)
            server.sql("".join(f"DROP TABLE IF EXISTS public.{s}; " for s in staging)
                       + f"DROP TABLE IF EXISTS public.{table}; "
                         f"CREATE TABLE public.{table} (id bigint{key}, name text, grp text); "
                         f"INSERT INTO public.{table} VALUES {values}")
        return seed

    def reader(table: str) -> Callable[[], list[Row]]:
        return lambda: [(int(i), n, g) for i, n, g in server.sql(f"SELECT id, name, grp FROM public.{table}")]

    def staging() -> int:
        return len(server.sql(staging_sql))

    sinks = []
    for n, table in enumerate((f"{prefix}_a", f"{prefix}_b")):
        options = (f'url = "{server.url}", driver = "org.postgresql.Driver", user = "{server.user}", '
                   f'password = "{server.password}", generate_sink_sql = true, database = "{server.database}", '
                   f'table = "public.{table}"' + (', primary_keys = ["id"]' if upsert else "")
                   + (", batch_size = 100" if n else ""))
        sinks.append(Sink(f"Jdbc{' upsert' if upsert else ''} {table}",
                          f'Jdbc {{ plugin_input = "rows", {options} }}',
                          seeder(table), reader(table), None if n else staging, list(old), upsert))
    return sinks


def _mysql(resources: Resources) -> Any:
    """The private MariaDB server of this benchmark run (tests/mysql.py), started once, stopped at exit."""
    if getattr(resources, "mysql", None) is None:
        from tests import mysql

        resources.mysql = mysql.start()  # type: ignore[attr-defined]
        resources.callback(resources.mysql.stop)  # type: ignore[attr-defined]
    return resources.mysql  # type: ignore[attr-defined]


def mysql_sinks(work: Path, rows: int, resources: Resources) -> list[Sink]:
    """Two Jdbc sinks in one pipeline writing two tables of a MariaDB server through MySQL Connector/J
    (``com.mysql.cj.jdbc.Driver``; Debian's MariaDB Connector/J without it): plain INSERTs into a table
    without a key, and ``primary_keys = ["id"]`` (``ON DUPLICATE KEY UPDATE``) in batches of 100 into a
    table keyed by ``id`` that holds a stale row with the id of an input row."""
    from tests import mysql

    server = _mysql(resources)
    driver = "com.mysql.cj.jdbc.Driver" if mysql.connector_j() else "org.mariadb.jdbc.Driver"
    staging_sql = (f"SELECT table_name FROM information_schema.tables WHERE table_schema = '{server.database}' "
                   "AND table_name LIKE 'st\\_stage\\_%'")

    def seeder(table: str, upsert: bool, old: list[Row]) -> Callable[[], None]:
        def seed() -> None:
            staging = [r[0] for r in server.sql(staging_sql)]
            values = ", ".join(f"({i}, '{n}', '{g}')" for i, n, g in old)
            server.sql("".join(f"DROP TABLE IF EXISTS `{s}`; " for s in staging)
                       + f"DROP TABLE IF EXISTS {table}; CREATE TABLE {table} (id BIGINT"
                       + (" PRIMARY KEY" if upsert else "") + f", name LONGTEXT, grp LONGTEXT); "
                       f"INSERT INTO {table} VALUES {values}")
        return seed

    def reader(table: str) -> Callable[[], list[Row]]:
        return lambda: [(int(i), n, g) for i, n, g in server.sql(f"SELECT id, name, grp FROM {table}")]

    def staging() -> int:
        return len(server.sql(staging_sql))

    sinks = []
    for table, upsert in (("my_plain", False), ("my_upsert", True)):
        old = [(-1, "old", "g0")] + ([(0, "stale", "g9")] if upsert else [])
        options = (f'url = "{server.url}", driver = "{driver}", user = "{server.user}", '
                   f'password = "{server.password}", generate_sink_sql = true, database = "{server.database}", '
                   f'table = "{table}"' + (', primary_keys = ["id"], batch_size = 100' if upsert else ""))
        sinks.append(Sink(f"Jdbc MySQL {table}", f'Jdbc {{ plugin_input = "rows", {options} }}',
                          seeder(table, upsert, old), reader(table), None if upsert else staging, old, upsert))
    return sinks


def _redis(resources: Resources) -> Any:
    """The private Redis server of this benchmark run (tests/redis_server.py), started once, stopped at exit."""
    if getattr(resources, "redis", None) is None:
        from tests import redis_server

        resources.redis = redis_server.start()  # type: ignore[attr-defined]
        resources.callback(resources.redis.stop)  # type: ignore[attr-defined]
    return resources.redis  # type: ignore[attr-defined]


def redis_sinks(work: Path, rows: int, resources: Resources) -> list[Sink]:
    """Two Redis sinks in one pipeline, each appending to a list (LPUSH: a duplicate shows): the rows as
    json, and as text (``id,name,grp``) in batches of 100. Each list already holds a row of an earlier run."""
    server = _redis(resources)
    client = server.client()
    old = [(-1, "old", "g0")]

    def seeder(key: str, fmt: str) -> Callable[[], None]:
        def seed() -> None:
            if fmt == "json":  # the first sink's seed: the staging and bookkeeping of earlier trials go too
                client.flushdb()
            client.delete(key)
            client.rpush(key, json.dumps({"id": -1, "name": "old", "grp": "g0"}) if fmt == "json" else "-1,old,g0")
        return seed

    def reader(key: str, fmt: str) -> Callable[[], list[Row]]:
        def read() -> list[Row]:
            values = client.lrange(key, 0, -1)
            if fmt == "json":
                return [(r["id"], r["name"], r["grp"]) for r in map(json.loads, values)]
            return [(int(i), n, g) for i, n, g in (v.split(",") for v in values)]
        return read

    def staging() -> int:
        return sum(1 for _ in client.scan_iter(match="__seatunnel:redis:stage:*", count=1000))

    conn = f'host = "{server.host}", port = {server.port}, auth = "{server.password}"'
    return [
        Sink("Redis list json", f'Redis {{ plugin_input = "rows", {conn}, key = "rf_json", data_type = list }}',
             seeder("rf_json", "json"), reader("rf_json", "json"), staging, list(old)),
        Sink("Redis list text", f'Redis {{ plugin_input = "rows", {conn}, key = "rf_text", data_type = list, '
                                'format = text, batch_size = 100 }',
             seeder("rf_text", "text"), reader("rf_text", "text"), None, list(old)),
    ]


LOCALFILE_READING = (
    "*Visible after attempt 1* is what the LocalFile source reads per sink (`old`: only the earlier row, `all`: "
    "everything, `PARTIAL` would be a half-committed target); *raw files* counts the data files a naive listing "
    "sees after attempt 1 → after the restore (files of a commit killed half way are there, but hidden from readers "
    "that honour the commit journal, until the restore finishes the commit).")
JDBC_READING = (
    "The targets are tables of a private PostgreSQL server (`tests/pg.py`), read with `psql`. *Visible after "
    "attempt 1* is what a reader of each table sees (`old`: only the earlier rows, `all`: everything, `PARTIAL` "
    "would be a half-committed table); *staging tables* counts the sink's `st_stage_*` tables after attempt 1 → "
    "after the restore, both sinks together (staged, never visible rows; the restore must drop them).")

REDIS_READING = (
    "The targets are two lists of a private Redis server (`tests/redis_server.py`), read with LRANGE. *Visible "
    "after attempt 1* is what a reader of each list sees (`old`: only the earlier row, `all`: everything, "
    "`PARTIAL` would be a half-committed list); *staging lists* counts the sink's `__seatunnel:redis:stage:*` "
    "lists after attempt 1 → after the restore (staged, never visible rows; the restore must delete them).")

MYSQL_READING = (
    "The targets are two tables of a private MariaDB server (`tests/mysql.py`), written through MySQL Connector/J "
    "and read with the `mariadb` client: `my_plain` (plain INSERTs) and `my_upsert` (`primary_keys = [\"id\"]`, "
    "`ON DUPLICATE KEY UPDATE`; it also holds a stale row with id 0 that the input replaces). *Visible after attempt "
    "1* is what a reader of each table sees (`old`: only the earlier rows, `all`: everything, `PARTIAL` would be a "
    "half-committed table); *staging tables* counts the sink's `st_stage_*` tables after attempt 1 → after the "
    "restore.")
