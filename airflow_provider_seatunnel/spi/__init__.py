"""The connector contract: the ground floor every connector is written against.

* :mod:`.contract`: the behaviour protocols (sources, transforms, sinks, two-phase commit,
  streaming, save modes, schema inference...), the :class:`~.contract.Vertex` and
  :class:`~.contract.RunContext` a connector is handed;
* :mod:`.capabilities`: what a connector can do, one frozen :class:`~.capabilities.Capabilities` value
  each connector class declares;
* :mod:`.connector`: the :class:`~.connector.Connector` base class (name, sections, options,
  compile-time checks);
* :mod:`.registry`: plugins by case-insensitive name, built-in or from an entry point;
* :mod:`.schema`: SeaTunnel's row types; :mod:`.rows`: row kinds on Spark;
* :mod:`.errors`: run-time failures; :mod:`.secrets`: what is masked;
* :mod:`.fencing`: the rules that keep overlapping attempts of one run from both committing;
* :mod:`.options`: reading a plugin block (re-exported from the config reader).

Connectors import this package (and PySpark), never the planner, the runtime or the Airflow
layer; the layers are enforced by ``lint-imports`` and the protocols by the type checker.
"""

from .capabilities import Capabilities
from .connector import NOT_RUNNABLE, Connector, KnownPlugin, exactly_one_of
from .contract import (
    SINK,
    SOURCE,
    TRANSFORM,
    UNRENDERED,
    AcknowledgesRead,
    BatchSource,
    ChangeEmitter,
    ColumnFlow,
    ColumnLineage,
    ColumnOrigin,
    ConnectionInfo,
    Dataset,
    FromConnection,
    Lineage,
    NeedsJars,
    NeedsSession,
    PerInput,
    PerInputSplit,
    ReadsTablesByName,
    RetiresCommits,
    RunContext,
    SaveModes,
    SchemaInference,
    Sink,
    SourceTables,
    StreamFinish,
    StreamInfo,
    StreamingSource,
    TableLineage,
    Transform,
    TwoPhaseSink,
    Unnamed,
    Vertex,
)
from .registry import ENTRY_POINT_GROUP, available, get_connector

__all__ = [
    "ENTRY_POINT_GROUP",
    "NOT_RUNNABLE",
    "SINK",
    "SOURCE",
    "TRANSFORM",
    "UNRENDERED",
    "AcknowledgesRead",
    "BatchSource",
    "Capabilities",
    "ChangeEmitter",
    "ColumnFlow",
    "ColumnLineage",
    "ColumnOrigin",
    "ConnectionInfo",
    "Connector",
    "Dataset",
    "FromConnection",
    "KnownPlugin",
    "Lineage",
    "NeedsJars",
    "NeedsSession",
    "PerInput",
    "PerInputSplit",
    "ReadsTablesByName",
    "RetiresCommits",
    "RunContext",
    "SaveModes",
    "SchemaInference",
    "Sink",
    "SourceTables",
    "StreamFinish",
    "StreamInfo",
    "StreamingSource",
    "TableLineage",
    "Transform",
    "TwoPhaseSink",
    "Unnamed",
    "Vertex",
    "available",
    "exactly_one_of",
    "get_connector",
]
