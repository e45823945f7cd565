"""Running a Sql transform: its inputs as temporary views, the query rewritten to read them, ``spark.sql``.

Each input is registered as a temporary view under a name unique to this run of this vertex
(``__st_<vertex>_<run>_<name>``) and the query's table references are rewritten to those names
(CTE names are left alone), then ``spark.sql`` runs it:

* Tables: every input under its dataset name, the first also as ``this``. With one input,
  any other table name reads that input too (SeaTunnel does not enforce the FROM name).
  In a split pipeline (a multi-input Sql that runs once per input, in one pipeline per input)
  the inputs of other pipelines are registered as empty tables with the present input's
  schema (all inputs of a Sql share a row type), so ``SELECT ... FROM a UNION ALL SELECT ...
  FROM b`` yields this pipeline's share; a one-table row-wise query (``SELECT ... FROM a``)
  reads the pipeline's input whatever its name, as SeaTunnel runs every input's rows through it.
* Row kinds: stars hide the row-kind column (``* EXCEPT``); a row-wise SELECT (one
  source, no join, aggregation, GROUP BY or DISTINCT) carries its source's row kind, and
  UNION ALL branches keep theirs; rows a query combines are INSERT.
* SeaTunnel's functions run as native Spark expressions (:mod:`.functions`).
* A failure the query hits in Spark's analysis is a RuntimeConfigError naming the inputs by
  their dataset names.

This module imports sqlglot: it is imported when a Sql runs, not at DAG-parse time.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlglot import exp

from ...spi.errors import RuntimeConfigError
from ...spi.rows import ROW_KIND, quote
from ...spi.sessions import is_connect
from .analysis import (
    COMBINING,
    ROW_WISE,
    UNION,
    SqlSyntaxError,
    analyze_query,
    arg,
    arg_key,
    ctes,
    parse,
    select_sources,
)
from .builders import column_types
from .functions import TypeOf, no_types, to_spark
from .options import SPEC, watermark_of
from .streaming import watermarked, zone_free


@dataclass(frozen=True)
class View:
    """A registered input as the rewriting sees it."""

    ident: str  # the unique temporary view name


def _point_tables(tree: Any, views: Mapping[str, View], fallback: str | None) -> set[int]:
    """Point the table references of ``tree`` at their views (keeping the written name as alias);
    the ids of the tables rewritten."""
    cte_names = {cte.alias_or_name.lower() for cte in tree.find_all(exp.CTE)}
    ours: set[int] = set()
    for table in list(tree.find_all(exp.Table)):
        name = table.name
        if not name or table.args.get("db") or table.args.get("catalog") or name.lower() in cte_names:
            continue
        view = views.get(name.lower()) or (views.get(fallback) if fallback else None)
        if view is None:
            known = ", ".join(sorted(k for k in views if k != "this"))
            raise ValueError(f"the query reads the table '{name}', which is not an input of this Sql "
                             f"(its inputs: {known}, and 'this' for the first)")
        if not table.alias:
            table.set("alias", exp.TableAlias(this=exp.to_identifier(name)))
        table.set("this", exp.to_identifier(view.ident, quoted=True))
        ours.add(id(table))
    return ours


def _kind_column(alias: str | None) -> Any:
    return exp.column(ROW_KIND, table=exp.to_identifier(alias) if alias else None, quoted=True)


def _literal_kind(node: Any) -> None:
    """Add an INSERT row kind to every SELECT of ``node`` (the branch of a UNION whose other side has one)."""
    if isinstance(node, exp.Subquery):
        _literal_kind(node.this)
    elif isinstance(node, exp.SetOperation):
        _literal_kind(node.left)
        _literal_kind(node.right)
    elif isinstance(node, exp.Select):
        node.append("expressions", exp.alias_(exp.cast(exp.Literal.number(0), "TINYINT"), ROW_KIND, quoted=True))


def _hide(star: Any, columns: list[Any]) -> None:
    """Add the row-kind columns to the star's EXCEPT list (keeping the user's own)."""
    present = list(arg(star, "except") or [])
    written = {c.sql() for c in present}
    star.set(arg_key(exp.Star, "except"), present + [c for c in columns if c.sql() not in written])


def _own_aggregate(select: Any) -> bool:
    return any(agg.find_ancestor(exp.Window, exp.Select) is select
               for p in select.expressions for agg in p.find_all(exp.AggFunc))


def _carry_kinds(node: Any, ours: set[int], scope: dict[str, bool], carry: bool) -> bool:
    """Rewrite stars and carry row kinds in ``node``; return whether its output has the kind column.

    ``ours`` are the tables that read an input (whose rows carry a kind), ``scope`` the CTEs in
    sight and whether theirs do; with ``carry`` false the output carries no kind."""
    scope = dict(scope)
    for cte in ctes(node):
        scope[cte.alias_or_name.lower()] = _carry_kinds(cte.this, ours, scope, True)
    if isinstance(node, exp.Subquery):
        return _carry_kinds(node.this, ours, scope, carry)
    if isinstance(node, exp.SetOperation):
        keep = carry and isinstance(node, exp.Union) and not node.args.get("distinct")
        left, right = _carry_kinds(node.left, ours, scope, keep), _carry_kinds(node.right, ours, scope, keep)
        if left != right:
            _literal_kind(node.right if left else node.left)
        return left or right
    if not isinstance(node, exp.Select):
        return False
    sources = select_sources(node)
    kinded: list[str | None] = []  # aliases of the sources whose rows carry a kind
    for source in sources:
        alias: str | None
        if isinstance(source, exp.Table):
            has = id(source) in ours or scope.get(source.name.lower(), False)
            alias = source.alias_or_name
        elif isinstance(source, exp.Subquery):
            has, alias = _carry_kinds(source.this, ours, scope, True), source.alias or None
        else:
            has, alias = False, None
        if has:
            kinded.append(alias)
    lowered = {a.lower() for a in kinded if a}
    for projection in node.expressions:
        if isinstance(projection, exp.Star) and kinded:
            _hide(projection, [_kind_column(a if len(kinded) > 1 else None) for a in kinded])
        elif (isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
              and projection.table.lower() in lowered):
            _hide(projection.this, [_kind_column(None)])
    row_wise = (carry and len(sources) == 1 and len(kinded) == 1 and not node.args.get("group")
                and not node.args.get("having") and not node.args.get("distinct") and not _own_aggregate(node))
    if row_wise:
        node.append("expressions", _kind_column(kinded[0]))
    return row_wise


def prepare_query(query: str, views: Mapping[str, View], fallback: str | None, carry: bool = True,
                  type_of: TypeOf = no_types) -> tuple[str, bool]:
    """``(Spark SQL, whether its output carries the row-kind column)`` for ``query``.

    ``views`` maps lower-cased table names to registered views; a table not among them
    reads ``views[fallback]`` (single-input Sql) or is an error (RuntimeConfigError-worthy
    ValueError). With ``carry`` false no row kind is carried (every output row is INSERT).
    """
    tree = parse(query).copy()
    ours = _point_tables(tree, views, fallback)
    tree = to_spark(tree, type_of)
    carried = _carry_kinds(tree, ours, {}, carry)
    return tree.sql(dialect="spark"), carried  # Spark's escaping of the literals SeaTunnel's dialect read


# ---------------------------------------------------------------- run time

def _declared_inputs(ctx: Any, vertex: Any, query: str) -> list[str]:
    """The dataset names this Sql reads by its config (all of them, also those of other pipelines)."""
    from ...spi.options import MISSING, as_list, lookup

    for key in ("plugin_input", "source_table_name"):
        value = lookup(vertex.config, key)
        if value is not MISSING and value is not None:
            names = [str(x).strip() for x in as_list(value) if str(x).strip()]
            if names:
                return names
    plan = getattr(ctx, "plan", None)
    outputs = {v.output.lower() for p in getattr(plan, "pipelines", ()) for v in p.vertices if v.output}
    implicit = [t for t in analyze_query(query).tables if t.lower() in outputs]
    return implicit or list(vertex.inputs)


def _spark_type(dtype: Any) -> str:
    """A Spark type as :func:`.functions.to_spark` wants it: its SQL name (``int``, ``decimal(10,2)``,
    ``timestamp_ntz``, ``array<int>``...)."""
    return str(dtype.simpleString()).lower()


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def _normal(df: Any) -> Any:
    """``df`` with its data columns, then the row kind (as the query's star expansion expects)."""
    from pyspark.sql import functions as F

    from ...spi.rows import HIDDEN, with_kind

    df = with_kind(df)
    columns = df.columns
    data = [c for c in columns if c not in HIDDEN]
    if columns == [*data, ROW_KIND]:
        return df
    return df.select(*[F.col(quote(c)) for c in data], F.col(ROW_KIND))


def _tables(ctx: Any, query: str, frames: list[tuple[str, Any]], declared: list[str]) -> dict[str, Any]:
    """The DataFrame of each table the query may read, by lower-cased name: the inputs, ``this``, and
    the inputs of other pipelines of a split Sql."""
    from pyspark.sql import functions as F

    first = frames[0][1]
    tables: dict[str, Any] = {}
    for name, df in frames:
        tables.setdefault(name.lower(), df)
    one_table = len(frames) == 1 and len(declared) > 1 and analyze_query(query, declared).mode == ROW_WISE
    for name in declared:
        if name.lower() not in tables:
            # Another pipeline's input (the Sql runs once per input). A one-table row-wise query runs every
            # input's rows, as SeaTunnel's Sql ignores the FROM name: it reads this pipeline's input. Otherwise
            # (a UNION of the inputs) the absent input is empty here, so each pipeline yields its own share.
            empty = first.where(F.lit(False)) if first.isStreaming else ctx.spark.createDataFrame([], first.schema)
            tables[name.lower()] = first if one_table else empty
    tables.setdefault("this", first)
    return tables


def _types(tables: Mapping[str, Any]) -> TypeOf:
    """The ``type_of`` of :func:`.functions.to_spark` for a query over ``tables``: a column's input type
    (the first input having it)."""
    types: dict[str, str] = {}
    for df in tables.values():
        for f in df.schema.fields:
            types.setdefault(f.name.lower(), _spark_type(f.dataType))

    return column_types(types)


def _clean(message: str, views: Mapping[str, View]) -> str:
    """The message with the inputs' own names, and without the hidden row-kind column."""
    for key, view in views.items():
        message = message.replace(f"`{view.ident}`", key).replace(view.ident, key)
    message = re.sub(rf"(, )?(`[^`]*`\.)?`{ROW_KIND}`", "", message).replace("[, ", "[")
    return message.strip().splitlines()[0] if message.strip() else message


def _run(ctx: Any, vertex: Any, query: str, frames: list[tuple[str, Any]], declared: list[str]) -> Any:
    from pyspark.errors import AnalysisException

    from ...spi.rows import kind_literal

    tables = _tables(ctx, query, [(name, _normal(df)) for name, df in frames], declared)
    run = uuid.uuid4().hex[:8]
    views = {key: View(f"__st_{_safe(vertex.id)}_{run}_{_safe(key)}") for key in tables}
    type_of = _types(tables)
    fallback = "this" if len(declared) <= 1 else None
    try:
        sql, carried = prepare_query(query, views, fallback, True, type_of)
    except (ValueError, SqlSyntaxError) as e:
        raise RuntimeConfigError(str(e)) from None
    registered = {key: view for key, view in views.items() if view.ident in sql}  # only the views it reads
    for key, view in registered.items():
        tables[key].createOrReplaceTempView(view.ident)
    try:
        try:
            result = ctx.spark.sql(sql)
        except AnalysisException as e:
            if ROW_KIND not in str(e):
                raise
            sql, carried = prepare_query(query, views, fallback, False, type_of)  # combine: INSERT rows
            result = ctx.spark.sql(sql)
    except AnalysisException as e:
        raise RuntimeConfigError(f"the query does not run on Spark: {_clean(str(e), views)}") from None
    finally:  # a Spark Connect DataFrame of SQL is analysed again at each action: its views stay,
        # until the session (one per pipeline attempt) is released
        for view in registered.values() if not is_connect(ctx.spark) else ():
            ctx.spark.catalog.dropTempView(view.ident)
    if carried and ROW_KIND in result.columns:
        return result
    return result.withColumn(ROW_KIND, kind_literal(0))


def at_parallelism(df: Any, mode: str, parallelism: int) -> Any:
    """A BATCH query's result in the transform's ``parallelism`` partitions: a row-wise query keeps
    its input's partitions (already the plan's figure); a UNION of several inputs holds all of theirs
    and is coalesced (no shuffle, each input's rows keep their order); a query combining rows (join,
    aggregation...) comes out of a shuffle, in as many partitions as Spark chose, and is repartitioned
    (its rows are all INSERT: no order to keep), unless it orders its result (then coalesced)."""
    if df.isStreaming or mode == ROW_WISE:
        return df
    return df.repartition(parallelism) if mode == COMBINING else df.coalesce(parallelism)


def apply(ctx: Any, vertex: Any, inputs: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The Sql's output: one table per table of a single input, or one table over several single-table inputs."""
    query = SPEC.run_time(vertex.config)["query"]
    if not query.strip():
        raise RuntimeConfigError("the query must be a non-empty SQL string")
    present = list(inputs.items())
    if not present:
        raise RuntimeConfigError("the Sql transform has no input")
    declared = _declared_inputs(ctx, vertex, query)
    marked = watermark_of(vertex.config) is not None  # streams only: see watermarked

    mode = analyze_query(query, tuple(declared)).mode
    if mode == COMBINING and parse(query).args.get("order") is not None:
        mode = UNION  # an ordered result is coalesced, not shuffled: its order stays

    def run(frames: list[tuple[str, Any]]) -> Any:
        if not marked:
            return at_parallelism(_run(ctx, vertex, query, frames, declared), mode, vertex.parallelism)
        result = _run(ctx, vertex, query, [(n, watermarked(vertex, n, df)) for n, df in frames], declared)
        return zone_free(result) if result.isStreaming else at_parallelism(result, mode, vertex.parallelism)

    if len(present) == 1:
        name, dataset = present[0]
        return {table: run([(name, df)]) for table, df in dataset.items()}
    frames = []
    for name, dataset in present:
        if len(dataset) != 1:
            raise RuntimeConfigError(f"the input '{name}' has {len(dataset)} tables: a Sql with several inputs "
                                     "reads single-table inputs")
        frames.append((name, next(iter(dataset.values()))))
    return {next(iter(present[0][1])): run(frames)}
