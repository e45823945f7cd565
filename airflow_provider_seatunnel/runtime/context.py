"""The run context the engine hands connectors (:class:`..spi.contract.RunContext`), and the
names a pipeline's state is kept under.

State keys: a STREAMING pipeline keeps its checkpoints under ``<root>/<job name>/<pipeline task
id>``, each query's under ``queries/<sink key>/<table>`` and each source's own state under
``sources/<source key>``. The task id and the keys (:func:`vertex_key`) come from what the
plugins read and write, not from positions, so recompiling the config resumes the same state and
adding or reordering pipelines and blocks leaves the others alone.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from ..config.hocon import MISSING
from ..config.options import lookup
from ..plan.model import JobPlan, PipelinePlan, PlanVertex
from ..plan.streaming import checkpoint_root, stream_settings
from ..spi import StreamInfo, get_connector
from ..spi.errors import PipelineError, error_from
from ..spi.hadoop import as_uri
from ..spi.registry import secret_options
from ..spi.secrets import public_identity
from . import faults

#: how the job summary shows a time (local, as SeaTunnel's summary prints it)
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def now() -> str:
    """The time as the metrics hold it: UTC, ISO 8601 with its offset (``2024-05-06T10:11:12+00:00``)."""
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class RunContext:
    """What a connector sees of the run (implements :class:`..spi.contract.RunContext`).

    ``options`` holds runtime switches (fault injection for restore trials). ``on_progress`` takes
    each progress report as plain data (:func:`.progress.snapshot`; a STREAMING pipeline's per
    micro-batch), where someone listens. A micro-batch of a STREAMING pipeline has its own context
    (:meth:`for_batch`)."""

    spark: Any  # SparkSession
    plan: JobPlan
    pipeline: PipelinePlan
    run_id: str
    attempt: int = 1
    options: Mapping[str, Any] = field(default_factory=dict)
    stream: StreamInfo | None = None
    batch_id: int | None = None
    stream_id: str = ""
    on_progress: Callable[[Mapping[str, Any]], None] | None = None

    def __post_init__(self) -> None:
        if self.stream is None and str(getattr(self.plan, "mode", "")).upper() == "STREAMING":
            self.stream = stream_of(self.plan, self.pipeline)

    @property
    def pipeline_key(self) -> str:
        return self.pipeline.task_id

    @property
    def save_mode_run_id(self) -> str:
        """Save modes apply once per run, and once per stream (not per micro-batch)."""
        return f"{self.stream_id}:stream" if self.batch_id is not None else self.run_id

    def label(self, vertex: Any) -> str:
        return f"{vertex.ref} {vertex.plugin}"

    def for_batch(self, stream_id: str, batch_id: int) -> RunContext:
        """The context of micro-batch ``batch_id`` of stream ``stream_id``: its run id names the batch."""
        return RunContext(spark=self.spark, plan=self.plan, pipeline=self.pipeline,
                          run_id=f"{stream_id}:batch-{batch_id}", attempt=self.attempt, options=self.options,
                          stream=self.stream, batch_id=batch_id, stream_id=stream_id)

    def materialize(self, df: Any) -> Any:
        """Persist ``df`` and compute it once now, so the counting points below it run exactly once
        and every consumer reads the cached rows."""
        df = df.persist()
        df.write.format("noop").mode("overwrite").save()
        return df

    def fault_point(self, point: str, vertex: Any = None) -> None:
        faults.checkpoint(self, point, vertex)

    def with_write_faults(self, vertex: Any, df: Any) -> Any:
        return faults.inject_into_write(self, vertex, df)

    def stream_info(self) -> StreamInfo:
        """The stream of this pipeline (computed from the plan when the context has none)."""
        if self.stream is not None:
            return self.stream
        return stream_of(self.plan, self.pipeline)

    def state_dir(self, vertex: Any) -> str:
        return f"{self.stream_info().checkpoint}/sources/{vertex_key(self.pipeline, vertex)}"

    def fail(self, vertex: Any, error: BaseException) -> PipelineError:
        """``error`` as a PipelineError naming this pipeline and ``vertex`` (``None``: the pipeline
        only) that says what happened and whether a retry can help (:func:`..spi.errors.error_from`:
        the root cause down the Java cause chain; bad data, refused access and exhausted memory are
        deterministic, with the fix); an injected fault raised inside a Spark task stays transient."""
        plugin = self.label(vertex) if vertex is not None else None
        if not isinstance(error, PipelineError):
            fault = faults.injected(error)
            if fault is not None:
                return fault.located(plugin, self.pipeline_key)
        return error_from(error, plugin, self.pipeline_key, self.spark_settings())

    def spark_settings(self) -> dict[str, str]:
        """The Spark settings a failure's fix names (memory, master): the session's, else the plan's ``env``."""
        keys = ("spark.master", "spark.driver.memory", "spark.executor.memory")
        settings = {k: str(v) for k, v in self.plan.env.items() if k in keys}
        try:
            conf = self.spark.sparkContext.getConf()
            settings.update({k: str(conf.get(k)) for k in keys if conf.contains(k)})
        except Exception:  # the JVM is gone (it may be what failed): the plan's figures
            pass
        return settings


def stream_of(plan: JobPlan, pipeline: PipelinePlan) -> StreamInfo:
    """A STREAMING pipeline's settings and checkpoint directory, from the plan's ``env``."""
    settings = stream_settings(plan.env)
    return StreamInfo(trigger=settings.trigger, interval_ms=settings.interval_ms, timeout_ms=settings.timeout_ms,
                      checkpoint=pipeline_checkpoint(plan, pipeline, checkpoint_root(settings)))


def slug(text: str) -> str:
    """A path-safe name; a short hash keeps distinct texts distinct."""
    cleaned = re.sub(r"[^A-Za-z0-9_.-]+", "_", str(text)).strip("._") or "x"
    return cleaned if cleaned == text else f"{cleaned}-{hashlib.sha1(str(text).encode()).hexdigest()[:6]}"


def pipeline_checkpoint(plan: Any, pipeline: Any, root: str) -> str:
    """``<root>/<job name>/<task id>`` as a URI."""
    return f"{as_uri(root).rstrip('/')}/{slug(plan.name)}/{pipeline.task_id}"


def vertex_key(pipeline: Any, vertex: PlanVertex) -> str:
    """A name for a source or sink of ``pipeline`` that does not depend on its position in the config:
    its plugin, datasets and the options naming its data, credentials masked (what the pipeline's
    task id is made of), so
    reordering or adding blocks keeps each query's checkpoint; twins are numbered in order."""
    def content(v: PlanVertex) -> str:
        connector = get_connector(v.plugin)
        identity = public_identity({k: lookup(v.config, k) for k in (connector.identity if connector else ())
                                    if lookup(v.config, k) is not MISSING}, secret_options(v.plugin))
        return json.dumps({"plugin": v.plugin.lower(), "output": v.output, "inputs": sorted(v.inputs),
                           "identity": identity}, sort_keys=True, default=str)

    mine = content(vertex)
    twins = [v.id for v in pipeline.vertices if v.kind == vertex.kind and content(v) == mine]
    index = twins.index(vertex.id) if vertex.id in twins else 0
    return (f"{slug(vertex.plugin.lower())}-{hashlib.sha1(mine.encode()).hexdigest()[:8]}"
            + (f"-{index + 1}" if index else ""))
