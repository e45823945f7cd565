"""The Iceberg sink follows a CDC source's schema changes (``schema-changes.enabled``): add, drop and
rename a column, and widen its type, each applied to the table once.

Before a micro-batch is staged, the changes its rows carry that the table has not recorded (the table
property :data:`...lakehouse.evolve.PROPERTY`: the ids of the followed changes) are applied in ONE Iceberg
transaction through Iceberg's schema evolution (``UpdateSchema``: ``addColumn``, ``deleteColumn``,
``renameColumn``, ``updateColumn``, one schema update per change, in order) that also sets the property:
the table's new schema and the record of the changes commit together or not at all, so a restore never
applies a change twice nor loses one. A change whose result the table already shows (a table the sink
created after it) is recorded without an operation. Iceberg finds columns by id: data written before a
rename or a drop keeps its values under the new name, and a dropped column's values are no longer read.

Iceberg widens ``int`` to ``bigint``, ``float`` to ``double`` and a decimal's precision (same scale); a
string has no length to change. A type change that is not a safe widening
(:func:`...spi.schemachange.widens`), or one Iceberg refuses (``int`` to ``double``, a decimal's scale),
fails deterministically, naming the table and the change, before the transaction commits: nothing is
written.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ...spi.errors import root_cause
from ...spi.schemachange import KINDS, SchemaChange
from ..lakehouse.evolve import PROPERTY, Step, check_widening, plan, recorded_ids, refusal

log = logging.getLogger("seatunnel.iceberg")

#: what the Iceberg sink follows
FOLLOWS = frozenset(KINDS)


def _iceberg_type(jvm: Any, spark_type: str) -> Any:
    """Iceberg's type for a Spark type's SQL name (``bigint``, ``decimal(12,2)``)."""
    return jvm.org.apache.iceberg.spark.SparkSchemaUtil.convert(jvm.org.apache.spark.sql.types.DataType.fromDDL(
        spark_type))


def _update(txn: Any, jvm: Any, step: Step) -> None:
    """One schema update of the transaction (each sees the updates before it)."""
    op = step.op
    if op is None:
        return
    update = txn.updateSchema().caseSensitive(False)
    if op.kind == "add":
        update.addColumn(op.column, _iceberg_type(jvm, op.arg))
    elif op.kind == "drop":
        update.deleteColumn(op.column)
    elif op.kind == "rename":
        update.renameColumn(op.column, op.arg)
    else:
        update.updateColumn(op.column, _iceberg_type(jvm, op.arg))
    update.commit()


def follow(spark: Any, name: str, changes: Sequence[SchemaChange], label: str) -> list[SchemaChange]:
    """Apply and record, in one transaction, the changes the existing table ``name`` (Spark's quoted
    identifier) has not recorded; those applied or recorded."""
    if not changes:
        return []
    jvm = spark.sparkContext._jvm
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, name)
    table.refresh()
    recorded = table.properties().get(PROPERTY)
    ids = recorded_ids(changes)
    if recorded == ids:
        return []
    columns = {f.name.lower(): (f.name, f.dataType.simpleString()) for f in spark.table(name).schema.fields}
    steps = plan(columns, recorded, changes, set)  # the transaction records its changes: no other record
    where = f"the Iceberg table {name}"
    check_widening(label, where, steps)
    txn = table.newTransaction()
    for step in steps:
        try:
            _update(txn, jvm, step)
        except Exception as e:  # refused before the transaction commits: nothing is applied
            raise refusal(label, where, step.change, f"Iceberg refused it ({root_cause(e)})") from e
    txn.updateProperties().set(PROPERTY, ids).commit()
    txn.commitTransaction()
    for step in steps:
        log.info("Iceberg %s: %s %s (%s)", label, "applied" if step.op else "recorded (the table had it)",
                 step.change.describe(), name)
    return [s.change for s in steps]
