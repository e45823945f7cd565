"""Jdbc in Connect mode: a real Spark Connect server (loopback, token), a real PostgreSQL and a real
MariaDB. Spark's JDBC reads and writes run on the server with the driver jars added to the session;
the driver-side statements (split bounds, save modes, the two-phase commit) go through the Python
drivers. Splits and parallelism, save modes once, restores exactly once after a failed and a
SIGKILLed commit, and a job group whose database credentials come from an Airflow connection."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_provider_seatunnel.cli import main
from tests import mysql, pg

from ..spark_connect import connect_server_running

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

MY_DRIVER = "com.mysql.cj.jdbc.Driver" if mysql.connector_j() else "org.mariadb.jdbc.Driver"
ROWS = 500


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    setup = (f"CREATE TABLE orders (id int PRIMARY KEY, name text, amount numeric(10,2)); "
             f"INSERT INTO orders SELECT i, 'n' || i, i * 1.5 FROM generate_series(1, {ROWS}) i;")
    with pg.running(setup) as p, mysql.running("SELECT 1") as m, \
            connect_server_running(tmp_path_factory.mktemp("connect")) as connect:
        yield p, m, connect


@pytest.fixture
def token(servers, monkeypatch):
    monkeypatch.setenv("SPARK_CONNECT_AUTHENTICATE_TOKEN", servers[2].token)
    return servers[2].token


def _job(tmp_path: Path, p, m, table: str, pg_credentials: str | None = None) -> Path:
    """orders (PostgreSQL, read in 4 splits by 2 readers) -> upper(name) -> an upsert into PostgreSQL
    (DROP_DATA first) and an append into MariaDB (DROP_DATA first)."""
    creds = pg_credentials or f'url = "{p.url}", user = "{p.user}", password = "{p.password}"'
    conf = tmp_path / f"{table}.conf"
    conf.write_text(f"""
env {{ job.name = "connect_jdbc", parallelism = 2 }}
source {{ Jdbc {{ {creds}, driver = "org.postgresql.Driver", table_path = "public.orders",
                 partition_column = "id", partition_num = 4, plugin_output = "o" }} }}
transform {{ Sql {{ plugin_input = "o", plugin_output = "t", query = "SELECT id, upper(name) AS name, amount FROM o" }} }}
sink {{
  Jdbc {{ plugin_input = "t", {creds}, driver = "org.postgresql.Driver", generate_sink_sql = true,
         database = "{p.database}", table = "public.{table}", primary_keys = ["id"], data_save_mode = "DROP_DATA" }}
  Jdbc {{ plugin_input = "t", url = "{m.url}", driver = "{MY_DRIVER}", user = "{m.user}", password = "{m.password}",
         generate_sink_sql = true, database = "{m.database}", table = "{table}", data_save_mode = "DROP_DATA" }}
}}
""")
    return conf


def _seed(p, m, table: str) -> None:
    """Rows a DROP_DATA save mode must remove, once, before the job's rows land."""
    p.sql(f"CREATE TABLE public.{table} (id int PRIMARY KEY, name text, amount numeric(10,2)); "
          f"INSERT INTO public.{table} VALUES (-1, 'old', 0), (-2, 'old', 0)")
    m.sql(f"CREATE TABLE {table} (id INT, name TEXT, amount DECIMAL(10,2)); INSERT INTO {table} VALUES (-1, 'old', 0)")


def _targets(p, m, table: str) -> tuple[list, list]:
    query = f"SELECT count(*), count(DISTINCT id), min(id), sum(amount), min(name) FROM {table}"
    return p.sql(query.replace(f"FROM {table}", f"FROM public.{table}")), m.sql(query)


def _run(conf: Path, address: str, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    metrics = tmp_path / "metrics.json"
    metrics.unlink(missing_ok=True)
    code = main(["run", str(conf), "--remote", address, "--metrics-file", str(metrics), *extra])
    return code, json.loads(metrics.read_text()) if metrics.exists() else {}


EXPECTED = [[str(ROWS), str(ROWS), "1", f"{sum(i * 1.5 for i in range(1, ROWS + 1)):.2f}", "N1"]]


def test_postgres_to_postgres_and_mariadb_on_a_connect_session(servers, token, tmp_path, capsys):
    p, m, connect = servers
    _seed(p, m, "copy_a")
    code, job = _run(_job(tmp_path, p, m, "copy_a"), connect.address, tmp_path)
    printed = capsys.readouterr().out
    assert code == 0, printed[-3000:]
    (pipeline,) = job["pipelines"]
    assert pipeline["read_count"] == ROWS and pipeline["write_count"] == 2 * ROWS and pipeline["session_id"]
    assert "source[0] Jdbc: planned (2 partitions)" in printed  # 4 splits over the plan's 2 readers
    assert "added 2 jar(s) to the session" in printed  # the PostgreSQL and MySQL drivers, as artifacts
    on_pg, on_my = _targets(p, m, "copy_a")
    assert on_pg == EXPECTED and on_my == EXPECTED  # the seeded rows dropped, every row once
    assert p.password not in printed and m.password not in printed and token not in printed


def test_a_failed_commit_is_restored_once_and_save_modes_are_not_redone(servers, token, tmp_path, monkeypatch):
    p, m, connect = servers
    _seed(p, m, "copy_b")
    conf = _job(tmp_path, p, m, "copy_b")
    monkeypatch.setenv("SEATUNNEL_FAULTS", "sink.commit+1")  # the second sink's commit fails, the first's held
    code, job = _run(conf, connect.address, tmp_path, "--run-id", "rb")
    assert code == 1 and job["pipelines"][0]["error"]["deterministic"] is False
    on_pg, on_my = _targets(p, m, "copy_b")
    assert on_pg == EXPECTED  # committed by attempt 1
    assert on_my[0][0] == "1"  # rolled back: the seeded row, not dropped
    p.sql("INSERT INTO public.copy_b VALUES (-5, 'after attempt 1', 0)")  # a row DROP_DATA must not drop again
    monkeypatch.delenv("SEATUNNEL_FAULTS")
    code, job = _run(conf, connect.address, tmp_path, "--run-id", "rb", "--attempt", "2")
    assert code == 0 and job["pipelines"][0]["attempt"] == 2
    on_pg, on_my = _targets(p, m, "copy_b")
    assert on_pg[0][:3] == [str(ROWS + 1), str(ROWS + 1), "-5"]  # attempt 1's commit not repeated, nor its drop
    assert on_my == EXPECTED


def test_a_client_killed_inside_a_commit_leaves_nothing_half_done(servers, token, tmp_path):
    p, m, connect = servers
    _seed(p, m, "copy_c")
    conf = _job(tmp_path, p, m, "copy_c")
    env = {**os.environ, "SEATUNNEL_FAULTS": "sink.commit=kill"}  # SIGKILL inside the first sink's transaction
    cli = [sys.executable, "-m", "airflow_provider_seatunnel.cli", "run", str(conf), "--remote", connect.address,
           "--run-id", "rc"]
    first = subprocess.run(cli, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == -9, first.stdout[-2000:] + first.stderr[-2000:]
    on_pg, on_my = _targets(p, m, "copy_c")
    assert on_pg[0][:3] == ["2", "2", "-2"] and on_my[0][0] == "1"  # the open transaction died with the client
    env.pop("SEATUNNEL_FAULTS")
    second = subprocess.run([*cli, "--attempt", "2"], env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    assert _targets(p, m, "copy_c") == (EXPECTED, EXPECTED)
    staging = p.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage%' OR tablename LIKE '%staging%'")
    assert staging == [["0"]]


def test_a_database_without_a_python_driver_is_refused_before_a_session_opens(servers, token, tmp_path, capsys):
    conf = tmp_path / "sqlite.conf"
    conf.write_text(f"""
source {{ Jdbc {{ url = "jdbc:sqlite:{tmp_path}/x.db", driver = "org.sqlite.JDBC", query = "select 1 as a",
                 plugin_output = "t" }} }}
sink {{ Console {{ plugin_input = "t" }} }}
""")
    code, job = _run(conf, servers[2].address, tmp_path)
    error = job["pipelines"][0]["error"]
    assert code == 1 and error["deterministic"] is True and "source[0] Jdbc: on a Spark Connect" in error["message"]
    assert "MariaDB (a Python driver runs its statements), not jdbc:sqlite (" in error["message"]
    assert "session_id" not in job["pipelines"][0]


GROUP_DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r}, spark_conn_id="spark_connect")
"""


def test_a_job_group_with_an_airflow_database_connection(run_dag, servers, tmp_path):
    p, m, connect = servers
    _seed(p, m, "copy_d")
    conf = _job(tmp_path, p, m, "copy_d", pg_credentials='jdbc_conn_id = "warehouse"')
    warehouse = {"conn_type": "postgres", "host": "127.0.0.1", "port": int(p.url.split(":")[3].split("/")[0]),
                 "schema": p.database, "login": p.user, "password": p.password}
    env = {"AIRFLOW_CONN_SPARK_CONNECT": json.dumps({"conn_type": "spark_connect", "host": "localhost",
                                                    "port": connect.port, "password": connect.token}),
           "AIRFLOW_CONN_WAREHOUSE": json.dumps(warehouse)}
    result = run_dag(GROUP_DAG.format(dag_id="st_connect_jdbc", config=str(conf)), "st_connect_jdbc", env=env)
    assert result["state"] == "success", result["log"][-6000:]
    assert _targets(p, m, "copy_d") == (EXPECTED, EXPECTED)
    assert p.password not in result["log"] and connect.token not in result["log"]
