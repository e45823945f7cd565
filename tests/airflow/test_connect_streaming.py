"""STREAMING pipelines in Connect mode, against a real Spark Connect server (loopback, token) and a
real PostgreSQL: a file stream read incrementally, micro-batches committed by the sinks in the
server's Python process (LocalFile, Jdbc), counts from Spark's progress, a micro-batch committed but
not recorded replayed exactly once, a processing-time stream stopped by SIGTERM between
micro-batches, and sources that need the driver's JVM refused."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from airflow_provider_seatunnel.cli import main
from tests import pg

from ..spark_connect import connect_server_running

pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with connect_server_running(tmp_path_factory.mktemp("connect")) as running:
        yield running


@pytest.fixture
def token(server, monkeypatch):
    monkeypatch.setenv("SPARK_CONNECT_AUTHENTICATE_TOKEN", server.token)
    return server.token


def _drop(folder: Path, name: str, ids: range) -> None:
    """A CSV file appearing whole in ``folder`` (written aside, then renamed, as producers should)."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder.parent / f".{name}.tmp"
    tmp.write_text("".join(f"{i},n{i}\n" for i in ids))
    tmp.rename(folder / name)


def _job(root: Path, sink: str, trigger: str = "available_now") -> Path:
    conf = root / "job.conf"
    conf.write_text(f"""
env {{ job.name = "connect_stream", job.mode = "STREAMING", parallelism = 2, streaming.trigger = "{trigger}",
       checkpoint.interval = 1000, checkpoint.root = "{root}/checkpoints" }}
source {{ LocalFile {{ plugin_output = "o", path = "{root}/in", file_format_type = "csv",
                      schema = {{ fields {{ id = bigint, name = string }} }} }} }}
transform {{ Sql {{ plugin_input = "o", plugin_output = "t", query = "SELECT id, upper(name) AS name FROM o" }} }}
sink {{ {sink} }}
""")
    return conf


def _json_rows(folder: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(folder.glob("*.json")) for line in f.read_text().splitlines() if line]


def _run(conf: Path, address: str, root: Path, *extra: str) -> tuple[int, dict]:
    metrics = root / "metrics.json"
    metrics.unlink(missing_ok=True)
    code = main(["run", str(conf), "--remote", address, "--metrics-file", str(metrics), *extra])
    return code, json.loads(metrics.read_text()) if metrics.exists() else {}


def test_a_file_stream_is_read_incrementally_and_committed_once(server, token, tmp_path, capsys):
    _drop(tmp_path / "in", "a.csv", range(0, 200))
    _drop(tmp_path / "in", "b.csv", range(200, 300))
    conf = _job(tmp_path, f'LocalFile {{ plugin_input = "t", path = "{tmp_path}/out", file_format_type = "json" }}')
    code, job = _run(conf, server.address, tmp_path)
    printed = capsys.readouterr().out
    assert code == 0, printed[-3000:]
    (pipeline,) = job["pipelines"]
    assert pipeline["read_count"] == 300 and pipeline["write_count"] == 300 and pipeline["session_id"]
    assert pipeline["streaming"]["micro_batches"] == 1 and pipeline["streaming"]["queries"][0]["stream_id"]
    assert "micro-batch 0: read 300 rows, wrote 300 rows" in printed
    assert "(1 micro-batch(es), 300 rows written so far;" in printed
    _drop(tmp_path / "in", "c.csv", range(300, 350))
    code, job = _run(conf, server.address, tmp_path)
    assert code == 0 and job["pipelines"][0]["read_count"] == 50 and job["pipelines"][0]["write_count"] == 50
    rows = _json_rows(tmp_path / "out")
    assert sorted(r["id"] for r in rows) == list(range(350)) and rows[0]["name"].startswith("N")
    assert token not in printed


def test_a_micro_batch_committed_but_not_recorded_is_replayed_once(server, token, tmp_path, monkeypatch):
    _drop(tmp_path / "in", "a.csv", range(0, 120))
    conf = _job(tmp_path, f'LocalFile {{ plugin_input = "t", path = "{tmp_path}/out", file_format_type = "json" }}')
    monkeypatch.setenv("SEATUNNEL_FAULTS", "batch.committed")  # the sink committed, Spark has not recorded it
    code, job = _run(conf, server.address, tmp_path, "--run-id", "s1")
    error = job["pipelines"][0]["error"]
    assert code == 1 and error["deterministic"] is False and "batch.committed" in error["message"]
    assert len(_json_rows(tmp_path / "out")) == 120  # in place: the commit had happened
    monkeypatch.delenv("SEATUNNEL_FAULTS")
    code, job = _run(conf, server.address, tmp_path, "--run-id", "s1", "--attempt", "2")
    assert code == 0, job
    # Spark replayed micro-batch 0 under the run id of its first attempt: the sink found it committed
    assert sorted(r["id"] for r in _json_rows(tmp_path / "out")) == list(range(120))


def test_a_stream_sinks_into_postgres_through_the_python_driver(server, token, tmp_path):
    with pg.running() as db:
        conf = _job(tmp_path, f'Jdbc {{ plugin_input = "t", url = "{db.url}", driver = "org.postgresql.Driver", '
                              f'user = "{db.user}", password = "{db.password}", generate_sink_sql = true, '
                              f'database = "{db.database}", table = "public.events", primary_keys = ["id"] }}')
        _drop(tmp_path / "in", "a.csv", range(0, 100))
        code, job = _run(conf, server.address, tmp_path)
        assert code == 0, job
        _drop(tmp_path / "in", "b.csv", range(50, 150))  # overlapping ids: upserted
        code, job = _run(conf, server.address, tmp_path)
        assert code == 0 and job["pipelines"][0]["write_count"] == 100
        assert db.sql("SELECT count(*), count(DISTINCT id), min(name) FROM public.events") == [["150", "150", "N0"]]


def test_sigterm_stops_a_processing_time_stream_between_micro_batches(server, tmp_path):
    _drop(tmp_path / "in", "a.csv", range(0, 40))
    conf = _job(tmp_path, f'LocalFile {{ plugin_input = "t", path = "{tmp_path}/out", file_format_type = "json" }}',
                trigger="processing_time")
    env = {**os.environ, "SPARK_CONNECT_AUTHENTICATE_TOKEN": server.token}
    metrics = tmp_path / "metrics.json"
    proc = subprocess.Popen([sys.executable, "-m", "airflow_provider_seatunnel.cli", "run", str(conf), "--remote",
                             server.address, "--metrics-file", str(metrics)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + 240
    assert proc.stdout is not None
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        lines.append(line)
        if "micro-batch 0:" in line:
            _drop(tmp_path / "in", "b.csv", range(40, 60))  # picked up by a later micro-batch
        if "micro-batch 1:" in line:
            break
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0, "".join(lines) + out
    job = json.loads(metrics.read_text())
    assert job["pipelines"][0]["streaming"]["stopped"] == "stop requested"
    assert sorted(r["id"] for r in _json_rows(tmp_path / "out")) == list(range(60))


def test_streaming_sources_that_need_the_driver_jvm_are_refused(server, token, tmp_path):
    conf = tmp_path / "fake.conf"
    conf.write_text("""
env { job.mode = "STREAMING" }
source { FakeSource { plugin_output = "t", row.num = 5, schema = { fields { a = int } } } }
sink { Console { plugin_input = "t" } }
""")
    code, job = _run(conf, server.address, tmp_path)
    error = job["pipelines"][0]["error"]
    assert code == 1 and error["deterministic"] is True and "session_id" not in job["pipelines"][0]
    assert "FakeSource reads STREAMING jobs through the Spark driver's JVM" in error["message"]


GROUP_DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r}, spark_conn_id="spark_connect")
"""


def test_a_job_group_syncs_a_stream_on_the_server(run_dag, server, tmp_path):
    _drop(tmp_path / "in", "a.csv", range(0, 80))
    conf = _job(tmp_path, f'LocalFile {{ plugin_input = "t", path = "{tmp_path}/out", file_format_type = "json" }}')
    env = {"AIRFLOW_CONN_SPARK_CONNECT": json.dumps({"conn_type": "spark_connect", "host": "localhost",
                                                    "port": server.port, "password": server.token})}
    result = run_dag(GROUP_DAG.format(dag_id="st_connect_stream", config=str(conf)), "st_connect_stream", env=env)
    assert result["state"] == "success", result["log"][-6000:]
    pipeline = next(v for t, v in result["xcom"].items() if t not in ("job.prepare", "job.summary"))
    assert pipeline["mode"] == "STREAMING" and pipeline["write_count"] == 80 and pipeline["session_id"]
    assert sorted(r["id"] for r in _json_rows(tmp_path / "out")) == list(range(80))
    assert "micro-batch 0: read 80 rows, wrote 80 rows" in result["log"] and server.token not in result["log"]
