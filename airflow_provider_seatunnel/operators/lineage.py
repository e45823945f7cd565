"""Lineage of a pipeline task: its Airflow assets (inlets, outlets, asset events) and its OpenLineage metadata.

**Names.** A connector names the external data of a vertex (:class:`..spi.Lineage`) with one URI
per dataset, as Airflow names assets: ``file:///abs/path``, ``s3://bucket/key``,
``postgres://host:port/database/schema/table``, ``mysql://host:port/database/table``. The same
dataset in OpenLineage (:func:`openlineage_name`) is the namespace and name OpenLineage's naming
gives it (and Airflow's own translation of such an asset, where a provider has one): ``file`` and
``/abs/path``; ``s3://bucket`` and ``key``; ``postgres://host:port`` and ``database.schema.table``.

**Parse time** (:func:`pipeline_assets`): a dataset the options name is an ``Asset``. A sink's
dataset named only when the task runs (a Jinja template or variable in its path, a table from an
Airflow connection, tables the data names) makes the sink's ``AssetAlias``
``seatunnel/<pipeline task id>/<sink ref>``; a source's is left to OpenLineage (Airflow declares
inlets at parse time only). A dataset nothing will name is logged as a warning, once per process;
a URI is never cut short to stand for it.

**Run time** (:func:`publish_assets`): once the pipeline committed, each alias receives the assets
its sink wrote, named from the task's own plan (rendered, connections resolved) and, for tables
the data names, from the tables its metrics say it wrote.

**OpenLineage** (:func:`operator_lineage`): the pipeline's sources as inputs and sinks as outputs,
with their schema (the plan's vertex schemas), the rows read and written (the metrics), and the
column lineage of the transforms between them (:class:`..spi.ColumnLineage`; the Sql transform's
from its query), composed back to the sources' columns.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote, urlsplit

from airflow.sdk import Asset, AssetAlias

from ..spi import ColumnFlow, ColumnLineage, Lineage, TableLineage, Unnamed, get_connector
from ..spi.contract import DIRECT_SUBTYPES
from ..spi.schema import TypeError_, schema_from_options
from ..spi.secrets import public_uri

if TYPE_CHECKING:
    from ..plan.model import PipelinePlan, PlanVertex

log = logging.getLogger(__name__)

#: The prefix of the names of the aliases this package declares: ``seatunnel/<pipeline task id>/<sink ref>``.
ALIAS_PREFIX = "seatunnel/"
#: URI schemes whose datasets are files: their OpenLineage name is the path (object stores: the key).
FILE_SCHEMES = frozenset({"file", "hdfs", "viewfs", "dbfs", "abfs", "abfss", "wasb", "wasbs"})
OBJECT_STORES = {"s3": "s3", "s3a": "s3", "s3n": "s3", "gs": "gs", "gcs": "gs", "oss": "oss", "cosn": "cosn"}
_noted: set[tuple[str, str, str]] = set()


def label(vertex: PlanVertex) -> str:
    """How the metrics name a vertex (``sink[0] LocalFile``)."""
    return f"{vertex.ref} {vertex.plugin}"


def vertex_assets(vertex: PlanVertex) -> list[str | Unnamed]:
    """The datasets the vertex's connector names from its options (none without :class:`..spi.Lineage`)."""
    try:
        connector = get_connector(vertex.plugin)
    except KeyError:
        return []
    if not isinstance(connector, Lineage):
        return []
    # An asset is a public name: credentials a URL option embeds never reach it.
    return [public_uri(item) if isinstance(item, str) else item for item in connector.assets(vertex.config)]


def alias_of(pipeline: PipelinePlan, vertex: PlanVertex) -> AssetAlias:
    """The alias of a sink whose datasets are named when the task runs."""
    return AssetAlias(name=f"{ALIAS_PREFIX}{pipeline.task_id}/{vertex.ref}")


# -- parse time ----------------------------------------------------------------------------------


def pipeline_assets(pipeline: PipelinePlan) -> tuple[list[Asset], list[Asset | AssetAlias]]:
    """Airflow lineage of one pipeline: its sources' datasets as inlets; its sinks' as outlets, an
    ``AssetAlias`` per sink with a dataset named only when the task runs (see the module docstring)."""
    inlets: list[str] = []
    for vertex in pipeline.sources:
        for item in vertex_assets(vertex):
            if isinstance(item, Unnamed):
                _note(pipeline, vertex, item, None)
            elif item not in inlets:
                inlets.append(item)
    outlets: list[str] = []
    aliases: list[AssetAlias] = []
    for vertex in pipeline.sinks:
        items = vertex_assets(vertex)
        alias = alias_of(pipeline, vertex) if any(isinstance(i, Unnamed) and i.at_run_time for i in items) else None
        if alias is not None:
            aliases.append(alias)
        for item in items:
            if isinstance(item, Unnamed):
                _note(pipeline, vertex, item, alias)
            elif item not in outlets:
                outlets.append(item)
    return ([Asset(u) for u in sorted(inlets)],
            [*(Asset(u) for u in sorted(outlets)), *sorted(aliases, key=lambda a: a.name)])


def job_outlets(config: Any, variables: Mapping[str, Any] | None = None, *,
                format: str | None = None) -> list[Asset | AssetAlias]:
    """The outlets every pipeline of a job declares (its sinks' assets and asset aliases), as its
    ``SeaTunnelJobGroup`` or ``SeaTunnelOperator`` gives them for the same config and the same
    unrendered ``variables``: what a downstream DAG schedules on (``schedule=job_outlets(...)``)."""
    from ..plan.compiler import compile_job

    out: list[Asset | AssetAlias] = []
    for pipeline in compile_job(config, dict(variables or {}), format=format).pipelines:
        out.extend(o for o in pipeline_assets(pipeline)[1] if o not in out)
    return out


def _note(pipeline: PipelinePlan, vertex: PlanVertex, item: Unnamed, alias: AssetAlias | None) -> None:
    """Say once per process what becomes of a dataset the options do not name: a warning when nothing
    will name it, a debug line when the running task will."""
    key = (pipeline.task_id, vertex.ref, item.target)
    if key in _noted:
        return
    _noted.add(key)
    where = f"{label(vertex)} of pipeline {pipeline.task_id}"
    if not item.at_run_time:
        log.warning("%s: %s cannot be named: it gets no Airflow asset and no OpenLineage dataset", where,
                    item.target)
    elif alias is not None:
        log.debug("%s: %s is named when the task runs: declared as the asset alias %r", where, item.target,
                  alias.name)
    else:
        log.debug("%s: %s is named when the task runs, as an OpenLineage input (Airflow's inlets are "
                  "declared at parse time)", where, item.target)


# -- run time ------------------------------------------------------------------------------------


def run_time_assets(vertex: PlanVertex, metrics: Mapping[str, Any] | None) -> tuple[dict[str, int | None],
                                                                                   list[Unnamed]]:
    """The datasets of a vertex of the running task's plan, with the rows the metrics say it wrote
    to each (None where they do not say), and what still has no name. Targets the data's tables name
    are named per table the sink wrote (:class:`..spi.TableLineage`)."""
    try:
        connector = get_connector(vertex.plugin)
    except KeyError:
        return {}, []
    if not isinstance(connector, Lineage):
        return {}, []
    counts = _counts(vertex, metrics)
    items = list(connector.assets(vertex.config))
    named: dict[str, int | None] = {}
    unnamed: list[Unnamed] = []
    for item in items:
        if not isinstance(item, Unnamed):
            named[public_uri(item)] = counts.get(None) if len(items) == 1 else None
        elif item.at_run_time and isinstance(connector, TableLineage) and len(counts) > int(None in counts):
            for table, rows in counts.items():
                for found in connector.table_assets(vertex.config, table) if table is not None else ():
                    if isinstance(found, Unnamed):
                        unnamed.append(found)
                    else:
                        found = public_uri(found)
                        named[found] = rows if named.get(found) is None else (named[found] or 0) + (rows or 0)
        else:
            unnamed.append(item)
    return named, unnamed


def _counts(vertex: PlanVertex, metrics: Mapping[str, Any] | None) -> dict[str | None, int | None]:
    """Rows per table the vertex wrote (a sink) or read (a source): ``None`` for its total."""
    if not metrics:
        return {}
    name = label(vertex)
    if vertex.kind == "source":
        total = (metrics.get("per_source") or {}).get(name)
        return {None: total} if total is not None else {}
    out: dict[str | None, int | None] = dict((metrics.get("per_table") or {}).get(name) or {})
    total = (metrics.get("per_sink") or {}).get(name)
    if total is not None:
        out[None] = total
    return out


def publish_assets(outlets: Iterable[Any], context: Mapping[str, Any], pipeline: PipelinePlan,
                   metrics: Mapping[str, Any]) -> list[str]:
    """Add to each alias of ``outlets`` (this package's) the assets its sink wrote; return their URIs.
    Only a pipeline that committed publishes; a dataset still unnamed is logged as a warning."""
    events = context.get("outlet_events")
    if events is None or metrics.get("status") != "FINISHED":
        return []
    sinks = {v.ref: v for v in pipeline.sinks}
    published: list[str] = []
    for alias in outlets:
        if not isinstance(alias, AssetAlias) or not alias.name.startswith(ALIAS_PREFIX):
            continue
        vertex = sinks.get(alias.name.rsplit("/", 1)[-1])
        if vertex is None:
            log.warning("asset alias %r names no sink of pipeline %s", alias.name, pipeline.task_id)
            continue
        named, unnamed = run_time_assets(vertex, metrics)
        for uri in sorted(named):
            events[alias].add(Asset(uri))
            published.append(uri)
        for item in unnamed:
            log.warning("%s: %s has no name even now: no asset event for it", label(vertex), item.target)
    return published


# -- OpenLineage ---------------------------------------------------------------------------------


def openlineage_name(uri: str) -> tuple[str, str]:
    """The OpenLineage namespace and name of a dataset URI (see the module docstring)."""
    parts = urlsplit(uri)
    scheme, host, path = parts.scheme.lower(), parts.netloc, unquote(parts.path)
    if scheme in OBJECT_STORES:
        return f"{OBJECT_STORES[scheme]}://{host}", path.lstrip("/") or "/"
    if scheme in FILE_SCHEMES:
        return (f"{scheme}://{host}" if host else scheme), path or "/"
    return f"{scheme}://{host}", ".".join(unquote(p) for p in parts.path.split("/") if p)


def operator_lineage(pipeline: PipelinePlan, metrics: Mapping[str, Any] | None) -> Any:
    """The ``OperatorLineage`` of a pipeline task: inputs and outputs with their facets. Needs the
    OpenLineage provider (the listener that asks for it is part of it)."""
    from airflow.providers.openlineage.extractors import OperatorLineage
    from openlineage.client.generated.base import InputDataset, OutputDataset
    from openlineage.client.generated.input_statistics_input_dataset import InputStatisticsInputDatasetFacet
    from openlineage.client.generated.output_statistics_output_dataset import OutputStatisticsOutputDatasetFacet

    committed = bool(metrics) and metrics.get("status") == "FINISHED"  # type: ignore[union-attr]
    tracer = _Tracer(pipeline)
    inputs, sources = [], {}
    for vertex in pipeline.sources:
        named, _ = run_time_assets(vertex, metrics)
        sources[vertex.id] = [openlineage_name(u) for u in sorted(named)]
        for uri, rows in sorted(named.items()):
            stats: dict[str, Any] = ({"inputStatistics": InputStatisticsInputDatasetFacet(rowCount=rows)}
                                     if committed and rows is not None else {})
            inputs.append(InputDataset(*openlineage_name(uri), facets=_schema_facet(tracer.fields(vertex)),
                                       inputFacets=stats))
    outputs = []
    for vertex in pipeline.sinks:
        named, _ = run_time_assets(vertex, metrics)
        upstream = _producer(pipeline, vertex.inputs[0]) if vertex.inputs else None
        facets = _schema_facet(tracer.fields(upstream) if upstream is not None else None)
        columns = _column_facet(tracer, vertex, sources)
        if columns is not None:
            facets["columnLineage"] = columns
        for uri, rows in sorted(named.items()):
            out_stats: dict[str, Any] = ({"outputStatistics": OutputStatisticsOutputDatasetFacet(rowCount=rows)}
                                         if committed and rows is not None else {})
            outputs.append(OutputDataset(*openlineage_name(uri), facets=dict(facets), outputFacets=out_stats))
    return OperatorLineage(inputs=inputs, outputs=outputs)


def fields_of(vertex: PlanVertex) -> Mapping[str, Any] | None:
    """A vertex's output fields and their types as the plan knows them, else a source's ``schema``
    option (the data's own columns, where the plan leaves the schema open for columns it may add)."""
    if vertex.schema:
        return vertex.schema
    if vertex.kind != "source":
        return None
    try:
        declared = schema_from_options(vertex.config)
    except TypeError_:
        return None
    return declared.to_json() if declared is not None else None


def _schema_facet(schema: Mapping[str, Any] | None) -> dict[str, Any]:
    from openlineage.client.generated.schema_dataset import SchemaDatasetFacet, SchemaDatasetFacetFields

    if not schema:
        return {}
    return {"schema": SchemaDatasetFacet(fields=[
        SchemaDatasetFacetFields(name=str(k), type=str(v) if v is not None else None) for k, v in schema.items()])}


def _producer(pipeline: PipelinePlan, dataset: str) -> PlanVertex | None:
    """The vertex of the pipeline whose output is ``dataset``."""
    return next((v for v in pipeline.vertices if v.output == dataset and v.kind != "sink"), None)


def _column_facet(tracer: _Tracer, sink: PlanVertex, sources: Mapping[str, Sequence[tuple[str, str]]]) -> Any:
    """The sink's column lineage back to the sources' datasets, or None where nothing is known."""
    from openlineage.client.generated.column_lineage_dataset import (
        ColumnLineageDatasetFacet,
        Fields,
        InputField,
        Transformation,
    )

    fields: dict[str, Any] = {}
    rows: list[Any] = []
    for dataset in sink.inputs:
        upstream = _producer(tracer.pipeline, dataset)
        for field in (tracer.fields(upstream) or {}) if upstream is not None else {}:
            found = [InputField(namespace=ns, name=name, field=f,
                                transformations=[Transformation(type="DIRECT", subtype=subtype, masking=masking)])
                     for src, f, subtype, masking in tracer.trace(dataset, field) or ()
                     for ns, name in _one(sources.get(src))]
            if found:
                fields[field] = Fields(inputFields=found)
        rows += [InputField(namespace=ns, name=name, field=f,
                            transformations=[Transformation(type="INDIRECT", subtype=subtype)])
                 for src, f, subtype, _ in tracer.rows(dataset) for ns, name in _one(sources.get(src))]
    return ColumnLineageDatasetFacet(fields=fields, dataset=rows) if fields or rows else None


def _one(datasets: Sequence[tuple[str, str]] | None) -> Sequence[tuple[str, str]]:
    """A source's dataset, where it has exactly one (the columns of several cannot be told apart)."""
    return datasets if datasets is not None and len(datasets) == 1 else ()


#: (source vertex id, field, subtype, masking)
Origin = tuple[str, str, str, bool]


class _Tracer:
    """Follows a pipeline's columns back through its transforms to its sources' columns."""

    def __init__(self, pipeline: PipelinePlan) -> None:
        self.pipeline = pipeline
        self._flows: dict[str, ColumnFlow | None] = {}

    def fields(self, vertex: PlanVertex) -> Mapping[str, Any] | None:
        """The vertex's output fields (types where known): :func:`fields_of`, else a transform's
        column lineage's fields."""
        known = fields_of(vertex)
        if known or vertex.kind != "transform":
            return known
        flow = self.flow(vertex)
        return dict.fromkeys(flow.fields) if flow is not None and flow.fields else None

    def flow(self, vertex: PlanVertex) -> ColumnFlow | None:
        """The transform's column lineage (:class:`..spi.ColumnLineage`), None where unknown."""
        if vertex.id not in self._flows:
            self._flows[vertex.id] = None  # a cycle cannot be: the plan is a DAG
            try:
                connector = get_connector(vertex.plugin)
            except KeyError:
                connector = None
            if isinstance(connector, ColumnLineage):
                inputs: dict[str, Sequence[str] | None] = {}
                for name in vertex.inputs:
                    producer = _producer(self.pipeline, name)
                    known = self.fields(producer) if producer is not None else None
                    inputs[name] = list(known) if known else None
                self._flows[vertex.id] = connector.column_lineage(vertex.config, inputs)
        return self._flows[vertex.id]

    def trace(self, dataset: str, field: str, depth: int = 0) -> list[Origin] | None:
        """The source columns ``field`` of ``dataset`` is computed from; None where a step is unknown."""
        vertex = _producer(self.pipeline, dataset)
        if vertex is None or depth > 64:
            return None
        if vertex.kind == "source":
            return [(vertex.id, field, "IDENTITY", False)]
        flow = self.flow(vertex)
        if flow is None or field not in flow.fields:
            return None
        out: list[Origin] = []
        for origin in flow.fields[field]:
            below = self.trace(origin.input, origin.field, depth + 1)
            if below is None:
                return None
            out += [(src, f, max(origin.subtype, sub, key=DIRECT_SUBTYPES.index), origin.masking or masked)
                    for src, f, sub, masked in below]
        return list(dict.fromkeys(out))

    def rows(self, dataset: str, depth: int = 0) -> list[Origin]:
        """The source columns that decide which rows of ``dataset`` there are (filters, joins...)."""
        vertex = _producer(self.pipeline, dataset)
        if vertex is None or vertex.kind == "source" or depth > 64:
            return []
        flow = self.flow(vertex)
        if flow is None:
            return []
        out: list[Origin] = []
        for origin in flow.rows:
            out += [(src, f, origin.subtype, False) for src, f, _, _ in self.trace(origin.input, origin.field) or ()]
        for name in vertex.inputs:
            out += self.rows(name, depth + 1)
        return list(dict.fromkeys(out))
