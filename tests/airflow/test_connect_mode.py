"""Connect mode against a real Spark Connect server (the fixture's, on a loopback port, with a
token), one server for the whole module: the command line's ``run --remote`` (sessions, counts,
restores, a killed client, tokens), and SeaTunnelJobGroup with a ``spark_connect`` connection under
real Airflow (``dag.test()``), where every pipeline task runs as a session and a retry is a restore."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_provider_seatunnel.cli import main
from airflow_provider_seatunnel.runtime.remote import Remote, RemoteAddressError, connect_problems, session_id

from ..spark_connect import connect_server_running, connect_session
from .test_job_group_run import _rows as _json_rows
from .test_job_group_run import restore_job

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

JOB = """
env {
  job.name = "connect_job", parallelism = 2, "spark.hadoop.fs.s3a.secret.key" = "sekrit-in-env-42",
  spark.executor.memory = "1g", spark.sql.shuffle.partitions = 3
}
source {
  FakeSource { plugin_output = "web", row.num = 50, schema = { fields { id = bigint, name = string } } }
  FakeSource { plugin_output = "store", row.num = 30, schema = { fields { id = bigint, name = string } } }
}
transform {
  Sql { plugin_input = ["web", "store"], plugin_output = "orders",
        query = "SELECT id, upper(name) AS name FROM web UNION ALL SELECT id, upper(name) AS name FROM store" }
  Filter { plugin_input = "orders", plugin_output = "some", include_fields = ["id"] }
}
sink {
  LocalFile { plugin_input = "orders", path = "__OUT__/orders", file_format_type = "json" }
  LocalFile { plugin_input = "some", path = "__OUT__/ids", file_format_type = "csv" }
  Assert { plugin_input = "orders", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 1 }] } }
}
"""


GROUP_DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r}, spark_conn_id="spark_connect")
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    # progress reports every 100 ms (2 s by default): a short action still reports its stages
    with connect_server_running(tmp_path_factory.mktemp("connect"),
                                conf={"spark.connect.progress.reportInterval": "100ms"}) as running:
        yield running


def _connection(server) -> dict[str, str]:
    return {"AIRFLOW_CONN_SPARK_CONNECT": json.dumps({"conn_type": "spark_connect", "host": "localhost",
                                                     "port": server.port, "password": server.token})}


def test_a_job_group_runs_on_the_server_and_a_retry_restores_once(run_dag, server, tmp_path):
    out, conf, web = restore_job(tmp_path)
    result = run_dag(GROUP_DAG.format(dag_id="st_connect", config=str(conf)), "st_connect",
                     env={**_connection(server), "SEATUNNEL_FAULTS": f"sink.commit:{web}"})
    tis, log = result["tis"], result["log"]
    assert result["state"] == "success", log[-8000:]
    assert tis[f"job.{web}"]["try_number"] == 2  # failed in its commit once, restored by the retry
    rows = sorted((r["id"], r["channel"]) for r in _json_rows(out))
    assert rows == sorted(2 * [(1, "web"), (2, "web"), (3, "web"), (4, "web"), (101, "store"), (102, "store")])
    metrics = result["xcom"][f"job.{web}"]
    assert metrics["spark_connect"] == server.address and metrics["attempt"] == 2 and metrics["session_id"]
    assert f"running {web} on Spark Connect" in log and "spark-submit" not in log.lower().replace("spark-submit)", "")
    assert server.token not in log and server.token not in json.dumps(result["xcom"])
    job = result["xcom"]["job.summary"]
    assert job["status"] == "FINISHED" and job["write_count"] == 12 and job["read_count"] == 12


def test_a_pipeline_needing_the_driver_jvm_fails_before_it_runs(run_dag, server, tmp_path):
    conf = tmp_path / "jdbc.conf"
    conf.write_text("""
env { job.name = "needs_jvm" }
source { Kafka { bootstrap.servers = "127.0.0.1:1", topic = "orders", format = json, plugin_output = "t",
                 schema = { fields { a = int } } } }
sink { LocalFile { plugin_input = "t", path = "%s", file_format_type = "json" } }
""" % (tmp_path / "out"))
    result = run_dag(GROUP_DAG.format(dag_id="st_connect_jvm", config=str(conf)), "st_connect_jvm",
                     env=_connection(server))
    pipeline = next(t for t in result["tis"] if t not in ("job.prepare", "job.summary"))
    assert result["tis"][pipeline]["state"] == "failed" and result["tis"][pipeline]["try_number"] == 1
    assert "needs the Spark driver's JVM" in result["log"]
    assert not list(Path(tmp_path / "out").glob("*.json"))  # nothing was written


@pytest.fixture
def token_env(server, monkeypatch):
    monkeypatch.setenv("SPARK_CONNECT_AUTHENTICATE_TOKEN", server.token)
    return server


def _job(tmp_path: Path) -> tuple[Path, Path]:
    out = tmp_path / "out"
    conf = tmp_path / "job.conf"
    conf.write_text(JOB.replace("__OUT__", str(out)))
    return conf, out


def _rows(directory: Path) -> list[str]:
    return sorted(line for f in directory.glob("*.*") if f.is_file() for line in f.read_text().splitlines() if line)


def _run(conf: Path, server, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    metrics = tmp_path / "metrics.json"
    metrics.unlink(missing_ok=True)
    code = main(["run", str(conf), "--remote", server.address, "--metrics-file", str(metrics), *extra])
    return code, json.loads(metrics.read_text()) if metrics.exists() else {}


def test_addresses_parse_and_never_show_the_token():
    remote = Remote.parse("sc://spark.example:443/;use_ssl=true;token=s3cr%2Ft;user_id=etl")
    assert remote.address == "sc://spark.example:443" and remote.token == "s3cr/t"
    assert "s3cr" not in remote.display() and "s3cr" not in repr(remote) and "use_ssl=true" in remote.display()
    assert "token=s3cr%2Ft" in remote.endpoint() and "session_id=abc" in remote.endpoint("abc")
    assert Remote.parse("sc://localhost").address == "sc://localhost:15002"
    for bad, why in [("http://x:1", "starts with sc://"), ("sc://:1", "no host"), ("sc://h:1/db", "no path"),
                     ("sc://h:1/;colour=red", "unknown Spark Connect parameter")]:
        with pytest.raises(RemoteAddressError, match=why):
            Remote.parse(bad)
    assert session_id("run", "task", 1) == session_id("run", "task", 1) != session_id("run", "task", 2)


def test_what_needs_the_driver_jvm_is_refused_before_a_session_opens(plan_of):
    plan = plan_of("""
        source { Kafka { bootstrap.servers = "h:9092", topic = "t", format = json, plugin_output = "t",
                         schema = { fields { a = int } } } }
        sink { Console { plugin_input = "t" } }""")
    problems = connect_problems(plan, plan.pipelines[0])
    assert len(problems) == 1 and problems[0].plugin == "source[0] Kafka"
    assert "spark-submit" in problems[0].message
    jdbc = plan_of("""
        source { Jdbc { url = "jdbc:postgresql://h/db", driver = "org.postgresql.Driver", query = "select 1",
                        plugin_output = "t" } }
        sink { Jdbc { plugin_input = "t", url = "jdbc:sqlite:/tmp/t.db", driver = "org.sqlite.JDBC", query = "x" } }""")
    (problem,) = connect_problems(jdbc, jdbc.pipelines[0])  # PostgreSQL runs on Connect, SQLite does not
    assert problem.plugin == "sink[0] Jdbc" and "not jdbc:sqlite" in problem.message
    streaming = plan_of("""env { job.mode = "STREAMING" }
        source { FakeSource { plugin_output = "t", schema = { fields { a = int } } } }
        sink { Console { plugin_input = "t" } }""")
    assert any("STREAMING" in p.message for p in connect_problems(streaming, streaming.pipelines[0]))


def test_a_job_runs_as_sessions_of_the_server_with_its_counts(token_env, tmp_path, capsys):
    conf, out = _job(tmp_path)
    code, job = _run(conf, token_env, tmp_path)
    printed = capsys.readouterr()
    assert code == 0, printed.out[-3000:] + printed.err[-3000:]
    pipelines = {p["task_id"]: p for p in job["pipelines"]}
    assert len(pipelines) == 6 and all(p["status"] == "FINISHED" for p in pipelines.values())
    # FakeSource's row.num is per parallel reader: 2 x 50 web rows, 2 x 30 store rows, counted where read
    by_source = sorted(p["read_count"] for p in pipelines.values())
    assert by_source == [60, 60, 60, 100, 100, 100]
    assert len(_rows(out / "orders")) == 160 and len(_rows(out / "ids")) == 160
    sessions = {p["session_id"] for p in pipelines.values()}
    assert len(sessions) == 6  # a session per pipeline attempt
    assert {p["spark_connect"] for p in pipelines.values()} == {token_env.address}
    assert all(p["application_id"] for p in pipelines.values())  # the server's application
    assert token_env.token not in printed.out + printed.err + json.dumps(job)
    # a setting only the server's start takes keeps the server's value, and the run says so
    assert "the server's own values stay for spark.executor.memory" in printed.out
    for secret in (token_env.token, "sekrit-in-env-42"):  # the token, a secret Spark setting of the job
        assert secret not in token_env.log.read_text() and secret not in printed.out + printed.err
    assert "SPARK_CONNECT_MODE_ENABLED" not in os.environ  # a classic session can follow in this process


def test_a_session_is_released_when_its_pipeline_ends(token_env, tmp_path):
    conf, _ = _job(tmp_path)
    code, job = _run(conf, token_env, tmp_path, "--pipeline", "1")
    assert code == 0
    used = job["pipelines"][0]["session_id"]
    again = connect_session(f"{token_env.address}/;session_id={used}")
    with pytest.raises(Exception, match="SESSION_CLOSED"):
        again.range(1).collect()


def test_a_failed_attempt_is_restored_once(token_env, tmp_path, monkeypatch):
    conf, out = _job(tmp_path)
    monkeypatch.setenv("SEATUNNEL_FAULTS", "sink.commit")  # attempt 1 fails in its first sink's commit
    code, job = _run(conf, token_env, tmp_path, "--pipeline", "1", "--run-id", "r1")
    monkeypatch.delenv("SEATUNNEL_FAULTS")
    failed = job["pipelines"][0]
    assert code == 1 and failed["status"] == "FAILED" and failed["error"]["deterministic"] is False
    assert _rows(out / "orders") + _rows(out / "ids") == []  # the commit failed before it was recorded
    code, job = _run(conf, token_env, tmp_path, "--pipeline", "1", "--run-id", "r1", "--attempt", "2")
    assert code == 0 and job["pipelines"][0]["attempt"] == 2
    assert len(_rows(out / "orders")) + len(_rows(out / "ids")) == 100


def test_a_killed_client_is_restored_once_and_its_session_released(token_env, tmp_path):
    conf, out = _job(tmp_path)
    env = {**os.environ, "SEATUNNEL_FAULTS": "sink.move=kill+1"}  # the process dies in the middle of a commit
    cli = [sys.executable, "-m", "airflow_provider_seatunnel.cli", "run", str(conf), "--remote", token_env.address,
           "--pipeline", "1", "--run-id", "k1"]
    first = subprocess.run(cli, env=env, capture_output=True, text=True, timeout=300)
    assert first.returncode == -9, first.stdout[-2000:] + first.stderr[-2000:]
    assert "killing the driver" in first.stderr + first.stdout
    task_id = next(line.split()[3] for line in first.stdout.splitlines()
                   if line.startswith("pipeline 1: running "))
    # the dead process left its session on the server (as a task whose worker died does)
    stale = connect_session(f"{token_env.address}/;session_id={session_id('k1', task_id, 1)}")
    assert stale.range(3).count() == 3
    env.pop("SEATUNNEL_FAULTS")
    second = subprocess.run([*cli, "--attempt", "2"], env=env, capture_output=True, text=True, timeout=300)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-2000:]
    # pipeline 1 reads the web rows (2 x 50): all of them, once, in its sink's target
    assert len(_rows(out / "orders")) + len(_rows(out / "ids")) == 100
    with pytest.raises(Exception, match="SESSION_CLOSED"):  # the restore released the dead attempt's session
        stale.range(1).collect()


def test_a_wrong_token_fails_without_a_retry(server, tmp_path, monkeypatch):
    monkeypatch.setenv("SPARK_CONNECT_AUTHENTICATE_TOKEN", "not-the-token")
    conf, _ = _job(tmp_path)
    code, job = _run(conf, server, tmp_path, "--pipeline", "1")
    error = job["pipelines"][0]["error"]
    assert code == 1 and error["kind"] == "access" and error["deterministic"] is True
    assert "UNAUTHENTICATED" in error["message"] and "not-the-token" not in json.dumps(job)


def test_the_command_line_takes_no_token_and_no_local_options(server, tmp_path, capsys):
    conf, _ = _job(tmp_path)
    assert main(["run", str(conf), "--remote", f"{server.address}/;token=abc"]) == 2
    assert "SPARK_CONNECT_AUTHENTICATE_TOKEN" in capsys.readouterr().err
    assert main(["run", str(conf), "--remote", server.address, "--master", "local[1]"]) == 2
    assert main(["run", str(conf), "--remote", "http://x"]) == 2


def test_progress_on_a_connect_session_comes_from_the_servers_reports(server, plan_of):
    from pyspark.sql.connect.session import SparkSession

    from airflow_provider_seatunnel.runtime.context import RunContext
    from airflow_provider_seatunnel.runtime.counting import count_rows
    from airflow_provider_seatunnel.runtime.progress import Progress
    from airflow_provider_seatunnel.runtime.remote import connect_mode

    plan = plan_of('source { FakeSource { plugin_output = "t", schema = { fields { a = int } } } }\n'
                   'sink { Console { plugin_input = "t" } }')
    with connect_mode():
        spark = SparkSession.builder.remote(f"{server.address}/;token={server.token}").create()
        try:
            df, counter = count_rows(spark.range(0, 300_000, 1, 3).selectExpr("sha2(cast(id AS string), 256) AS a"),
                                     "progress")
            said: list[str] = []
            progress = Progress(RunContext(spark, plan, plan.pipelines[0], "r"), said.append, 3600,
                                {"source[0] FakeSource": [counter]}).start()
            assert "read n/a rows" in progress.report()  # an observation: known when its action ended
            df.write.format("noop").mode("overwrite").save()
            line = progress.report()
            progress.stop()
        finally:
            spark.stop()
    # the stages as the server last reported them (its last report may come before the last task ends)
    assert "read 300,000 rows" in line and re.search(r"Spark: (stage \d+: \d+/3 tasks|\d+ stage\(s\) done)", line), line
