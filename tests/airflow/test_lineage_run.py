"""Lineage of a real task run (``dag.test()``, real ``spark-submit``, the real PostgreSQL of tests/pg.py):
asset events for targets only the running task can name, OpenLineage's parent-job and transport settings
on the real spark-submit, and the OpenLineage events the provider's listener emits.

One run serves every test of the module: a LocalFile source → Sql → a LocalFile sink whose path is
templated and a Jdbc sink whose URL comes from its ``jdbc_conn_id``, with OpenLineage on (a
composite transport: a file the tests read, and HTTP to a local receiver, which is what the Spark
provider can pass on to Spark).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from .conftest import DEFAULT_LOGICAL_DATE, RUNNER, dags_folder

DAG_ID = "st_lineage_run"
CONF = """
env { job.name = "lineage_job", job.retry.times = 0 }
source {
  LocalFile {
    plugin_output = "raw"
    path = "__IN__"
    file_format_type = "json"
    schema = { fields { id = bigint, name = string, amount = double, secret = string } }
  }
}
transform {
  Sql {
    plugin_input = "raw"
    plugin_output = "clean"
    query = "select id, upper(name) as name, amount * 2 as amount2, md5(secret) as token from raw where amount > 0"
  }
}
sink {
  LocalFile { plugin_input = "clean", path = "${out}", file_format_type = "json" }
  Jdbc { plugin_input = "clean", jdbc_conn_id = "pg_lineage", driver = "org.postgresql.Driver", generate_sink_sql = true,
         table = "orders_out" }
}
"""

DAG = """
from datetime import datetime
from airflow.sdk import DAG, Param
from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1), params={{"root": Param({root!r})}}) as dag:
    SeaTunnelOperator(task_id="job", config={config!r}, variables={{"out": "{{{{ params.root }}}}/{{{{ ds }}}}/orders"}},
                      openlineage_inject_parent_job_info=True,
                      openlineage_inject_transport_info=True, spark_submit_kwargs={{"verbose": True}})
"""

ASSETS = """
import json
from sqlalchemy import select
from airflow.models.asset import AssetAliasModel, AssetEvent, AssetModel
from airflow.utils.session import create_session
with create_session() as session:
    events = [{"uri": uri, "task_id": task_id} for uri, task_id in session.execute(
        select(AssetModel.uri, AssetEvent.source_task_id).join(AssetEvent, AssetEvent.asset_id == AssetModel.id)
        .where(AssetEvent.source_dag_id == %r))]
    aliases = {a.name: sorted(x.uri for x in a.assets) for a in session.scalars(select(AssetAliasModel))}
print(json.dumps({"events": events, "aliases": aliases}))
"""


#: the events OpenLineage's HTTP transport posted to :class:`_Receiver`
RECEIVED: list[dict] = []


class _Receiver(BaseHTTPRequestHandler):
    """OpenLineage's HTTP transport's other end: accepts every event."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        RECEIVED.append(json.loads(body or b"{}"))
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def lineage_run(airflow_env, tmp_path_factory):
    from tests import pg

    try:
        db = pg.start()
    except pg.PgUnavailable as e:
        pytest.fail(str(e), pytrace=False)
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Receiver)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield _run(airflow_env, tmp_path_factory.mktemp("lineage-run"), db, server.server_address[1])
    finally:
        server.shutdown()
        db.stop()


def _run(airflow_env: dict, work: Path, db, port: int) -> dict:
    (work / "in").mkdir()
    rows = [{"id": 1, "name": "a", "amount": 1.5, "secret": "x"}, {"id": 2, "name": "b", "amount": -1.0, "secret": "y"},
            {"id": 3, "name": "c", "amount": 2.0, "secret": "z"}]
    (work / "in" / "part-0.json").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (work / "job.conf").write_text(CONF.replace("__IN__", str(work / "in")))
    dag_dir = dags_folder(airflow_env, DAG_ID)
    (dag_dir / f"{DAG_ID}.py").write_text(textwrap.dedent(DAG.format(
        dag_id=DAG_ID, root=str(work / "out"), config=str(work / "job.conf"))))
    events_file = work / "openlineage.jsonl"
    env = {**airflow_env, "AIRFLOW__CORE__DAGS_FOLDER": str(dag_dir),
           "AIRFLOW_CONN_PG_LINEAGE": json.dumps({"conn_type": "postgres", "host": "127.0.0.1", "port": db.port,
                                                  "schema": db.database, "login": db.user,
                                                  "password": db.password}),
           "AIRFLOW__OPENLINEAGE__NAMESPACE": "lineage_tests",
           "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({"type": "composite", "transports": {
               "file": {"type": "file", "log_file_path": str(events_file), "append": True},
               "receiver": {"type": "http", "url": f"http://127.0.0.1:{port}"}}})}
    result = work / "result.json"
    runner = RUNNER.format(dag_dir=str(dag_dir), module=DAG_ID, result=str(result),
                           logical_date=DEFAULT_LOGICAL_DATE.isoformat(), run_after="", run_conf=None)
    proc = subprocess.run([sys.executable, "-c", runner], env=env, cwd=work, capture_output=True, text=True,
                          timeout=600)
    assert result.exists(), proc.stdout[-5000:] + proc.stderr[-5000:]
    out = json.loads(result.read_text())
    out["log"] = proc.stdout + proc.stderr
    assets = subprocess.run([sys.executable, "-c", ASSETS % DAG_ID], env=env, capture_output=True, text=True,
                            timeout=300)
    assert assets.returncode == 0, assets.stderr[-3000:]
    out["assets"] = json.loads(assets.stdout.strip().splitlines()[-1])
    lines = events_file.read_text().splitlines() if events_file.exists() else []
    out["openlineage"] = [json.loads(line) for line in lines if line.strip()]
    out.update(db=db, work=work)
    assert out["tis"]["job"]["state"] == "success", out["log"][-8000:]
    return out


def test_targets_named_at_run_time_get_real_asset_events(lineage_run):
    """The templated path's real directory and the connection's real table, through the task's aliases
    (before: an event for ``file:///``, and none for the table)."""
    db, work = lineage_run["db"], lineage_run["work"]
    path = f"file://{work}/out/{DEFAULT_LOGICAL_DATE:%Y-%m-%d}/orders"
    table = f"postgres://127.0.0.1:{db.port}/{db.database}/public/orders_out"
    assert sorted(e["uri"] for e in lineage_run["assets"]["events"]) == sorted([path, table])
    # the session's Airflow database also holds the aliases of other tests' DAGs: keep this run's
    aliases = {name: uris for name, uris in lineage_run["assets"]["aliases"].items()
               if name.startswith("seatunnel/") and any(u in (path, table) for u in uris)}
    assert sorted(aliases.values()) == [[path], [table]], aliases
    assert db.sql("select count(*) from orders_out") == [["2"]]  # the table the event names is the one written


def test_openlineage_parent_job_and_transport_reach_spark_submit(lineage_run):
    """The Spark provider's injection (``openlineage_inject_*``) reaches the real spark-submit, through the
    pipeline's private properties file: spark-submit ``--verbose`` lists the properties it loaded (before:
    the keys were injected into the operator's ``conf`` and dropped)."""
    log = lineage_run["log"]
    assert "Spark properties used" in log, log[-6000:]
    start = log.index("Spark properties used")
    end = log.find("Main class:", start)
    loaded = log[start:end if end > 0 else None]  # what spark-submit read from --conf and the properties file
    for key in ("spark.openlineage.parentJobNamespace,lineage_tests", f"spark.openlineage.parentJobName,{DAG_ID}.job",
                "spark.openlineage.parentRunId,", "spark.openlineage.rootParentRunId,",
                f"spark.openlineage.rootParentJobName,{DAG_ID}", "spark.openlineage.transport.type,composite",
                "spark.openlineage.transport.transports.receiver.url,http://127.0.0.1:"):
        assert key in loaded, key
    command = next(line for line in log.splitlines() if "Spark-Submit cmd" in line)
    assert "spark.openlineage" not in command and "--properties-file" in command  # never on the command line


def test_openlineage_events_carry_datasets_schemas_rows_and_column_lineage(lineage_run):
    """The listener's COMPLETE event of the task: the source file as input, both sinks as outputs, their
    schemas, the rows written, and the Sql transform's column lineage back to the input's columns."""
    db, work = lineage_run["db"], lineage_run["work"]
    complete = [e for e in lineage_run["openlineage"]
                if e.get("eventType") == "COMPLETE" and e.get("job", {}).get("name") == f"{DAG_ID}.job"]
    assert len(complete) == 1, [(e.get("eventType"), e.get("job", {}).get("name")) for e in lineage_run["openlineage"]]
    event = complete[0]
    (source,) = event["inputs"]
    assert (source["namespace"], source["name"]) == ("file", f"{work}/in")
    assert [(f["name"], f["type"]) for f in source["facets"]["schema"]["fields"]] == [
        ("id", "bigint"), ("name", "string"), ("amount", "double"), ("secret", "string")]
    assert source["inputFacets"]["inputStatistics"]["rowCount"] == 3
    outputs = {(o["namespace"], o["name"]): o for o in event["outputs"]}
    assert sorted(outputs) == [("file", f"{work}/out/{DEFAULT_LOGICAL_DATE:%Y-%m-%d}/orders"),
                               (f"postgres://127.0.0.1:{db.port}", f"{db.database}.public.orders_out")]
    for output in outputs.values():
        assert output["outputFacets"]["outputStatistics"]["rowCount"] == 2  # the rows with amount > 0
        assert [f["name"] for f in output["facets"]["schema"]["fields"]] == ["id", "name", "amount2", "token"]
        columns = output["facets"]["columnLineage"]
        lineage = {out: [(i["namespace"], i["name"], i["field"], i["transformations"][0]["subtype"],
                          i["transformations"][0].get("masking")) for i in f["inputFields"]]
                   for out, f in columns["fields"].items()}
        src = ("file", f"{work}/in")
        assert lineage == {"id": [(*src, "id", "IDENTITY", False)], "name": [(*src, "name", "TRANSFORMATION", False)],
                           "amount2": [(*src, "amount", "TRANSFORMATION", False)],
                           "token": [(*src, "secret", "TRANSFORMATION", True)]}
        assert [(i["field"], i["transformations"][0]["type"], i["transformations"][0]["subtype"])
                for i in columns["dataset"]] == [("amount", "INDIRECT", "FILTER")]
    assert any(e.get("eventType") == "COMPLETE" for e in RECEIVED)  # the HTTP transport got them too


def test_openlineage_start_event_carries_the_input_and_output_datasets(lineage_run):
    """The listener's START event of the task already names the source file as input and both sinks
    (the rendered templated path, the connection's table) as outputs, with their schemas (before: none)."""
    db, work = lineage_run["db"], lineage_run["work"]
    (start,) = [e for e in lineage_run["openlineage"]
                if e.get("eventType") == "START" and e.get("job", {}).get("name") == f"{DAG_ID}.job"]
    assert [(i["namespace"], i["name"]) for i in start["inputs"]] == [("file", f"{work}/in")]
    assert [f["name"] for f in start["inputs"][0]["facets"]["schema"]["fields"]] == ["id", "name", "amount", "secret"]
    assert sorted((o["namespace"], o["name"]) for o in start["outputs"]) == [
        ("file", f"{work}/out/{DEFAULT_LOGICAL_DATE:%Y-%m-%d}/orders"),
        (f"postgres://127.0.0.1:{db.port}", f"{db.database}.public.orders_out")]
    assert all("outputStatistics" not in o.get("outputFacets", {}) for o in start["outputs"])  # nothing written yet
