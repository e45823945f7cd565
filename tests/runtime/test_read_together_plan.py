"""Tables read together without Spark: which databases prune a UNION ALL's branches, how tables
group by row type, the group's query, the one query of many tables' split bounds and its predicates (connectors/jdbc/together.py), and when the
runtime pairs a source's groups with its sink (runtime/together.py)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from airflow_provider_seatunnel.connectors.jdbc import CONNECTOR as JDBC
from airflow_provider_seatunnel.connectors.jdbc.columns import signatures
from airflow_provider_seatunnel.connectors.jdbc.source import SourceTable, bounds_sql, needs_bounds
from airflow_provider_seatunnel.connectors.jdbc.together import (
    group_predicates,
    pruning_verified,
    row_groups,
    union_sql,
)
from airflow_provider_seatunnel.runtime import together
from airflow_provider_seatunnel.spi.together import ReadsTogether, StagesShared, TableGroup, TablesTogether


@pytest.mark.parametrize(("family", "product", "version", "expected"), [
    ("postgresql", "PostgreSQL", "15.18 (Debian 15.18-0+deb12u1)", True),
    ("postgresql", "Redshift", "8.0.2", False),  # PostgreSQL's dialect, another planner: not checked
    ("mysql", "MySQL", "5.5.5-10.11.19-MariaDB-0+deb12u1-log", True),  # MySQL Connector/J's prefix
    ("mysql", "MariaDB", "10.3.39-MariaDB", True),
    ("mysql", "MariaDB", "10.2.44-MariaDB", False),  # no pushdown into a UNION before 10.3
    ("mysql", "MySQL", "8.0.36", False),  # MySQL's pushdown into a UNION could not be checked here
    ("oracle", "Oracle", "19c", False),
])
def test_only_databases_checked_to_prune_branches_read_together(family, product, version, expected):
    assert pruning_verified(family, product, version) is expected


def test_tables_group_by_row_type_in_even_groups_of_at_most_the_limit():
    a, b, c = ("int",), ("text",), ("date",)
    signatures = [a, b, a, c, a, a, b, a]
    assert row_groups(signatures, most=64) == [[0, 2, 4, 5, 7], [1, 6]]  # c alone: read on its own
    assert row_groups(signatures, most=2) == [[0, 2], [1, 6], [4, 5], [7]]  # 5 tables: 2 + 2 + 1
    assert row_groups([a] * 130, most=64) == [list(range(0, 44)), list(range(44, 88)), list(range(88, 130))]
    assert row_groups([a, b, c]) == []
    # at least as many groups as the sink writes at once, while each keeps two tables
    assert row_groups(signatures, parts=2) == [[0, 2, 4], [1, 6], [5, 7]]
    assert row_groups([a] * 200, parts=4) == [list(range(i, i + 50)) for i in range(0, 200, 50)]
    assert row_groups([a] * 3, parts=4) == [[0, 1], [2]]


def test_the_group_query_numbers_each_tables_rows():
    sql = union_sql(["SELECT * FROM t0", "SELECT * FROM (SELECT * FROM t1) w WHERE x > 1"], '"__st_table"')
    assert sql == ('SELECT st_b.*, 0 AS "__st_table" FROM (SELECT * FROM t0) st_b UNION ALL '
                   'SELECT st_b.*, 1 AS "__st_table" FROM (SELECT * FROM (SELECT * FROM t1) w WHERE x > 1) st_b')


def test_one_query_asks_the_split_bounds_of_many_tables():
    sql = bounds_sql([("SELECT * FROM t0", '"id"'), ("SELECT * FROM (SELECT * FROM t1) w WHERE x > 1", '"k"')])
    assert sql == ('SELECT 0, COUNT(*), MIN("id"), MAX("id") FROM (SELECT * FROM t0) st_jdbc_bounds UNION ALL '
                   'SELECT 1, COUNT(*), MIN("k"), MAX("k") FROM (SELECT * FROM (SELECT * FROM t1) w WHERE x > 1) '
                   'st_jdbc_bounds')


def test_a_tables_signature_is_its_columns_definitions_in_order():
    rows = [("b", 2, "name", "varchar(40)"), ("a", 2, "name", "varchar(40)"), ("a", 1, "id", "int(11)"),
            ("b", 1, "id", "int(11)"), ("c", 1, "id", "int(11) unsigned"), ("c", "2", "name", "varchar(40)"),
            ("d", 1, "name", "varchar(40)"), ("d", 2, "id", "int(11)")]
    found = signatures(rows)
    assert found["a"] == found["b"] == (("id", "int(11)"), ("name", "varchar(40)"))
    assert found["c"] != found["a"]  # another type
    assert found["d"] != found["a"]  # the same columns in another order


@pytest.mark.parametrize(("query", "partition_column", "column", "expected"), [
    (None, None, ("id", 4, 0), True),  # a table split by its primary key: rows and bounds asked
    (None, "name", ("name", 12, 0), True),  # a string key: its rows decide the buckets
    ("SELECT * FROM t", "id", ("id", 4, 0), False),  # the fixed splitter: partition_num, its own bounds
    (None, None, ("at", 93, 0), False),  # a key that cannot split: one split, nothing asked
    (None, None, None, False),  # no key
])
def test_only_tables_the_dynamic_splitter_splits_ask_bounds(query, partition_column, column, expected):
    spec = SourceTable("db.t", query, None if query else "db.t", partition_column, None, None, None)
    assert needs_bounds(spec, column) is expected


def test_predicates_split_large_tables_and_batch_small_ones():
    splits = [None, ['("id" >= 1 AND "id" <= 5) OR "id" IS NULL', '"id" >= 6 AND "id" <= 9'], None, ["x = 1"]]
    assert group_predicates("tag", splits, readers=2) == [
        'tag = 1 AND (("id" >= 1 AND "id" <= 5) OR "id" IS NULL)',  # the null keys stay with the first split
        'tag = 1 AND ("id" >= 6 AND "id" <= 9)',
        "tag = 3 AND (x = 1)",
        "tag = 0", "tag = 2",  # two whole tables, as many predicates as readers
    ]
    whole = group_predicates("tag", [None] * 64, readers=2)
    assert len(whole) == 4 and whole[0] == f"tag IN ({', '.join(map(str, range(16)))})"  # 16 tables a task
    numbers = [int(n) for p in whole for n in p.removeprefix("tag IN (").rstrip(")").split(", ")]
    assert numbers == list(range(64))  # every table in exactly one predicate
    assert group_predicates("tag", [None] * 3, readers=8) == ["tag = 0", "tag = 1", "tag = 2"]


def test_a_group_knows_its_tables_numbers():
    group = TableGroup(object(), ("db.a", "db.b"))
    data = TablesTogether({"db.a": 1, "db.b": 2, "db.c": 3}, [group])
    assert group.number("db.b") == 1 and data.group_of("db.a") is group and data.group_of("db.c") is None


def _walk(sink_plugin="Jdbc", sink_parallelism=2, streaming=False, downstream=("sink",), up=("src",)):
    src = SimpleNamespace(id="src", kind="source", plugin="Jdbc", parallelism=2)
    sink = SimpleNamespace(id="sink", kind="sink", plugin=sink_plugin, parallelism=sink_parallelism, multi_table=True)
    other = SimpleNamespace(id="other", kind="transform", plugin="Sql", parallelism=2)
    return SimpleNamespace(streaming=streaming, schema_only=False, ctx=SimpleNamespace(spark=None),
                           down={"src": list(downstream)}, up={"sink": list(up)},
                           by_id={"src": src, "sink": sink, "other": other}), src


def test_the_runtime_reads_together_only_straight_into_a_sink_that_stages_from_groups():
    assert isinstance(JDBC, ReadsTogether) and isinstance(JDBC, StagesShared)
    w, src = _walk()
    assert together.pairs(w, src, JDBC)
    assert not together.pairs(*_walk(sink_parallelism=3), JDBC)  # a repartition between
    assert not together.pairs(*_walk(streaming=True), JDBC)
    assert not together.pairs(*_walk(downstream=("other",)), JDBC)  # a transform between
    assert not together.pairs(*_walk(downstream=("sink", "other")), JDBC)  # a second consumer
    assert not together.pairs(*_walk(up=("src", "another")), JDBC)  # the sink unions another input
    assert not together.pairs(*_walk(sink_plugin="Console"), JDBC)  # a sink that cannot stage from a group
    assert not together.pairs(w, src, object())  # a source that cannot read together


def _target(keys):
    from airflow_provider_seatunnel.connectors.jdbc.target import target_of

    config = {"url": "jdbc:postgresql://127.0.0.1:1/db", "driver": "org.postgresql.Driver", "user": "u",
              "password": "p", "generate_sink_sql": True, "table": "copy.${table_name}",
              **({"primary_keys": keys} if keys else {})}
    return target_of(config, "db.public.a", ["id", "v", "name"])[1]


@pytest.mark.parametrize(("sink_keys", "distinct", "merged"), [
    (["id"], [("id",), ("id",)], False),  # each table's rows distinct by the sink's key: none merged
    (["ID", "v"], [("id",), ("v", "id")], False),  # a superset of each table's key, names in any case
    (["id"], [("id", "v"), ("id",)], True),  # one table's key is wider than the sink's: two rows may share an id
    (["id"], [("id",), None], True),  # a table whose rows are not known distinct (a split read, no key)
    (["id"], [], True),  # a source that says nothing
    (None, [None, None], False),  # no sink keys: every row is staged anyway
])
def test_a_shared_staging_merges_rows_by_key_unless_each_tables_rows_are_distinct_by_its_keys(sink_keys, distinct,
                                                                                               merged):
    from airflow_provider_seatunnel.connectors.jdbc.shared import _merges_rows

    group = TableGroup(object(), ("db.public.a", "db.public.b"), distinct=tuple(distinct))
    assert _merges_rows(_target(sink_keys), ["id", "v", "name"], group, [0, 1]) is merged


def test_only_the_tables_a_shared_staging_writes_decide_whether_it_merges():
    from airflow_provider_seatunnel.connectors.jdbc.shared import _merges_rows

    group = TableGroup(object(), ("db.public.a", "db.public.b"), distinct=(("id",), None))
    assert not _merges_rows(_target(["id"]), ["id", "v", "name"], group, [0])
    assert _merges_rows(_target(["id"]), ["id", "v", "name"], group, [1])


def test_a_table_is_distinct_by_its_primary_key_only_when_one_statement_reads_it():
    from airflow_provider_seatunnel.connectors.jdbc.together import _distinct, _Table
    from airflow_provider_seatunnel.spi.schema import TableKeys

    keyed = TableKeys(("pk", ("id", "v")))
    whole = _Table(None, "SELECT 1", [], None, keyed)
    one_split = _Table(None, "SELECT 1", [], ["id >= 0"], keyed)
    splits = _Table(None, "SELECT 1", [], ["id < 5", "id >= 5"], keyed)
    assert _distinct(whole) == ("id", "v") and _distinct(one_split) == ("id", "v")
    assert _distinct(splits) is None  # a query per split: a row whose split column changes can be read twice
    assert _distinct(_Table(None, "SELECT 1", [], None, TableKeys())) is None  # no primary key
    assert _distinct(_Table(None, "SELECT 1", [], None, None)) is None  # a query: its keys unknown
