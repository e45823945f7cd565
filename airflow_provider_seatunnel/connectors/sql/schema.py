"""A Sql transform's output schema at compile time (sqlglot, no Spark).

When every input schema is known, the columns the query references are checked (sqlglot's
qualifier: a column its input lacks is a problem) and the output schema is inferred where
every output column's name and Spark result type are certain; else it is left unknown (None)
and Spark decides at run time. What SeaTunnel runs differently by the input's types (a BOOLEAN
compared with a string) is a portability problem (:mod:`.portability`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ...spi.schema import DataType, Field, Schema, parse_type
from .analysis import SqlSyntaxError, analyze_query, parse, select_sources
from .options import query_of
from .portability import compared_with_text, located
from .portability import problems as portability_problems

if TYPE_CHECKING:
    from ...spi.options import JobConfig, PluginConfig, Problem

#: the input type of a qualified column, where known
Resolve = Callable[[Any], DataType | None]

_NUMERIC_RANK = ("tinyint", "smallint", "int", "bigint", "float", "double")
_STRING_NODES = ("Upper", "Lower", "Concat", "ConcatWs", "Substring", "Trim", "Replace", "RegexpReplace", "Initcap",
                 "Pad", "Repeat", "Reverse", "Left", "Right", "DPipe", "TimeToStr", "Chr", "Uuid", "Soundex")
_BOOLEAN_NODES = ("EQ", "NEQ", "GT", "GTE", "LT", "LTE", "And", "Or", "Not", "In", "Like", "ILike", "Is",
                  "Between", "RegexpLike", "Exists", "NullSafeEQ", "Boolean")
#: the result type of an expression by its sqlglot node, whatever its arguments
_NODE_TYPES = {**dict.fromkeys(_BOOLEAN_NODES, "boolean"), **dict.fromkeys(_STRING_NODES, "string"),
               "Pi": "double", "Rand": "double", "Count": "bigint"}
#: the result type of a call by function name (Spark's, or what a SeaTunnel function is rewritten to)
_CALL_TYPES = {"date_format": "string", "concat": "string", "decode": "string", "lower": "string",
               "regexp_replace": "string", "regexp_substr": "string", "dayofmonth": "int", "dayofyear": "int",
               "weekday": "int", "regexp_like": "boolean", "to_timestamp_ntz": "timestamp", "to_date": "date",
               "timestampdiff": "bigint", "unix_seconds": "bigint", "upper": "string", "ucase": "string",
               "lcase": "string"}
_SIMPLE_TYPES = {"string": "string", "varchar": "string", "text": "string", "boolean": "boolean", "tinyint": "tinyint",
                 "smallint": "smallint", "int": "int", "integer": "int", "bigint": "bigint", "long": "bigint",
                 "float": "float", "double": "double", "date": "date", "timestamp_ntz": "timestamp",
                 "binary": "bytes", "time": "time", "time(6)": "time"}


def seatunnel_type(sql_type: str) -> str | None:
    """A SeaTunnel type string for a Spark SQL type as sqlglot prints it, where they match."""
    t = sql_type.lower().replace(" ", "")
    if t in _SIMPLE_TYPES:
        return _SIMPLE_TYPES[t]
    m = re.fullmatch(r"decimal\((\d+),(\d+)\)", t)
    return f"decimal({m.group(1)}, {m.group(2)})" if m else None


def sqlglot_type(dtype: DataType) -> str:
    """A SeaTunnel type in Spark SQL type syntax (for sqlglot's schema)."""
    if dtype.name == "array" and dtype.element is not None:
        return f"ARRAY<{sqlglot_type(dtype.element)}>"
    if dtype.name == "map" and dtype.key is not None and dtype.element is not None:
        return f"MAP<{sqlglot_type(dtype.key)}, {sqlglot_type(dtype.element)}>"
    if dtype.name == "row":
        return "STRUCT<" + ", ".join(f"`{f.name}`: {sqlglot_type(f.type)}" for f in dtype.fields) + ">"
    return {"bytes": "BINARY", "timestamp": "TIMESTAMP_NTZ", "null": "STRING", "time": "STRING"}.get(
        dtype.name, str(dtype).upper().replace(" ", ""))


# ---------------------------------------------------------------- result types of expressions

def _named(name: str | None) -> DataType | None:
    return parse_type(name) if name else None


def _field_type(row: DataType | None, name: str) -> DataType | None:
    """The type of the field ``name`` (any case) of a row type; None for another type or no such field."""
    found = (next((f for f in row.fields if f.name.lower() == name.lower()), None)
             if row is not None and row.name == "row" else None)
    return found.type if found is not None else None


def _literal_type(node: Any) -> DataType | None:
    if node.is_string:
        return DataType("string")
    digits = node.this
    if re.fullmatch(r"\d+", digits):
        return DataType("int" if int(digits) < 2**31 else "bigint")
    m = re.fullmatch(r"(\d*)\.(\d+)", digits)
    if m:
        whole = m.group(1).lstrip("0")
        scale = len(m.group(2))
        return DataType("decimal", precision=max(len(whole) + scale, scale, 1), scale=scale)
    return None


def _arithmetic_type(node: Any, left: DataType | None, right: DataType | None) -> DataType | None:
    """Spark's result type of ``left <op> right`` for numbers, where certain."""
    from sqlglot import exp

    if left is None or right is None or not (left.is_numeric and right.is_numeric):
        return None
    names = {left.name, right.name}
    if names & {"float", "double"}:
        return DataType("double" if "double" in names or isinstance(node, exp.Div) or "decimal" in names
                        else "float")
    if "decimal" in names:
        return None  # Spark's decimal precision rules: not inferred
    if isinstance(node, exp.Div):
        return DataType("double")
    return DataType(max(left.name, right.name, key=_NUMERIC_RANK.index))


def _branches_type(node: Any, resolve: Resolve) -> DataType | None:
    """The type of a CASE or COALESCE: that of its non-null branches when they all have the same one."""
    from sqlglot import exp

    parts = ([i.args.get("true") for i in node.args.get("ifs") or []] + [node.args.get("default")]
             if isinstance(node, exp.Case) else [node.this, *node.expressions])
    found = [infer(p, resolve) for p in parts if p is not None and not isinstance(p, exp.Null)]
    return found[0] if found and None not in found and len({str(t) for t in found}) == 1 else None


def infer(node: Any, resolve: Resolve) -> DataType | None:
    """The Spark result type of ``node`` where it is certain, as a SeaTunnel type; else None. A rewritten
    SeaTunnel call carries its type (:data:`.functions.RESULT_TYPE`)."""
    from sqlglot import exp

    from .functions import RESULT_TYPE

    if node.meta.get(RESULT_TYPE):
        return _named(seatunnel_type(node.meta[RESULT_TYPE]))
    if isinstance(node, (exp.Alias, exp.Paren)):
        return infer(node.this, resolve)
    if isinstance(node, exp.Column):
        return resolve(node)
    if isinstance(node, exp.Dot):  # a row's field: r.x
        return _field_type(infer(node.this, resolve), node.name)
    if isinstance(node, exp.Cast):
        return _named(seatunnel_type(node.to.sql(dialect="spark")))
    if isinstance(node, exp.Literal):
        return _literal_type(node)
    if type(node).__name__ in _NODE_TYPES:
        return DataType(_NODE_TYPES[type(node).__name__])
    if isinstance(node, exp.Anonymous):
        return _named(_CALL_TYPES.get(node.name.lower()))
    if isinstance(node, exp.Neg):
        return infer(node.this, resolve)
    if isinstance(node, (exp.Add, exp.Sub, exp.Mul, exp.Mod, exp.Div)):
        return _arithmetic_type(node, infer(node.this, resolve), infer(node.expression, resolve))
    if isinstance(node, (exp.Case, exp.Coalesce)):
        return _branches_type(node, resolve)
    return None


# ---------------------------------------------------------------- the output schema

def _schema_problem(message: str, plugin: PluginConfig, job: JobConfig,
                    known: Mapping[str, Schema]) -> Problem | None:
    """A problem for a column the query reads that its input lacks; None for the qualifier's other complaints
    (Spark decides those at run time)."""
    m = re.search(r"Column '([^']+)' could not be resolved|Unknown column: (\S+)", message)
    if not m:
        return None
    column = (m.group(1) or m.group(2)).strip('"`')
    written = re.search(rf"(?i)\b({re.escape(column)})\b", query_of(plugin.options) or "")
    column = written.group(1) if written else column  # as the query spells it
    fields = list(dict.fromkeys(f for s in known.values() for f in s.names))
    return job.problem(f"the query references the column '{column}', which does not exist in its input",
                       plugin, key="query", hint="the fields are: " + ", ".join(fields))


def _known_tables(plugin: PluginConfig, job: JobConfig, inputs: Sequence[Schema],
                  tables: tuple[str, ...]) -> tuple[dict[str, Schema] | None, list[Problem]]:
    """The schema of each table the query may read, by lower-cased name (None: not known here), and
    the problem of a table that is not an input."""
    from ...spi.options import as_list

    names = [str(x).strip() for x in as_list(plugin.get("plugin_input", plugin.get("source_table_name")))]
    if len(names) == len(inputs) and names:
        known = {n.lower(): s for n, s in zip(names, inputs, strict=True)}
        for table in tables:
            if table.lower() not in known and table.lower() != "this" and len(inputs) > 1:
                return None, [job.problem(f"the query reads the table '{table}', which is not an input of this Sql",
                                          plugin, key="query", hint="its inputs are: " + ", ".join(names))]
    elif len(inputs) == 1:
        known = {}
    else:
        return None, []  # implicit multi-input wiring: tables are the inputs, checked by the compiler
    if len(inputs) == 1:  # any table name reads the one input
        for table in tables:
            known.setdefault(table.lower(), inputs[0])
    known.setdefault("this", inputs[0])
    return known, []


def _qualified(tree: Any, known: Mapping[str, Schema], plugin: PluginConfig,
               job: JobConfig) -> tuple[Any, list[Problem]]:
    """``tree`` with every column qualified by its table (None where the qualifier fails), and the
    problem of a column that does not exist."""
    from sqlglot import exp
    from sqlglot.errors import OptimizeError
    from sqlglot.optimizer.qualify import qualify

    # Spark resolves names case-insensitively, backticks or not: compare lower-cased names
    mapping: dict[str, object] = {name: {f.name.lower(): sqlglot_type(f.type) for f in s.fields}
                                  for name, s in known.items()}
    lowered = tree.copy()
    for ident in lowered.find_all(exp.Identifier):
        ident.set("this", ident.this.lower())
    try:
        return qualify(lowered, schema=mapping, dialect="spark", validate_qualify_columns=True,
                       quote_identifiers=False, identify=False), []
    except OptimizeError as e:
        problem = _schema_problem(str(e), plugin, job, known)
        return None, [problem] if problem is not None else []
    except Exception:  # sqlglot's qualifier may not follow every Spark construct: no check then
        return None, []


def _leftmost(node: Any) -> Any:
    """The first SELECT of a set operation (it names the output's columns)."""
    from sqlglot import exp

    while isinstance(node, (exp.SetOperation, exp.Subquery)):
        node = node.left if isinstance(node, exp.SetOperation) else node.this
    return node


def _resolver(select: Any, known: Mapping[str, Schema]) -> Resolve:
    """The input type of a qualified column (``t.c``), or of a row's field (``t.c.f``), in ``select``."""
    from sqlglot import exp

    aliases: dict[str, Schema] = {}
    for table in select.find_all(exp.Table):
        if table.find_ancestor(exp.Select) is select and table.name.lower() in known:
            aliases[table.alias_or_name.lower()] = known[table.name.lower()]

    def resolve(column: Any) -> DataType | None:
        parts = [p.name for p in column.parts]
        source = aliases.get(parts[0].lower()) if len(parts) > 1 else None
        found = source.get(parts[1]) if source is not None else None
        dtype = found.type if found is not None else None
        for name in parts[2:]:
            dtype = _field_type(dtype, name)
        return dtype

    return resolve


def _star_fields(projection: Any, sources: list[Any], known: Mapping[str, Schema]) -> list[Field] | None:
    """The fields a ``*`` or ``t.*`` expands to (None where a source's schema is unknown)."""
    from sqlglot import exp

    expanded: list[Field] = []
    for source in sources:
        if not isinstance(source, exp.Table) or source.name.lower() not in known:
            return None
        if isinstance(projection, exp.Column) and projection.table.lower() != source.alias_or_name.lower():
            continue
        expanded += list(known[source.name.lower()].fields)
    return expanded


def _output_fields(tree: Any, qualified: Any, known: Mapping[str, Schema]) -> list[Field] | None:
    """The output's fields: names from the written query, types from the qualified one (stars expanded
    alike); None where a name or a type is not certain."""
    from sqlglot import exp

    leftmost, qleft = _leftmost(tree), _leftmost(qualified)
    if not isinstance(leftmost, exp.Select) or not isinstance(qleft, exp.Select):
        return None
    resolve = _resolver(qleft, known)
    sources = select_sources(leftmost)
    fields: list[Field] = []
    position = 0
    for projection in leftmost.expressions:
        if isinstance(projection, exp.Star) or (isinstance(projection, exp.Column)
                                                and isinstance(projection.this, exp.Star)):
            expanded = _star_fields(projection, sources, known)
            if expanded is None:
                return None
            fields += expanded
            position += len(expanded)
            continue
        if isinstance(projection, exp.Alias):
            name = projection.alias
        elif isinstance(projection, exp.Column):
            name = projection.name
        else:
            return None  # Spark names it by its SQL text: not inferred
        dtype = infer(qleft.expressions[position], resolve) if position < len(qleft.expressions) else None
        if dtype is None:
            return None
        fields.append(Field(name, dtype))
        position += 1
    return fields


def spark_sql_type(dtype: DataType) -> str:
    """A SeaTunnel type as Spark SQL names it (``int``, ``decimal(10,2)``, ``timestamp_ntz``, ``time(6)``)."""
    return "time(6)" if dtype.name == "time" else sqlglot_type(dtype).lower().replace(" ", "")


def _input_types(known: Mapping[str, Schema]) -> Callable[[Any], str | None]:
    """The ``type_of`` of :func:`.functions.to_spark` over the inputs: a column's Spark SQL type (the first
    input having it)."""
    from .builders import column_types

    types: dict[str, str] = {}
    for schema in known.values():
        for f in schema.fields:
            types.setdefault(f.name.lower(), spark_sql_type(f.type))

    return column_types(types)


def output_schema(plugin: PluginConfig, job: JobConfig,
                  inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
    """The Sql's output schema where certain (None: unknown until run time), and the problems of the
    tables and columns it reads."""
    from .functions import FunctionError, to_spark

    query = query_of(plugin.options)
    schemas = [s for s in inputs if s is not None]
    if not inputs or len(schemas) != len(inputs) or query is None:
        return None, []
    try:
        analysis = analyze_query(query)
    except SqlSyntaxError:
        return None, []  # reported by the check
    known, problems = _known_tables(plugin, job, schemas, analysis.tables)
    if known is None:
        return None, problems
    try:
        tree = to_spark(parse(query).copy(), _input_types(known))
    except FunctionError as e:
        return None, [job.problem(str(e), plugin, key="query")]
    qualified, problems = _qualified(tree, known, plugin, job)
    if qualified is None:
        return None, problems
    fields = _output_fields(tree, qualified, known)
    typed = compared_with_text(qualified, _resolver(_leftmost(qualified), known))  # portability, by input types
    found = portability_problems(plugin, job, located(query, typed)) if typed else []
    return (Schema(tuple(fields)) if fields is not None else None), found
