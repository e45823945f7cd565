"""Adapters of the sinks into servers: Jdbc on PostgreSQL and on MariaDB, Hive (a metastore), Redis and
Kafka. What landed is what a client of the server reads (SQL, the Hive table, LRANGE, a read_committed
consumer); staging is what the server holds beside the target."""

from __future__ import annotations

import json

from tests.conformance.adapters import (
    OLD,
    STEPS_SPECS,
    Adapter,
    Row,
    Target,
    by_id,
    staging_on_disk,
)

NO_SAVE_MODES = "the sink has no data_save_mode (its plan refuses the option): there is nothing to drop"


# -- Jdbc (PostgreSQL, MariaDB) ---------------------------------------------------------------------------

def _jdbc_seed(t: Target) -> None:
    t.env.sql(f"CREATE TABLE {t.name} (id INT, name VARCHAR(20)); INSERT INTO {t.name} VALUES (-1, 'old')")


def _jdbc_landed(t: Target) -> list[Row]:
    return by_id([{"id": i, "name": n} for i, n in t.env.sql(f"SELECT id, name FROM {t.name}")])


def _jdbc_block(conn) -> object:
    def block(t: Target, plugin_input: str, extra: str) -> str:
        more = f", {extra}" if extra else ""
        return f'Jdbc {{ plugin_input = "{plugin_input}", {conn(t.env)}, generate_sink_sql = true, ' \
               f'table = "{t.name}"{more} }}'
    return block


def _pg_conn(db) -> str:
    from tests.runtime.test_jdbc_sink import conn

    return conn(db)


def _my_conn(my) -> str:
    from tests.runtime.test_jdbc_mysql import conn

    return conn(my)


def _pg_staging(t: Target) -> bool:  # a staging table is named after its target (and the attempt)
    return bool(t.env.sql(f"SELECT tablename FROM pg_tables WHERE tablename LIKE '%{t.name}%' "
                          f"AND tablename <> '{t.name}'"))


def _my_staging(t: Target) -> bool:
    return bool(t.env.sql("SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE() "
                          f"AND table_name LIKE '%{t.name}%' AND table_name <> '{t.name}'"))


JDBC_POSTGRES = Adapter("Jdbc-PostgreSQL", _jdbc_seed, _jdbc_block(_pg_conn), _jdbc_landed, _pg_staging,
                        server="db", markers=("postgres",))
JDBC_MARIADB = Adapter("Jdbc-MariaDB", _jdbc_seed, _jdbc_block(_my_conn), _jdbc_landed, _my_staging,
                       server="my", markers=("mariadb",))


# -- Hive (a metastore; the table's files in its warehouse) -----------------------------------------------

def _hive_seed(t: Target) -> None:
    t.spark.sql(f"CREATE TABLE d.{t.name} (id int, name string) STORED AS ORC")
    t.spark.sql(f"INSERT INTO d.{t.name} VALUES (-1, 'old')")


def _hive_landed(t: Target) -> list[Row]:
    t.spark.catalog.refreshTable(f"d.{t.name}")
    return by_id([r.asDict() for r in t.spark.table(f"d.{t.name}").collect()])


HIVE = Adapter(
    "Hive", _hive_seed,
    lambda t, i, extra: f'Hive {{ plugin_input = "{i}", table_name = "d.{t.name}", metastore_uri = "{t.env.uri}"'
                        f"{', ' + extra if extra else ''} }}",
    _hive_landed,
    lambda t: staging_on_disk(t.env.warehouse / "d.db" / t.name),
    server="metastore", session="hive", markers=("hive", "spark"), rolls_forward=True, specs=STEPS_SPECS,
    not_applicable={"drop_data": NO_SAVE_MODES})


# -- Redis (a list: each row one JSON element) -------------------------------------------------------------

def _redis_seed(t: Target) -> None:
    t.env.client().rpush(t.name, json.dumps(OLD))


def _redis_staging(t: Target) -> bool:  # the sink's staging lists, under its bookkeeping prefix
    return any(":stage:" in k for k in t.env.client().scan_iter("*stage*"))


REDIS = Adapter(
    "Redis", _redis_seed,
    lambda t, i, extra: f'Redis {{ plugin_input = "{i}", {t.env.options()}, key = "{t.name}", data_type = list'
                        f"{', ' + extra if extra else ''} }}",
    lambda t: by_id([json.loads(v) for v in t.env.client().lrange(t.name, 0, -1)]),
    _redis_staging, server="redis_server", markers=("redis",),
    not_applicable={"drop_data": NO_SAVE_MODES})


# -- Kafka (EXACTLY_ONCE: one transaction per attempt) -----------------------------------------------------

def _kafka_seed(t: Target) -> None:
    t.env.create_topic(t.name)
    t.env.produce(t.name, [json.dumps(OLD)])


KAFKA = Adapter(
    "Kafka", _kafka_seed,
    lambda t, i, extra: f'Kafka {{ plugin_input = "{i}", bootstrap.servers = "{t.env.bootstrap}", '
                        f'topic = "{t.name}", semantics = EXACTLY_ONCE{", " + extra if extra else ""} }}',
    lambda t: by_id([json.loads(v) for _k, v, _p, _o in t.env.consume(t.name, isolation="read_committed")]),
    lambda t: False, server="kafka", markers=("kafka",),
    not_applicable={
        "drop_data": "a topic cannot be emptied by a producer: the sink has no data_save_mode",
        "staging": "an aborted attempt's records stay in the log marked aborted (Kafka's transactions): a "
                   "read_committed consumer, the only reader the sink promises exactly-once to, never sees them"})

ADAPTERS = (JDBC_POSTGRES, JDBC_MARIADB, HIVE, REDIS, KAFKA)
