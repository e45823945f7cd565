"""The typed contract between the engine and a connector: what a connector is handed, what it returns.

A connector is a :class:`~.connector.Connector` subclass that also implements one or more of the
behaviour protocols below. What it can do is data, its :class:`~.capabilities.Capabilities` (partly
completed from these protocols); the engine calls a protocol's method only on a connector that
implements it (``isinstance``), never a method a connector does not declare. Every protocol is checked
statically (the type checker run by ``make test``) against the built-in connectors, and at run time
through ``runtime_checkable``.

Data between the engine and a connector:

* a :data:`Dataset` maps a table id (``"default"`` for single-table plugins) to a Spark
  DataFrame whose columns are the table's fields plus the hidden row-kind column
  (:data:`.rows.ROW_KIND`);
* a :class:`Vertex` is one plugin instance of a pipeline as the compiler planned it: its options
  (``config``), the datasets it reads, and the **parallelism** it must read or write at;
* a :class:`RunContext` is what the running pipeline offers: the Spark session, the run id
  that names this run's commits, and the engine's services (caching, fault points, stream state).

Compile time (no Spark, safe at DAG-parse time): ``problems``/``check``, :class:`SchemaInference`,
:class:`ReadsTablesByName`, :class:`PerInputSplit`, :class:`Lineage`, :class:`TableLineage`,
:class:`ColumnLineage`, :class:`NeedsJars`, :class:`NeedsSession`, :class:`SourceTables`.
Run time: the rest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from ..config.errors import Problem
    from ..config.loader import JobConfig, PluginConfig
    from .schema import Schema, TableKeys

SOURCE, TRANSFORM, SINK = "source", "transform", "sink"

#: table id -> DataFrame (data columns plus the hidden row-kind column)
Dataset = dict[str, "DataFrame"]


class Vertex(Protocol):
    """One plugin instance of a pipeline as compiled (the plan's vertex)."""

    @property
    def id(self) -> str: ...
    @property
    def ref(self) -> str: ...  # "source[0]": section and position in the config
    @property
    def kind(self) -> str: ...
    @property
    def plugin(self) -> str: ...
    @property
    def parallelism(self) -> int: ...  # what the plugin must read or write at
    @property
    def output(self) -> str | None: ...
    @property
    def inputs(self) -> tuple[str, ...]: ...
    @property
    def config(self) -> Mapping[str, Any]: ...
    @property
    def schema(self) -> Mapping[str, Any] | None: ...


class PipelineInfo(Protocol):
    """The pipeline (SubPlan) a vertex belongs to."""

    @property
    def id(self) -> int: ...
    @property
    def task_id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def vertices(self) -> Sequence[Any]: ...


class JobInfo(Protocol):
    """The job a pipeline belongs to."""

    @property
    def name(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def env(self) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class StreamInfo:
    """A STREAMING pipeline's trigger settings and checkpoint directory (a Hadoop URI)."""

    trigger: str  # "available_now" or "processing_time"
    interval_ms: int  # checkpoint.interval: a micro-batch every so often
    timeout_ms: int | None  # checkpoint.timeout: how long a micro-batch may take
    checkpoint: str


class RunContext(Protocol):
    """What the engine hands a connector while a pipeline runs.

    ``run_id`` names this run's commits: an attempt with the ``run_id`` of an earlier one is a
    restore (what that one committed must not be written again). In a STREAMING pipeline each
    micro-batch gets its own context whose ``run_id`` names the micro-batch and whose
    ``batch_id`` is set; ``save_mode_run_id`` is the same for every micro-batch of a stream
    (save modes are applied once per stream, once per run in BATCH).
    """

    @property
    def spark(self) -> SparkSession: ...
    @property
    def plan(self) -> JobInfo: ...
    @property
    def pipeline(self) -> PipelineInfo: ...
    @property
    def run_id(self) -> str: ...
    @property
    def attempt(self) -> int: ...
    @property
    def pipeline_key(self) -> str: ...
    @property
    def save_mode_run_id(self) -> str: ...
    @property
    def batch_id(self) -> int | None: ...  # the micro-batch (STREAMING sinks), None in BATCH
    @property
    def stream(self) -> StreamInfo | None: ...  # None in BATCH

    def label(self, vertex: Vertex) -> str:
        """How errors and progress lines name the vertex (``sink[0] LocalFile``)."""
        ...

    def materialize(self, df: DataFrame) -> DataFrame:
        """``df`` persisted and computed once now (every later reader reads the cached rows)."""
        ...

    def fault_point(self, point: str, vertex: Vertex | None = None) -> None:
        """A named point where restore trials inject faults (``sink.move`` before each step that
        publishes part of the data, ``sink.commit`` once it is in place, before the commit is
        recorded). Does nothing in production."""
        ...

    def with_write_faults(self, vertex: Vertex, df: DataFrame) -> DataFrame:
        """``df`` as it must be written by the write action of ``prepare`` (restore trials may fail
        or kill the write after some rows). ``df`` itself in production."""
        ...

    def state_dir(self, vertex: Vertex) -> str:
        """A directory (URI) where a STREAMING source keeps its own state across runs; stable
        while the pipeline's sources and sinks stay the same."""
        ...


# ---------------------------------------------------------------------------------------------
# Behaviour. A connector implements the protocols of what it does.
# ---------------------------------------------------------------------------------------------

@runtime_checkable
class BatchSource(Protocol):
    def read(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        """The source's tables, read at ``vertex.parallelism`` (that many partitions)."""
        ...


@runtime_checkable
class StreamingSource(Protocol):
    def read_stream(self, ctx: RunContext, vertex: Vertex) -> Dataset:
        """The source's tables as streaming DataFrames (a STREAMING job)."""
        ...


@runtime_checkable
class Transform(Protocol):
    def apply(self, ctx: RunContext, vertex: Vertex, inputs: Mapping[str, Dataset]) -> Dataset:
        """The output of the transform, given its inputs by dataset name (the order of
        ``vertex.inputs``). Must work on batch and streaming DataFrames alike."""
        ...


@runtime_checkable
class Sink(Protocol):
    def prepare(self, ctx: RunContext, vertex: Vertex, data: Dataset) -> Any:
        """Write ``data`` at ``vertex.parallelism`` so that nothing is visible yet (or, for a sink
        without a commit, write it); the value returned is handed to ``commit``/``abort``."""
        ...


@runtime_checkable
class TwoPhaseSink(Sink, Protocol):
    """A sink that publishes what ``prepare`` staged only when every sink of the pipeline has
    prepared. ``commit`` must be idempotent per ``ctx.run_id`` (a restore may call it again after
    a crash half way) and must never publish for an attempt that lost a race with another one."""

    def commit(self, ctx: RunContext, vertex: Vertex, info: Any) -> None: ...

    def abort(self, ctx: RunContext, vertex: Vertex, info: Any) -> None: ...


@runtime_checkable
class StreamFinish(Protocol):
    def finish_stream(self, ctx: RunContext, vertex: Vertex, written: Mapping[str, int]) -> None:
        """Checks at the end of a STREAMING run, given the rows written per table."""
        ...


@runtime_checkable
class RetiresCommits(Protocol):
    def retire(self, ctx: RunContext, vertex: Vertex, info: Any) -> None:
        """Micro-batch ``ctx.batch_id`` committed: the commit records of the stream's earlier
        micro-batches will never be replayed and may be dropped."""
        ...


@runtime_checkable
class AcknowledgesRead(Protocol):
    def acknowledge(self, ctx: RunContext, vertex: Vertex) -> None:
        """BATCH: every sink of the pipeline committed what this source read in this run; record that at
        the source (Kafka commits its consumer group's offsets). Called once after the commit; a failure
        is logged, never raised (the data is committed already)."""
        ...


@runtime_checkable
class SaveModes(Protocol):
    def save_mode(self, run_id: str, vertex: Vertex) -> list[str] | None:
        """Apply the schema/data save modes once for ``run_id`` (no Spark, on the task's worker);
        return what was done, or None when they must wait for the data (done in ``prepare``)."""
        ...


@runtime_checkable
class SchemaInference(Protocol):
    def schema(self, plugin: PluginConfig, job: JobConfig,
               inputs: Sequence[Schema | None]) -> tuple[Schema | None, list[Problem]]:
        """The output schema where the options give it (None: unknown until run time), and the
        problems found against the inputs' schemas (a field that does not exist)."""
        ...


#: a value still templated: a Jinja expression or statement, or a ``${placeholder}`` (its asset is
#: :class:`Unnamed` until the value is rendered)
UNRENDERED = re.compile(r"\{\{|\{%|\$\{")


@dataclass(frozen=True)
class Unnamed:
    """External data a plugin reads or writes that its options do not name (yet).

    ``target`` says how the options give it (``path '/out/{{ ds }}'``, ``the URL of connection
    'pg'``), for messages; ``at_run_time`` is whether the options of the running task (templates
    rendered, variables and connections resolved) or the data's tables (``${table_name}``, see
    :class:`TableLineage`) name it. False: nothing will (a relative path, a query whose tables
    cannot be read).
    """

    target: str
    at_run_time: bool = True


@runtime_checkable
class Lineage(Protocol):
    def assets(self, options: Mapping[str, Any]) -> Sequence[str | Unnamed]:
        """The external datasets it reads (a source) or writes (a sink), one URI each, named as
        OpenLineage names datasets and Airflow names assets: ``file:///abs/path``,
        ``s3://bucket/key``, ``postgres://host:port/database/schema/table``,
        ``mysql://host:port/database/table`` (a database's parts as path segments, percent-encoded,
        always with the port). An :class:`Unnamed` stands for a dataset the options do not name: a
        URI is never cut short (a path up to its first placeholder names other data)."""
        ...


@runtime_checkable
class TableLineage(Protocol):
    def table_assets(self, options: Mapping[str, Any], table: str) -> Sequence[str | Unnamed]:
        """What a sink writes for the upstream table ``table`` (its table id: ``t``, ``db.t``,
        ``db.schema.t``) where the data's tables name its targets (``${table_name}``): the
        :meth:`Lineage.assets` of its options for that table."""
        ...


#: OpenLineage's transformation subtypes: a column's value comes from its input columns unchanged
#: (IDENTITY), computed (TRANSFORMATION) or aggregated over rows (AGGREGATION), in that order of
#: strength (a chain of steps has its strongest step's subtype); an input column
#: decides which rows come out or how they are combined (FILTER, JOIN, GROUP_BY, SORT, WINDOW).
DIRECT_SUBTYPES = ("IDENTITY", "TRANSFORMATION", "AGGREGATION")
INDIRECT_SUBTYPES = ("FILTER", "JOIN", "GROUP_BY", "SORT", "WINDOW", "CONDITIONAL")


@dataclass(frozen=True)
class ColumnOrigin:
    """An input column a transform's output depends on: ``input`` is the dataset name (one of the
    vertex's inputs), ``subtype`` one of :data:`DIRECT_SUBTYPES` (for an output field's value) or
    :data:`INDIRECT_SUBTYPES` (for the rows as a whole); ``masking``: the value is hidden (a hash)."""

    input: str
    field: str
    subtype: str = "IDENTITY"
    masking: bool = False


@dataclass(frozen=True)
class ColumnFlow:
    """Column lineage of a transform: per output field, the input columns its value is computed
    from (``fields``), and the input columns that decide which rows come out (``rows``)."""

    fields: Mapping[str, tuple[ColumnOrigin, ...]]
    rows: tuple[ColumnOrigin, ...] = ()


@runtime_checkable
class ColumnLineage(Protocol):
    def column_lineage(self, options: Mapping[str, Any],
                       inputs: Mapping[str, Sequence[str] | None]) -> ColumnFlow | None:
        """Which input columns each output field comes from. ``inputs`` maps each input dataset
        name to its field names (None where unknown). None: the options do not tell (the lineage of
        the columns through this transform is then unknown)."""
        ...


@runtime_checkable
class NeedsJars(Protocol):
    def jars(self, options: Mapping[str, Any], env: Mapping[str, Any]) -> list[str]:
        """Jars Spark needs on its classpath for this plugin (a JDBC driver)."""
        ...


@runtime_checkable
class NeedsSession(Protocol):
    def session_conf(self, options: Mapping[str, Any], env: Mapping[str, Any]) -> Mapping[str, str]:
        """Spark settings the pipeline's session must be built with, which a running session cannot
        take (Hive support and its metastore: ``spark.sql.catalogImplementation``,
        ``spark.hadoop.hive.metastore.uris``). They join the env's ``spark.*`` settings; two plugins
        of one pipeline asking different values of a key fail the run
        (:class:`.errors.RuntimeConfigError`), so a connector reports such clashes at compile time."""
        ...


@runtime_checkable
class ReadsTablesByName(Protocol):
    def input_tables(self, plugin: PluginConfig) -> tuple[str, ...] | None:
        """The dataset names the plugin reads when its block names no ``plugin_input`` (a query's
        tables), or None when its options do not say."""
        ...


@dataclass(frozen=True)
class PerInput:
    """Whether a plugin with several inputs can run once per input (its pipeline then splits)."""

    blocker: str | None = None  # why it cannot (it combines rows across inputs), None: it can
    warning: str | None = None  # what changes when it does (a UNION's deduplication per pipeline)
    warning_key: str | None = None  # the option the warning is about
    hint: str | None = None  # what to do about it


@runtime_checkable
class PerInputSplit(Protocol):
    def per_input(self, plugin: PluginConfig, inputs: tuple[str, ...]) -> PerInput:
        """Whether the plugin, reading ``inputs``, can run once per input."""
        ...


@runtime_checkable
class ChangeEmitter(Protocol):
    def emits_changes(self, vertex: Vertex, inputs_change: bool) -> bool:
        """Whether rows other than INSERT can come out of it, given whether its inputs carry any."""
        ...


@runtime_checkable
class SourceTables(Protocol):
    def tables(self, plugin: PluginConfig) -> Mapping[str, TableKeys] | None:
        """The tables a source produces, by table id, each with the catalog keys its options declare
        (more than one table: a multi-table source). None when the options do not say (read at run time)."""
        ...


@dataclass(frozen=True)
class ConnectionInfo:
    """An Airflow connection as a connector sees it (connectors never import Airflow); ``settings``
    holds the switches of the deployment that bear on it (e.g. ``allow_driver_path_in_extra``)."""

    conn_id: str
    conn_type: str
    host: str | None = None
    port: int | None = None
    schema: str | None = None
    login: str | None = None
    password: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)
    settings: Mapping[str, bool] = field(default_factory=dict)

    def credentials(self) -> dict[str, str]:
        """The login and password as the block options ``username`` and ``password``, both or neither (a
        login without a password is an empty password): plugins whose options bundle the two."""
        if not self.login and not self.password:
            return {}
        return {"username": str(self.login or ""), "password": str(self.password or "")}


@runtime_checkable
class FromConnection(Protocol):
    """A plugin whose address and credentials may come from an Airflow connection, named by its
    option ``connection_option`` (``jdbc_conn_id``, ``redis_conn_id``), or given to a whole task
    group by that option's name. Resolved when the task runs, never at parse time; the options a
    block sets itself win over the connection's."""

    connection_option: str

    def connection_options(self, conn: ConnectionInfo) -> dict[str, Any]:
        """The block options the connection supplies."""
        ...

    def takes_default_connection(self, options: Mapping[str, Any]) -> bool:
        """Whether a block without ``connection_option`` takes the group's connection (a block that
        names its own credentials does not)."""
        ...

