"""``deferrable=True`` with a ``spark_connect`` connection, against a real Spark Connect server (the fixture's,
on a loopback port, with a token; one for the module) and real Airflow: the task starts a detached Connect
client (``runtime/app.py --remote``) holding the pipeline's session and defers; the trigger client mode uses
(:class:`PipelineDriverTrigger`) watches it; the task resumes to report. A deterministic failure is the
task's error, not retried; a triggerer killed while the driver runs, and then the driver killed half-way
through its commit, end in a retry that restores every row exactly once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import psutil
import pytest

from airflow_provider_seatunnel.runtime.remote import session_id

from ..spark_connect import connect_server_running, connect_session
from .test_deferrable import TRIGGERER
from .test_job_group_run import ISOLATION, StatsdListener, _stat

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")

GROUP_DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r}, spark_conn_id="spark_connect",
                      operator_kwargs={{"deferrable": True, "retries": 2}})
"""

#: one pipeline, two parallel readers of the same rows: two files to commit (FakeSource's rows are per reader)
RESTORE = """
env { job.name = "deferred_restore", parallelism = 2 }
source {
  FakeSource {
    plugin_output = "web"
    schema = { fields { id = bigint, channel = string } }
    rows = [{ kind = INSERT, fields = [1, "web"] }, { kind = INSERT, fields = [2, "web"] },
            { kind = INSERT, fields = [3, "web"] }]
  }
}
sink { LocalFile { plugin_input = "web", path = "__OUT__", file_format_type = "json" } }
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with connect_server_running(tmp_path_factory.mktemp("connect-deferred")) as running:
        yield running


def _connection(server) -> dict[str, str]:
    return {"AIRFLOW_CONN_SPARK_CONNECT": json.dumps({"conn_type": "spark_connect", "host": "localhost",
                                                     "port": server.port, "password": server.token})}


def _rows(directory: Path) -> list[tuple]:
    return sorted((r["id"], r["channel"]) if "channel" in r else (r["id"],) for f in directory.glob("*.json")
                  for line in f.read_text().splitlines() if line for r in [json.loads(line)])


def test_a_deferred_group_runs_its_pipelines_as_sessions_and_a_failure_is_the_tasks_not_retried(
        run_dag, server, tmp_path):
    """Both pipeline tasks defer while detached Connect clients run them; the web pipeline commits its rows
    once and reports (XCom, Stats, the SeaTunnel tab's data); the store pipeline's broken Assert rule fails
    its task on the first try (retries=2): deterministic."""
    from airflow_provider_seatunnel.plan.view import XCOM_KEY
    from airflow_provider_seatunnel.ui.view import run_view

    out = tmp_path / "out"
    conf = tmp_path / "isolation.conf"
    conf.write_text(ISOLATION.replace("__OUT__", str(out)))
    statsd = StatsdListener()
    try:
        result = run_dag(GROUP_DAG.format(dag_id="st_deferred_connect", config=str(conf)), "st_deferred_connect",
                         env={**_connection(server), "AIRFLOW__METRICS__STATSD_ON": "True",
                              "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
                              "AIRFLOW__METRICS__STATSD_PORT": str(statsd.port),
                              "AIRFLOW__METRICS__STATSD_PREFIX": "af"})
    finally:
        lines = statsd.close()
    tis, log = result["tis"], result["log"]
    web = next(t for t in tis if t.startswith("job.web"))
    store = next(t for t in tis if t.startswith("job.store"))
    assert tis[web]["state"] == "success" and tis[web]["try_number"] == 1, log[-8000:]
    assert tis[store]["state"] == "failed" and tis[store]["try_number"] == 1, log[-8000:]  # not retried
    assert log.count("runs in a detached driver (a Spark Connect session") == 2 and "spark-submit, pid" not in log
    assert "the pipeline's driver log (tail)" in log and f"running {web.split('.', 1)[1]} on Spark Connect" in log
    assert "not retried: the same input fails the same way" in log and "MIN_ROW" in log
    # every web row once; the failed pipeline committed nothing
    assert len(_rows(out / "web")) == 7 and not list((out / "store").glob("*.json"))
    metrics = result["xcom"][web]
    assert metrics["status"] == "FINISHED" and metrics["write_count"] == 7 and metrics["attempt"] == 1
    assert metrics["spark_connect"] == server.address and metrics["session_id"]
    failed = result["xcoms"]["seatunnel_metrics"][store]
    assert failed["status"] == "FAILED" and failed["error"]["deterministic"] is True
    assert server.token not in log and server.token not in json.dumps(result["xcoms"])
    # Airflow's Stats, sent when the task resumed
    name = f"af.seatunnel.st_deferred_connect.{web.replace('.', '__')}"
    assert [line.split(":", 1)[1] for line in _stat(lines, f"{name}.rows_written")] == ["7|c"], lines
    # the SeaTunnel tab's data for the run: the prepare task's plan view joined with the tasks' metrics
    tis_list = [{"task_id": t, **v} for t, v in tis.items()]
    (group,) = run_view("st_deferred_connect", result["run_id"], tis_list,
                        {"job.prepare": result["xcoms"][XCOM_KEY]["job.prepare"]},
                        {web: metrics, store: failed})["groups"]
    shown = {p["airflow_task_id"]: p for p in group["pipelines"]}
    assert shown[web]["write_count"] == 7 and shown[web]["spark_connect"] == server.address
    assert shown[store]["state"] == "failed" and shown[store]["deterministic"] is True
    assert group["write_count"] == 7


class _TI:
    def __init__(self, try_number: int) -> None:
        self.try_number = try_number
        self.pushed: dict = {}

    def xcom_push(self, key, value):
        self.pushed[key] = value


def _first_event(trigger) -> dict:
    async def first():
        async for event in trigger.run():
            return event.payload

    return asyncio.run(first())


def test_a_killed_triggerer_then_a_driver_killed_in_its_commit_end_in_a_retry_that_restores_once(
        server, monkeypatch, tmp_path):
    """Attempt 1 defers; its Connect client is held (SIGSTOP) while the triggerer watching it is SIGKILLed;
    released, it dies half-way through its commit (one of two files moved: SIGKILL, as a killed worker); a
    second triggerer fires ``exited`` and the task fails, retryable. Attempt 2 releases the dead attempt's
    session, defers, resumes and reports: every row exactly once."""
    from airflow.sdk.exceptions import AirflowException, AirflowFailException, TaskDeferred

    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    for key, value in _connection(server).items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("SEATUNNEL_FAULTS", "sink.move=kill+1")  # attempt 1 only (the default @1)
    out = tmp_path / "out"

    def operator() -> SeaTunnelOperator:  # a retry, and a resumed task, is a new process: a new operator and hook
        return SeaTunnelOperator(task_id="deferred", config=RESTORE.replace("__OUT__", str(out)), format="hocon",
                                 spark_conn_id="spark_connect", deferrable=True)

    first_op, first_ti = operator(), _TI(1)
    with pytest.raises(TaskDeferred) as deferred:
        first_op.execute({"run_id": "manual__dc", "ti": first_ti})
    _, kwargs = deferred.value.trigger.serialize()
    driver = psutil.Process(kwargs["pid"])
    driver.suspend()  # held until the triggerer is gone: the kill lands while the pipeline has not reported
    try:
        assert os.getsid(driver.pid) != os.getsid(0)  # detached: a session of its own
        assert server.token not in " ".join(driver.cmdline())  # the token is in its environment only
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        first = subprocess.Popen([sys.executable, "-c", TRIGGERER, json.dumps({**kwargs, "poll_seconds": 0.2})],
                                 env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert first.stdout is not None
        for line in first.stdout:
            if "watching the pipeline driver" in line:
                break
        first.send_signal(signal.SIGKILL)
        first.wait()
        assert not Path(kwargs["metrics_file"]).exists() and driver.is_running()
    finally:
        driver.resume()
    second = subprocess.run([sys.executable, "-c", TRIGGERER, json.dumps({**kwargs, "poll_seconds": 0.3})],
                            env=env, capture_output=True, text=True, timeout=600)
    event = json.loads(second.stdout.split("EVENT ", 1)[1])
    assert event["status"] == "exited", second.stdout[-3000:] + second.stderr[-3000:]
    assert len(_rows(out)) == 3  # half committed: one reader's file moved, the other's not
    with pytest.raises(AirflowException, match="exited without reporting") as failed:
        operator().execute_complete({"run_id": "manual__dc", "ti": first_ti}, event, **deferred.value.kwargs)
    assert not isinstance(failed.value, AirflowFailException)  # transient: Airflow retries it
    assert first_ti.pushed["seatunnel_metrics"]["status"] == "FAILED"
    assert "its Spark Connect client failed before the pipeline reported" in str(failed.value)
    task_id = first_ti.pushed["seatunnel_metrics"]["task_id"]
    stale = connect_session(f"{server.address}/;token={server.token};"
                            f"session_id={session_id('manual__dc:deferred', task_id, 1)}")
    assert stale.range(2).count() == 2  # the killed client left its session on the server

    monkeypatch.delenv("SEATUNNEL_FAULTS")
    retry, retry_ti = operator(), _TI(2)
    with pytest.raises(TaskDeferred) as again:
        retry.execute({"run_id": "manual__dc", "ti": retry_ti})
    event = _first_event(again.value.trigger)
    assert event["status"] == "reported"
    metrics = operator().execute_complete({"run_id": "manual__dc", "ti": retry_ti}, event, **again.value.kwargs)
    assert metrics["status"] == "FINISHED" and metrics["attempt"] == 2 and metrics["write_count"] == 6
    assert _rows(out) == sorted(2 * [(1, "web"), (2, "web"), (3, "web")])  # the half commit finished, once
    assert not Path(again.value.trigger.serialize()[1]["work_dir"]).exists()  # the plan file is gone
    with pytest.raises(Exception, match="SESSION_CLOSED"):  # the retry released the dead attempt's session
        stale.range(1).collect()
