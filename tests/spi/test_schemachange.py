"""Schema changes a CDC source follows (``schema-changes.enabled``), without Spark or a server: the
change events found between two column lists (by identity, or by name with a named rename), the
shapes a stream's reader names logged values by, what counts as a safe widening, and the refusal of
a change a sink does not follow."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.connectors.cdc.schemachange import Column, current_names, diff, follow, named, start
from airflow_provider_seatunnel.spi.errors import PipelineError, RuntimeConfigError
from airflow_provider_seatunnel.spi.schemachange import (
    ADD,
    DROP,
    MODIFY,
    RENAME,
    SchemaChange,
    changes_of,
    decode,
    encode,
    refuse_unfollowed,
    widens,
)


def col(name, spark="int", sql="integer", ident=None, log=""):
    return Column(name, spark, sql, ident, log)


def test_a_diff_by_identity_tells_a_rename_from_a_drop_and_an_add():
    before = [col("id", ident=1), col("name", "string", "varchar(10)", 2), col("junk", "string", "text", 3),
              col("score", ident=4)]
    after = [col("id", ident=1), col("title", "string", "varchar(40)", 2), col("score", "bigint", "bigint", 4),
             col("note", "string", "text", 5)]
    changes = diff("public.t", before, after, capture="c", first=3, position="0/1")
    assert [(c.kind, c.column, c.new_name, c.new_type) for c in changes] == [
        (DROP, "junk", None, None), (RENAME, "name", "title", "string"), (MODIFY, "title", None, "string"),
        (MODIFY, "score", None, "bigint"), (ADD, "note", None, "string")]
    assert [c.ordinal for c in changes] == [3, 4, 5, 6, 7] and {c.capture for c in changes} == {"c"}
    assert changes[2].old_sql == "varchar(10)" and changes[2].new_sql == "varchar(40)"
    assert changes[1].describe() == "RENAME COLUMN name TO title of public.t"


def test_without_identities_a_rename_needs_its_name_else_it_is_a_drop_and_an_add():
    before, after = [col("id"), col("a")], [col("id"), col("b")]
    assert [c.kind for c in diff("t", before, after)] == [DROP, ADD]
    assert [(c.kind, c.column, c.new_name) for c in diff("t", before, after, renames={"a": "b"})] == [
        (RENAME, "a", "b")]
    assert diff("t", before, before) == ()


def test_safe_widenings_and_narrowings():
    def change(old, new, old_sql=None, new_sql=None):
        return SchemaChange("t", MODIFY, "c", old_type=old, new_type=new, old_sql=old_sql, new_sql=new_sql)

    assert widens(change("int", "bigint")) and widens(change("smallint", "int")) and widens(change("float", "double"))
    assert widens(change("int", "double")) and widens(change("int", "decimal(12,2)"))
    assert widens(change("decimal(8,2)", "decimal(10,3)"))
    assert widens(change("string", "string", "varchar(10)", "varchar(40)"))
    assert widens(change("string", "string", "varchar(10)", "text"))
    assert not widens(change("bigint", "int"))
    assert not widens(change("bigint", "double"))  # 64-bit integers do not all fit a double
    assert not widens(change("decimal(10,3)", "decimal(10,2)"))
    assert not widens(change("int", "decimal(9,0)"))
    assert not widens(change("string", "string", "varchar(40)", "varchar(10)"))
    assert not widens(change("string", "string", "text", "varchar(10)"))
    assert not widens(change("string", "int"))


def test_changes_travel_as_column_metadata_and_a_sink_refuses_what_it_does_not_follow():
    from pyspark.sql import types as T

    from airflow_provider_seatunnel.spi.schemachange import with_changes

    changes = (SchemaChange("public.t", ADD, "note", new_type="string", capture="c", ordinal=0),
               SchemaChange("public.t", DROP, "junk", old_type="string", capture="c", ordinal=1))
    assert decode(encode(changes)) == changes
    schema = with_changes(T.StructType([T.StructField("id", T.IntegerType()), T.StructField("note", T.StringType())]),
                          changes)
    assert changes_of(schema) == changes and changes_of(T.StructType([T.StructField("id", T.IntegerType())])) == ()
    refuse_unfollowed(changes[:1], frozenset({ADD}), "LocalFile[0]")
    with pytest.raises(RuntimeConfigError, match=r"LocalFile\[0\] cannot follow the schema change DROP COLUMN junk "
                                                 r"of public\.t") as info:
        refuse_unfollowed(changes, frozenset({ADD}), "LocalFile[0]")
    assert info.value.deterministic


def test_a_state_follows_changes_and_its_shapes_name_values_logged_before_them():
    from pyspark.sql import types as T

    fields = [T.StructField("id", T.IntegerType()), T.StructField("name", T.StringType()),
              T.StructField("junk", T.StringType())]
    state = {"table": "public.t", "lsn": 5, "slot": "s", "schema": T.StructType(fields).json()}
    old = [col("id", ident=1, log="23:-1"), col("name", "string", "text", 2, "25:-1"),
           col("junk", "string", "text", 3, "25:-1")]
    start(state, old)
    new = [col("id", ident=1, log="23:-1"), col("title", "string", "text", 2, "25:-1"),
           col("note", "string", "text", 4, "25:-1")]
    schema = T.StructType([T.StructField("id", T.IntegerType()), T.StructField("title", T.StringType()),
                           T.StructField("note", T.StringType())])
    changes = follow(state, new, schema, "0/10")
    assert [c.kind for c in changes] == [DROP, RENAME, ADD]
    spec = {"table": "public.t", "schema_changes": True, "shapes": state["shapes"]}
    # a row logged before the changes: name lands in title, junk is left out
    assert current_names(spec, ["id", "name", "junk"], ["23:-1", "25:-1", "25:-1"]) == ["id", "title", None]
    assert current_names(spec, ["id", "title", "note"]) == ["id", "title", "note"]
    with pytest.raises(PipelineError, match="changed its columns while the stream ran") as info:
        named(spec, ["id", "title", "note", "more"])
    assert not info.value.deterministic  # the next run follows it
    assert named({**spec, "schema_changes": False}, ["id", "x"]) == ["id", "x"]
    stream = T.StructType.fromJson(__import__("json").loads(state["schema"]))
    assert changes_of(stream) == changes
    assert follow(state, new, schema, "0/11") == ()  # nothing new: nothing recorded twice
    later = follow(state, [*new, col("more", ident=5)], T.StructType([*schema.fields, T.StructField(
        "more", T.IntegerType())]))
    assert [(c.kind, c.ordinal) for c in later] == [(ADD, 3)]


def test_mysql_alter_table_statements_name_their_column_renames():
    from airflow_provider_seatunnel.connectors.mysql_cdc.schemachange import compose, renamed_columns

    assert renamed_columns("ALTER TABLE t CHANGE COLUMN a b VARCHAR(40), RENAME COLUMN `c` TO `d`", "db.t", "db") == [
        ("a", "b"), ("c", "d")]
    assert renamed_columns("alter table db.t change x x bigint, add column y decimal(10, 2)", "db.t", "") == []
    assert renamed_columns("ALTER TABLE other.t RENAME COLUMN a TO b", "db.t", "db") is None
    assert renamed_columns("INSERT INTO t VALUES (1)", "db.t", "db") is None
    assert compose({}, [("a", "b"), ("b", "c"), ("x", "y")]) == {"a": "c", "x": "y"}
