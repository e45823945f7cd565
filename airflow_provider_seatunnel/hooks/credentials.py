"""Where a SeaTunnel task's connections come from: the Airflow connections its blocks name (address and
credentials, taken at run time into the private plan only) and the Spark connection it submits to."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from airflow.sdk import BaseHook

from ..plan.model import JobPlan
from ..spi import ConnectionInfo, FromConnection, get_connector


def connection_info(conn_id: str) -> ConnectionInfo:
    """The Airflow connection ``conn_id`` as connectors see it, with the deployment's switches
    (Airflow's ``[providers.jdbc] allow_driver_*_in_extra``)."""
    from ..settings import airflow_conf

    conn = BaseHook.get_connection(conn_id)
    conf = airflow_conf()
    settings = {f"allow_{key}_in_extra": bool(conf is not None and conf.getboolean(
        "providers.jdbc", f"allow_{key}_in_extra", fallback=False)) for key in ("driver_path", "driver_class")}
    return ConnectionInfo(conn_id=conn_id, conn_type=str(conn.conn_type or ""), host=conn.host,
                          port=int(conn.port) if conn.port else None, schema=conn.schema, login=conn.login,
                          password=conn.password, extra=dict(conn.extra_dejson or {}), settings=settings)


def with_connections(plan: JobPlan, default_conn_id: str | None = None) -> JobPlan:
    """The plan with each block's address and credentials taken from the Airflow connection its
    connector's option names (``jdbc_conn_id``, ``redis_conn_id``: :class:`..spi.FromConnection`),
    else, for a ``jdbc_conn_id`` block that takes one, from ``default_conn_id``. Options the block
    sets itself win; each connection is looked up once. Run time only: the values reach only the
    private plan file."""
    from dataclasses import replace

    defaults = {"jdbc_conn_id": default_conn_id} if default_conn_id else {}
    looked_up: dict[str, ConnectionInfo] = {}

    def resolved(vertex: Any) -> Any:
        connector = get_connector(vertex.plugin)
        if not isinstance(connector, FromConnection):
            return vertex
        option = connector.connection_option
        conn_id = vertex.config.get(option)
        if conn_id is None and defaults.get(option) and connector.takes_default_connection(vertex.config):
            conn_id = defaults[option]
        if not conn_id:
            return vertex
        if str(conn_id) not in looked_up:
            looked_up[str(conn_id)] = connection_info(str(conn_id))
        given = connector.connection_options(looked_up[str(conn_id)])
        return replace(vertex, config={**given, **vertex.config})

    pipelines = tuple(replace(p, vertices=tuple(resolved(v) for v in p.vertices)) for p in plan.pipelines)
    return replace(plan, pipelines=pipelines)


def missing_spark_connection(conn_id: str) -> str:
    """Why a task whose Spark connection does not exist fails (not retried: a retry finds none either)."""
    example = json.dumps({"conn_type": "spark", "host": "local[*]"})
    return (f"the Spark connection {conn_id!r} is not defined: every pipeline task needs one (it names the Spark "
            f"master; without it spark-submit would go to YARN). Create it, e.g. for Spark on this machine: "
            f"AIRFLOW_CONN_{conn_id.upper()}='{example}' or `airflow connections add {conn_id} --conn-type spark "
            f"--conn-host 'local[*]'`; or give the task another spark_conn_id (not retried)")


class SparkConnection(NamedTuple):
    """Where a Spark connection submits to: ``master``, ``deploy_mode`` (None: client) and its ``extra``."""

    master: str
    deploy_mode: str | None
    extra: Mapping[str, Any]
