"""How the streaming loop reads its queries' states: a query that fails between two looks at it is a
failure, never a pipeline that ended cleanly (seen on Spark Connect under load: the query's error was
lost and the run reported FINISHED with 0 rows). No Spark: the handles are scripted."""

from __future__ import annotations

import threading
from types import SimpleNamespace

import pytest
from pyspark.sql.types import LongType, StructField, StructType

from airflow_provider_seatunnel.runtime import streaming
from airflow_provider_seatunnel.spi.errors import PipelineError


class _Handle:
    """A query handle whose ``isActive`` answers from a script (then False), with an exception once ended."""

    def __init__(self, active: list[bool], error: Exception | None) -> None:
        self.active, self.error, self.id = list(active), error, "stream-1"
        self.lastProgress, self.recentProgress, self.status = None, [], {"isTriggerActive": False}

    @property
    def isActive(self) -> bool:  # PySpark's name
        return self.active.pop(0) if self.active else False

    def exception(self) -> Exception | None:
        return None if self.active else self.error

    def stop(self) -> None:
        self.active = []


class _Writer:
    def __init__(self, handle: _Handle) -> None:
        self.handle = handle

    def __getattr__(self, name: str):  # foreachBatch, option, queryName, trigger: the builder
        return lambda *a, **k: self

    def start(self) -> _Handle:
        return self.handle


def _query(handle: _Handle) -> streaming._Query:
    df = SimpleNamespace(schema=StructType([StructField("id", LongType())]), writeStream=_Writer(handle))
    ctx = SimpleNamespace(pipeline=SimpleNamespace(task_id="p"), pipeline_key="p", label=lambda v: f"sink {v}",
                          fail=lambda v, e: PipelineError(f"failed: {e}", "sink", "p"))
    q = streaming._Query(ctx, "v", SimpleNamespace(capabilities=SimpleNamespace(deletes=True)), "t", df, "cp",
                         lambda text: None, None)
    q.process = lambda df, batch: None
    q.vertex = SimpleNamespace(ref="sink[0]")
    return q


def _run(handle: _Handle) -> str | None:
    q = _query(handle)
    info = SimpleNamespace(trigger=streaming.AVAILABLE_NOW, interval_ms=1000)
    return streaming._run_queries(q.ctx, [q], info, threading.Event(), lambda text: None)


def test_a_query_failing_between_two_looks_is_a_failure():
    # active at the first look of a round, ended (with its error) at any later one
    with pytest.raises(PipelineError, match="the sink's micro-batch failed"):
        _run(_Handle([True], RuntimeError("the sink's micro-batch failed")))


def test_a_query_ending_without_an_error_ends_the_run():
    assert _run(_Handle([True, True], None)) is None
