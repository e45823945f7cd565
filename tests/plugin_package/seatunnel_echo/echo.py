"""Echo transform: adds one column holding the same constant in every row.

Options:

* ``field`` (required): the name of the new column; it must not name an input field (any case).
* ``value`` (required): the constant, a string, number or boolean.
* ``type`` (default ``string``): its SeaTunnel type, one of ``string``, ``boolean``, ``tinyint``,
  ``smallint``, ``int``, ``bigint``, ``float``, ``double``, ``decimal(p, s)``.

The options are checked at compile time (a located problem per bad option) and again at run time
(a plan written by hand skips the compiler). The output schema is the input's plus the new field.
Rows keep their row kind.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from airflow_provider_seatunnel.spi import (
    TRANSFORM,
    Capabilities,
    Connector,
    Dataset,
    RunContext,
    SchemaInference,
    Transform,
    Vertex,
)
from airflow_provider_seatunnel.spi.errors import RuntimeConfigError
from airflow_provider_seatunnel.spi.options import MISSING, JobConfig, PluginConfig, Problem, as_bool, as_int, lookup
from airflow_provider_seatunnel.spi.optionspec import Option, OptionSpec
from airflow_provider_seatunnel.spi.rows import ROW_KIND, data_columns, quote
from airflow_provider_seatunnel.spi.schema import DataType, Field, Schema, TypeError_, parse_type

NAME = "Echo"
TYPES = ("string", "boolean", "tinyint", "smallint", "int", "bigint", "float", "double", "decimal(p, s)")
_INT_BITS = {"tinyint": 8, "smallint": 16, "int": 32, "bigint": 64}


class OptionError(ValueError):
    """A bad option: which one, what is wrong, what to do."""

    def __init__(self, key: str, message: str, hint: str | None = None):
        super().__init__(message)
        self.key, self.message, self.hint = key, message, hint


@dataclass(frozen=True)
class Constant:
    """What Echo adds: a column ``field`` of ``type`` holding ``value`` (converted to that type)."""

    field: str
    type: DataType
    value: Any


def constant(options: Mapping[str, Any]) -> Constant:
    """The column the options describe; raises :class:`OptionError` for the first bad option."""
    field = lookup(options, "field")
    if field is MISSING or not isinstance(field, str) or not field.strip():
        raise OptionError("field", "field must be a non-empty string", 'write field = "greeting"')
    spec = lookup(options, "type")
    spec = "string" if spec is MISSING else spec
    try:
        dtype = parse_type(spec)
    except TypeError_ as e:
        raise OptionError("type", str(e), "use one of " + ", ".join(TYPES)) from None
    if dtype.name not in _INT_BITS and dtype.name not in ("string", "boolean", "float", "double", "decimal"):
        raise OptionError("type", f"Echo cannot hold a {dtype} constant", "use one of " + ", ".join(TYPES))
    value = lookup(options, "value")
    if value is MISSING or value is None or isinstance(value, (list, Mapping)):
        raise OptionError("value", "value must be a string, number or boolean", 'write value = "hello"')
    return Constant(field.strip(), dtype, _converted(value, dtype))


def _converted(value: Any, dtype: DataType) -> Any:
    """``value`` as a Python value of ``dtype``; OptionError when it is not one."""
    wrong = OptionError("value", f"value {value!r} is not a {dtype}", f"give a {dtype} value, or change type")
    if dtype.name == "string":
        return ("true" if value else "false") if isinstance(value, bool) else str(value)
    if dtype.name == "boolean":
        flag = as_bool(value)
        if flag is None:
            raise wrong
        return flag
    if dtype.name in _INT_BITS:
        number = as_int(value)
        limit = 2 ** (_INT_BITS[dtype.name] - 1)
        if number is None or not -limit <= number < limit:
            raise wrong
        return number
    if isinstance(value, bool):
        raise wrong
    try:
        exact = Decimal(str(value).strip())
    except InvalidOperation:
        raise wrong from None
    if not exact.is_finite():
        raise wrong
    if dtype.name == "decimal":
        integer_digits = len(exact.quantize(Decimal(1)).copy_abs().as_tuple().digits)
        if integer_digits > (dtype.precision or 10) - (dtype.scale or 0):
            raise wrong
        return str(exact)
    return float(exact)


def _clash(name: str, columns: Sequence[str]) -> str | None:
    """The input field ``name`` would collide with (Spark resolves names in any case), if any."""
    return next((c for c in columns if c.lower() == name.lower()), None)


SPEC = OptionSpec((
    Option("field", required=True, allow_blank=False, description="The name of the new column."),
    Option("value", "any", required=True, description="The constant: a string, number or boolean."),
    Option("type", default="string", description="Its SeaTunnel type: " + ", ".join(TYPES) + "."),
))


class Echo(Connector, Transform, SchemaInference):
    name = NAME
    capabilities = Capabilities(sections=frozenset({TRANSFORM}))
    option_spec = SPEC  # required options and their types; check() adds what a declaration cannot say
    description = "Adds a column holding one constant."

    def check(self, plugin: PluginConfig, job: JobConfig) -> list[Problem]:
        """The value as a constant of the type (the spec reported a missing or mistyped option)."""
        if SPEC.valid(plugin.options, TRANSFORM) is None:
            return []
        try:
            constant(plugin.options)
        except OptionError as e:
            return [job.problem(e.message, plugin, key=e.key, hint=e.hint)]
        return []

    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        source = inputs[0] if inputs else None
        try:
            column = constant(plugin.options)
        except OptionError:
            return None, []  # check() reported it
        if source is None:
            return None, []
        clash = _clash(column.field, source.names)
        if clash is not None:
            return None, [job.problem(f"field '{column.field}' is already an input field ('{clash}')", plugin,
                                      key="field", hint="name a new column")]
        return source.with_field(Field(column.field, column.type)), []

    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        from pyspark.sql import functions as F

        try:
            column = constant(vertex.config)
        except OptionError as e:
            raise RuntimeConfigError(f"option '{e.key}': {e.message}") from None
        out: Dataset = {}
        for table, df in (next(iter(inputs.values())) if inputs else {}).items():
            columns = data_columns(df)
            clash = _clash(column.field, columns)
            if clash is not None:
                raise RuntimeConfigError(f"field '{column.field}' is already an input field ('{clash}')")
            kind = [F.col(ROW_KIND)] if ROW_KIND in df.columns else []
            added = F.lit(column.value).cast(column.type.to_spark()).alias(column.field)
            out[table] = df.select(*[F.col(quote(c)) for c in columns], added, *kind)
        return out
