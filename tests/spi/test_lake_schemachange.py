"""How the lake sinks plan a CDC source's schema changes, without Spark: the DDL each change needs against
the table's columns, the changes a table already recorded (its property, its history) or already shows
(skipped), and the refusals before anything is applied: a drop or rename without Delta's column mapping,
a type change without its type widening, a narrowing; and which pipelines create evolvable tables."""

from __future__ import annotations

import json
import types

import pytest

from airflow_provider_seatunnel.connectors.delta import evolve
from airflow_provider_seatunnel.connectors.delta.tables import TableState
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.schemachange import ADD, DROP, MODIFY, RENAME, SchemaChange, pipeline_follows

CHANGES = (SchemaChange("public.t", RENAME, "name", new_name="title", old_type="string", new_type="string",
                        capture="c", ordinal=1),
           SchemaChange("public.t", DROP, "junk", old_type="string", capture="c", ordinal=2),
           SchemaChange("public.t", MODIFY, "score", old_type="int", new_type="bigint", capture="c", ordinal=3),
           SchemaChange("public.t", MODIFY, "title", old_type="string", new_type="string", old_sql="varchar(10)",
                        new_sql="varchar(40)", capture="c", ordinal=4),
           SchemaChange("public.t", ADD, "note", new_type="string", capture="c", ordinal=5))


def state(columns: dict[str, str], **properties: str) -> TableState:
    """A Delta table's state; a type ``varchar(n)`` is a string declared so (as Spark keeps it)."""
    def field(name: str, kind: str) -> dict:
        declared = kind.startswith("varchar")
        return {"name": name, "type": "string" if declared else kind, "nullable": True,
                "metadata": {evolve.CHAR_VARCHAR: kind} if declared else {}}

    schema = {"type": "struct", "fields": [field(n, t) for n, t in columns.items()]}
    return TableState("/lake/t", 3, columns=tuple(columns), properties=tuple(properties.items()),
                      schema_json=json.dumps(schema))


EVOLVABLE = {evolve.COLUMN_MAPPING: "name", evolve.TYPE_WIDENING: "true"}
BEFORE = {"id": "integer", "name": "varchar(10)", "score": "integer", "junk": "string"}


def test_each_change_gets_its_ddl_in_order_and_a_table_showing_the_result_gets_none():
    steps = evolve.plan(state(BEFORE, **EVOLVABLE), CHANGES, "sink[0] Delta", set)
    assert [s.op and evolve.ddl("delta.`/lake/t`", s.op) for s in steps] == [
        "ALTER TABLE delta.`/lake/t` RENAME COLUMN `name` TO `title`",
        "ALTER TABLE delta.`/lake/t` DROP COLUMN `junk`",
        "ALTER TABLE delta.`/lake/t` ALTER COLUMN `score` TYPE bigint",
        "ALTER TABLE delta.`/lake/t` ALTER COLUMN `title` TYPE varchar(40)",  # Delta checks a declared length
        "ALTER TABLE delta.`/lake/t` ADD COLUMNS (`note` string)"]
    plain = {**BEFORE, "name": "string"}  # an undeclared length: a longer string changes nothing
    assert evolve.plan(state(plain, **EVOLVABLE), CHANGES, "x", set)[3].op is None
    # a table created after the changes (or a restore past every DDL) shows them all: nothing to apply
    after = {"id": "integer", "title": "varchar(40)", "score": "long", "note": "string"}  # JSON: bigint is long
    assert [s.op and evolve.ddl("delta.`/lake/t`", s.op) for s in evolve.plan(state(after), CHANGES, "sink[0] Delta", set)] == [None] * 5


def test_recorded_changes_are_skipped_by_the_property_or_the_history():
    ids = [evolve.change_id(c) for c in CHANGES]
    recorded = state(BEFORE, **EVOLVABLE, **{evolve.PROPERTY: ",".join(ids[:2])})
    asked = []

    def noted() -> set[str]:
        asked.append(1)
        return {ids[2]}

    assert [s.change.ordinal for s in evolve.plan(recorded, CHANGES, "x", noted)] == [4, 5]
    every = state(BEFORE, **{evolve.PROPERTY: ",".join(ids)})
    assert evolve.plan(every, CHANGES, "x", noted) == [] and len(asked) == 1  # the history read only when needed


def test_refusals_name_the_table_the_change_and_the_property_before_anything_is_applied():
    with pytest.raises(RuntimeConfigError, match=r"RENAME COLUMN name TO title of public\.t into the Delta table "
                                                 r"/lake/t: .*'delta\.columnMapping\.mode' = 'name'") as info:
        evolve.plan(state(BEFORE), CHANGES, "sink[0] Delta", set)
    assert info.value.deterministic
    mapped = state(BEFORE, **{evolve.COLUMN_MAPPING: "name"})
    with pytest.raises(RuntimeConfigError, match=r"MODIFY COLUMN score int -> bigint.*delta\.enableTypeWidening"):
        evolve.plan(mapped, CHANGES, "sink[0] Delta", set)
    narrowing = SchemaChange("public.t", MODIFY, "score", old_type="bigint", new_type="int", capture="c", ordinal=9)
    with pytest.raises(RuntimeConfigError, match="not a safe widening"):
        evolve.plan(state(BEFORE, **EVOLVABLE), (narrowing,), "sink[0] Delta", set)
    # an added column needs neither feature
    assert [s.op is not None for s in evolve.plan(state(BEFORE), CHANGES[4:], "x", set)] == [True]


def test_a_pipeline_follows_schema_changes_when_a_source_says_so():
    def vertex(kind, **config):
        return types.SimpleNamespace(kind=kind, config=config)

    assert pipeline_follows([vertex("source", **{"schema-changes.enabled": True}), vertex("sink")])
    assert pipeline_follows([vertex("source", **{"schema-changes.enabled": "true"})])
    assert pipeline_follows([vertex("source", debezium={"include.schema.changes": "true"})])
    assert not pipeline_follows([vertex("source"), vertex("sink", **{"schema-changes.enabled": True})])
