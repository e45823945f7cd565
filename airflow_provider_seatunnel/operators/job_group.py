"""``SeaTunnelJobGroup``: one Airflow task per pipeline (SubPlan) of a SeaTunnel job."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from airflow.sdk import TaskGroup

from ..plan.compiler import compile_job
from .seatunnel import SeaTunnelOperator


class SeaTunnelJobGroup(TaskGroup):
    """Compile ``config`` at DAG-parse time (through the plan cache) and render one
    :class:`SeaTunnelOperator` per pipeline, with the plan's stable task ids and no edges between
    them: pipelines are independent and run in parallel.

    ``config`` must be a readable file path or inline text here (it is compiled at parse time);
    a ``ConfigError`` propagates, so Airflow shows it as the DAG's import error. ``variables`` may hold
    Jinja templates: they are rendered per task at run time (the parse-time compile sees them verbatim).
    ``operator_kwargs`` (``spark_conn_id``, ``retries``...) go to every operator; further keyword
    arguments go to the TaskGroup.
    """

    def __init__(self, group_id: str, config: str | os.PathLike, variables: Mapping[str, Any] | None = None, *,
                 format: str | None = None, tooltip: str = "", operator_kwargs: Mapping[str, Any] | None = None,
                 **group_kwargs: Any) -> None:
        self.plan = compile_job(config, variables, format=format)
        super().__init__(group_id=group_id, tooltip=tooltip or f"SeaTunnel job {self.plan.name}", **group_kwargs)
        config_arg = os.fspath(config)
        with self:
            for p in sorted(self.plan.pipelines, key=lambda p: p.task_id):
                SeaTunnelOperator(task_id=p.task_id, config=config_arg, variables=dict(variables or {}),
                                  pipeline=p.task_id, format=format, **dict(operator_kwargs or {}))
