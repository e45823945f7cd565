"""A retry after a worker crash reconnects to the pipeline's application still running on the cluster.

YARN cannot run here: a loopback HTTP server answers the ResourceManager's REST API
(``/ws/v1/cluster/apps/<id>``) and a ``spark-submit`` script on PATH records submissions.
Everything else — the Spark provider's durable tracking, its task state store protocol, our
operator — is the real code path.
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

JOB = """
env { job.name = "durable" }
source { FakeSource { plugin_output = "gen", row.num = 3, schema = { fields { id = bigint } } } }
sink { LocalFile { plugin_input = "gen", path = "/data/out", file_format_type = "json" } }
"""

FAKE_SUBMIT = """#!/bin/sh
printf '%s\\n' "$@" >> {calls}
echo "INFO Client: Submitted application application_1_0002" >&2
exit 0
"""


class FakeResourceManager(BaseHTTPRequestHandler):
    """Answers GET /ws/v1/cluster/apps/<id> from ``states``: a list of (state, finalStatus) per app, popped."""

    states: ClassVar[dict[str, list[tuple[str, str]]]] = {}

    def do_GET(self) -> None:
        app = self.path.rstrip("/").rsplit("/", 1)[-1]
        queue = self.states.get(app) or [("FAILED", "FAILED")]
        state, final = queue.pop(0) if len(queue) > 1 else queue[0]
        body = json.dumps({"app": {"state": state, "finalStatus": final, "diagnostics": ""}}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


class Store:
    """The task state store's protocol (get/set), as Airflow 3.3 hands it to a task in its context."""

    def __init__(self, **values):
        self.values = dict(values)

    def get(self, key):
        return self.values.get(key)

    def set(self, key, value):
        self.values[key] = value


class TI:
    try_number = 2
    stats_tags: ClassVar[dict] = {}

    def __init__(self):
        self.xcom = {}

    def xcom_push(self, key, value):
        self.xcom[key] = value


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    server = HTTPServer(("127.0.0.1", 0), FakeResourceManager)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    calls = tmp_path / "calls.txt"
    script = bindir / "spark-submit"
    script.write_text(FAKE_SUBMIT.format(calls=calls))
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}:{__import__('os').environ['PATH']}")
    extra = {"deploy-mode": "cluster", "yarn_resourcemanager_webapp_address": f"http://127.0.0.1:{server.server_port}"}
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_YARN", json.dumps({"conn_type": "spark", "host": "yarn", "extra": extra}))
    conf = tmp_path / "durable.conf"
    conf.write_text(JOB)
    yield conf, calls
    server.shutdown()


def _operator(conf: Path):
    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    return SeaTunnelOperator(task_id="durable", config=str(conf), spark_conn_id="spark_yarn",
                             spark_submit_kwargs={"yarn_track_via_rm_api": True})


def _context(store: Store) -> dict:
    return {"run_id": "scheduled__2024-05-06", "ti": TI(), "task_state_store": store}


def test_retry_reconnects_to_the_running_application(cluster):
    conf, calls = cluster
    FakeResourceManager.states = {"application_1_0001": [("RUNNING", "UNDEFINED"), ("FINISHED", "SUCCEEDED")]}
    context = _context(Store(spark_job_id="application_1_0001"))
    metrics = _operator(conf).execute(context)
    assert not calls.exists()  # no second copy of the pipeline was submitted
    assert metrics["status"] == "FINISHED" and metrics["counts_in_driver_log"]
    assert context["ti"].xcom["seatunnel_metrics"]["status"] == "FINISHED"


def test_retry_after_a_failed_application_submits_once_more(cluster):
    conf, calls = cluster
    FakeResourceManager.states = {"application_1_0001": [("FAILED", "FAILED")],
                                  "application_1_0002": [("FINISHED", "SUCCEEDED")]}
    store = Store(spark_job_id="application_1_0001")
    _operator(conf).execute(_context(store))
    args = calls.read_text().splitlines()
    assert args.count("--master") == 1 and args[args.index("--master") + 1] == "yarn"
    assert args[args.index("--deploy-mode") + 1] == "cluster"
    # the driver runs on the cluster: the plan travels with --files, the package with --py-files
    assert args[args.index("--files") + 1].endswith("/plan.json")
    assert args[args.index("--py-files") + 1].endswith("seatunnel-runtime.zip")
    assert args[args.index("--plan") + 1] == "plan.json" and "--metrics-file" not in args
    assert store.get("spark_job_id") == "application_1_0002"  # tracked for the next retry


def test_package_zip_runs_the_runtime_without_the_installed_package(tmp_path):
    """What --py-files ships imports on its own (the package and sqlglot, from the zip)."""
    import subprocess
    import sys

    from airflow_provider_seatunnel.hooks.seatunnel import SeaTunnelHook

    (tmp_path / "job.conf").write_text(JOB)
    hook = SeaTunnelHook(str(tmp_path / "job.conf"))
    try:
        archive = hook.package_zip()
        code = ("import sys; sys.path.insert(0, sys.argv[1]); "
                "import airflow_provider_seatunnel.runtime.executor as e, airflow_provider_seatunnel.spi as c, "
                "sqlglot; c.get_connector('Sql'); print(e.__file__, sqlglot.__file__)")
        proc = subprocess.run([sys.executable, "-I", "-c", code, str(archive)], capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.count("seatunnel-runtime.zip") == 2
    finally:
        hook.cleanup()
