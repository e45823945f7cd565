"""Rows per table do not depend on how many SQL executions Spark's status store keeps: a job of more
tables than ``spark.sql.ui.retainedExecutions`` (1,000 by default; lowered to 3 here, so that 12 tables
are enough) reports every table's rows read and written, through the command line (``spark-submit``,
a session of its own with the lowered setting) into a real SQLite file (Debian's JDBC driver)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

JAR = "/usr/share/java/sqlite-jdbc.jar"
CLI = str(Path(sys.executable).parent / "seatunnel-airflow")
TABLES = 12


def test_every_table_is_counted_when_the_status_store_keeps_fewer_executions_than_the_job_ran(tmp_path, write_conf):
    if not os.path.isfile(JAR):
        pytest.fail(f"{JAR} is missing: run `make test-deps` (libxerial-sqlite-jdbc-java)", pytrace=False)
    lite = tmp_path / "copy.db"
    configs = ",\n".join(f'{{ schema = {{ table = "t{i:02d}", fields {{ id = bigint, name = string }} }}, '
                         f'row.num = {i + 1} }}' for i in range(TABLES))
    # SQLite takes one writer at a time: the tables are written one after another
    conf = write_conf(f"""
        env {{ job.name = "retained", spark.ui.enabled = false, spark.sql.ui.retainedExecutions = 3,
              multi_table.concurrent_tables = 1 }}
        source {{ FakeSource {{ plugin_output = "t", tables_configs = [{configs}] }} }}
        sink {{ Jdbc {{ plugin_input = "t", url = "jdbc:sqlite:{lite}", driver = "org.sqlite.JDBC",
                       table = "${{table_name}}_copy", generate_sink_sql = true }} }}
    """)
    env = dict(os.environ, PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
               TMPDIR=str(tmp_path))
    metrics = tmp_path / "m.json"
    proc = subprocess.run([CLI, "run", str(conf), "--master", "local[2]", "--metrics-file", str(metrics)],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    with sqlite3.connect(lite) as db:  # read back without the code under test
        stored = {f"t{i:02d}": db.execute(f"SELECT count(*) FROM t{i:02d}_copy").fetchone()[0] for i in range(TABLES)}
    assert stored == {f"t{i:02d}": i + 1 for i in range(TABLES)}
    (pipeline,) = json.loads(metrics.read_text())["pipelines"]
    assert pipeline["per_table"] == {"sink[0] Jdbc": stored}
    assert pipeline["per_table_read"] == {"source[0] FakeSource": stored}
    assert pipeline["write_count"] == sum(stored.values())
