"""The worked example of docs/airflow.md, as documented: docs/examples/incremental_jdbc_sync under real
Airflow (``dag.test()``), real ``spark-submit`` and a real PostgreSQL, its two connections defined as
``AIRFLOW_CONN_*`` variables. Each run moves the rows changed in its data interval, once."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime

import pytest

from ..conftest import ROOT
from .conftest import dags_folder

EXAMPLE = ROOT / "docs" / "examples" / "incremental_jdbc_sync"
ORDERS = [  # id, customer, amount, updated_at
    (1, "ada", "10.00", "2024-05-06 08:00:00+00"),
    (2, "grace", "20.00", "2024-05-06 23:59:59+00"),
    (3, "edsger", "30.00", "2024-05-07 00:00:00+00"),  # the first instant of the second interval
    (4, "barbara", "40.00", "2024-05-08 12:00:00+00"),  # after both
]


@pytest.fixture(scope="module")
def db():
    from tests import pg

    rows = ", ".join(f"({i}, '{c}', {a}, '{t}')" for i, c, a, t in ORDERS)
    with pg.running("create table public.orders (id bigint primary key, customer text, amount numeric(10, 2), "
                    "updated_at timestamptz not null)", "insert into public.orders values " + rows) as server:
        yield server


def _sync(run_dag, airflow_env, db, trigger: datetime) -> dict:
    """One scheduled-style run at ``trigger`` (its data interval: the day before)."""
    dag_dir = dags_folder(airflow_env, "orders_incremental")
    (dag_dir / "configs").mkdir(parents=True, exist_ok=True)
    shutil.copy(EXAMPLE / "configs" / "orders_incremental.conf", dag_dir / "configs")
    conn = {"conn_type": "postgres", "host": "127.0.0.1", "port": db.port, "schema": db.database,
            "login": db.user, "password": db.password}
    result = run_dag((EXAMPLE / "orders_incremental.py").read_text(), "orders_incremental", logical_date=trigger,
                     run_after=trigger, env={"AIRFLOW_CONN_SHOP_DB": json.dumps(conn),
                                             "AIRFLOW_CONN_WAREHOUSE": json.dumps(conn)})
    assert result["state"] == "success", result["log"][-6000:]
    return next(v for k, v in result["xcom"].items() if k not in ("orders.prepare", "orders.summary"))


def test_each_run_upserts_the_rows_changed_in_its_data_interval(run_dag, airflow_env, db):
    first = _sync(run_dag, airflow_env, db, datetime(2024, 5, 7, tzinfo=UTC))  # 2024-05-06 .. 05-07
    assert first["status"] == "FINISHED" and first["read_count"] == 2
    assert db.sql("select id, amount from analytics.orders order by id") == [["1", "10.00"], ["2", "20.00"]]

    db.sql("update public.orders set amount = 15.00, updated_at = '2024-05-07 09:00:00+00' where id = 1")
    second = _sync(run_dag, airflow_env, db, datetime(2024, 5, 8, tzinfo=UTC))  # 2024-05-07 .. 05-08
    assert second["status"] == "FINISHED" and second["read_count"] == 2  # order 3 and order 1's change
    assert db.sql("select id, customer, amount from analytics.orders order by id") == [
        ["1", "ada", "15.00"], ["2", "grace", "20.00"], ["3", "edsger", "30.00"]]  # order 4: a later interval
