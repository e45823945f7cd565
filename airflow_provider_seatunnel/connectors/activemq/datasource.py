"""The ActiveMQ sink's staging as a PySpark Python data source (``df.write.format(NAME)``): one write task per
partition, each sending its partition's rows (JSON text) to the attempt's staging queue in ONE broker
transaction, committed with a receipt, so a task's rows are staged whole or not at all. Each message carries its
task (``seatunnel-task: <partition>.<attempt>``): the publish moves only the messages of the task attempts Spark
committed. Spark's commit (on the driver's side) sends the manifest of those tasks to ``<staging>.manifest``;
an aborted write drains the staging queue. Run time only (imports PySpark).

The spec (endpoint with credentials, queues) travels in one option, :data:`SPEC_OPTION`, whose name Spark's
redaction rule matches: plans and the UI show it as ``*********(redacted)``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from pyspark.sql.datasource import DataSourceWriter, WriterCommitMessage

from ...spi.specsource import SpecSource
from .client import connected, drain
from .options import RECORD_TTL_MS, Endpoint
from .stomp import queue

NAME = "seatunnel_activemq"
SPEC_OPTION = "seatunnel.activemq.secret"
TASK_HEADER = "seatunnel-task"


class ActiveMQDataSource(SpecSource):
    """``df.write.format("seatunnel_activemq")`` of one string column, given the spec option."""

    format_name = NAME
    spec_option = SPEC_OPTION

    def writer(self, schema: Any, overwrite: bool) -> DataSourceWriter:
        return _Writer(self.spec)


@dataclass
class StagedTask(WriterCommitMessage):
    """What one write task staged: its partition, Spark's attempt number of it, the messages."""

    partition: int
    attempt: int
    rows: int


class _Writer(DataSourceWriter):
    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    def write(self, iterator: Iterator[Any]) -> WriterCommitMessage:
        from pyspark import TaskContext

        task = TaskContext.get()
        partition, attempt = (task.partitionId(), task.attemptNumber()) if task is not None else (0, 0)
        endpoint = Endpoint.from_json(self.spec["endpoint"])
        headers = {"persistent": "true", TASK_HEADER: f"{partition}.{attempt}",
                   "expires": str(int(time.time() * 1000) + RECORD_TTL_MS)}
        rows = 0
        with connected(endpoint, f"cannot stage into {endpoint.label}") as conn:
            tx = conn.begin()
            destination = queue(self.spec["staging"])
            for row in iterator:
                conn.send(destination, b"" if row[0] is None else str(row[0]).encode("utf-8"), tx, headers)
                rows += 1
            conn.commit(tx)
        return StagedTask(partition, attempt, rows)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        tasks = [[m.partition, m.attempt, m.rows] for m in messages if isinstance(m, StagedTask)]
        endpoint = Endpoint.from_json(self.spec["endpoint"])
        with connected(endpoint, f"cannot record the staging manifest in {endpoint.label}") as conn:
            conn.send(queue(self.spec["staging"] + ".manifest"), json.dumps(tasks).encode(), receipt=True,
                      headers={"persistent": "true", "expires": str(int(time.time() * 1000) + RECORD_TTL_MS)})

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        endpoint = Endpoint.from_json(self.spec["endpoint"])
        with connected(endpoint, f"cannot drain the staging in {endpoint.label}") as conn:
            drain(conn, self.spec["staging"])
