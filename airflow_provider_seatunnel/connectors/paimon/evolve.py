"""The Paimon sink follows a CDC source's schema changes (``schema-changes.enabled``): add, drop and rename
a column, and widen its type, each applied to the table once.

Before a micro-batch's rows are written, the changes they carry that the table has not recorded (the
table option :data:`...lakehouse.evolve.PROPERTY`: the ids of the followed changes) are applied by ONE
``alter_table`` of pypaimon's catalog: the column changes (``add_column``, ``drop_column``,
``rename_column``, ``update_column_type``, in order) and the option recording them make one new schema
version of the table, committed together or not at all, so a restore never applies a change twice nor
loses one. A change whose result the table already shows (a table the sink created after it) is recorded
without an operation. Paimon finds columns by id: rows written before a rename keep their values under
the new name.

A type change that is not a safe widening (:func:`...spi.schemachange.widens`), or one Paimon refuses (a
key column dropped or renamed), fails deterministically, naming the table and the change, before the
schema is committed: nothing is written.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ...spi.errors import root_cause
from ...spi.schemachange import KINDS, SchemaChange
from ..lakehouse.evolve import PROPERTY, Op, check_widening, plan, recorded_ids, refusal

log = logging.getLogger("seatunnel.paimon")

#: what the Paimon sink follows
FOLLOWS = frozenset(KINDS)


def _paimon_type(spark_type: str) -> Any:
    """Paimon's (nullable) type for a Spark type's SQL name (``bigint``, ``decimal(12,2)``)."""
    from pypaimon.schema.data_types import PyarrowFieldParser
    from pyspark.sql.pandas.types import to_arrow_type
    from pyspark.sql.types import _parse_datatype_string

    return PyarrowFieldParser.to_paimon_type(to_arrow_type(_parse_datatype_string(spark_type)), True)


def _spark_type(paimon_type: Any) -> str:
    from pypaimon.schema.data_types import PyarrowFieldParser
    from pyspark.sql.pandas.types import from_arrow_type

    return str(from_arrow_type(PyarrowFieldParser.from_paimon_type(paimon_type)).simpleString())


def _change(op: Op) -> Any:
    from pypaimon.schema.schema_change import SchemaChange as Change

    if op.kind == "add":
        return Change.add_column(op.column, _paimon_type(op.arg))
    if op.kind == "drop":
        return Change.drop_column(op.column)
    if op.kind == "rename":
        return Change.rename_column(op.column, op.arg)
    return Change.update_column_type(op.column, _paimon_type(op.arg), True)


def follow(catalog: Any, identifier: str, table: Any, changes: Sequence[SchemaChange], label: str) -> bool:
    """Apply and record, in one schema version, the changes the existing ``table`` has not recorded;
    whether the table's schema changed (then the caller opens it again)."""
    from pypaimon.schema.schema_change import SchemaChange as Change

    if not changes:
        return False
    schema = table.table_schema
    recorded, ids = schema.options.get(PROPERTY), recorded_ids(changes)
    if recorded == ids:
        return False
    columns = {str(f.name).lower(): (str(f.name), _spark_type(f.type)) for f in schema.fields}
    steps = plan(columns, recorded, changes, set)  # the schema version records its changes: no other record
    where = f"the Paimon table {identifier}"
    check_widening(label, where, steps)
    altered = [_change(s.op) for s in steps if s.op is not None]
    try:
        catalog.alter_table(identifier, [*altered, Change.set_option(PROPERTY, ids)])
    except Exception as e:
        step = steps[0] if steps else None
        if step is None:
            raise
        raise refusal(label, where, step.change, f"Paimon refused the changes ({root_cause(e)})") from e
    for step in steps:
        log.info("Paimon %s: %s %s (%s)", label, "applied" if step.op else "recorded (the table had it)",
                 step.change.describe(), identifier)
    return True
