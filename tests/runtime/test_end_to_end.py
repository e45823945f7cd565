"""End to end through ``seatunnel-airflow run`` and ``spark-submit`` (each case is real Spark)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from itertools import pairwise
from pathlib import Path

CLI = str(Path(sys.executable).parent / "seatunnel-airflow")

JOB = """
env {{ job.name = "e2e", parallelism = 2 }}
source {{
  FakeSource {{
    plugin_output = "a"
    row.num = 20
    schema = {{ fields {{ id = bigint, name = string }} }}
    string.template = ["x", "y"]
  }}
  FakeSource {{
    plugin_output = "b"
    row.num = 5
    schema = {{ fields {{ id = bigint, name = string }} }}
    string.template = ["z"]
  }}
}}
transform {{
  Sql {{
    plugin_input = ["a", "b"]
    plugin_output = "t"
    query = "select id, upper(name) as name from a union all select id, upper(name) as name from b"
  }}
}}
sink {{
  LocalFile {{ plugin_input = "t", path = "{out}", file_format_type = "json" }}
  Assert {{
    plugin_input = "t"
    rules {{
      row_rules = [{{ rule_type = MIN_ROW, rule_value = {min_rows} }}]
      field_rules = [{{ field_name = name, field_type = string, field_value = [{{ rule_type = NOT_NULL }}] }}]
    }}
  }}
}}
"""


def run_cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return subprocess.run([CLI, *args], capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


def test_run_all_pipelines_concurrently(tmp_path):
    out = tmp_path / "out"
    conf = tmp_path / "job.conf"
    conf.write_text(JOB.format(out=out, min_rows=1))
    metrics_file = tmp_path / "metrics.json"
    proc = run_cli("run", str(conf), "--metrics-file", str(metrics_file), "--run-id", "r1",
                   "--work-dir", str(tmp_path / "work"), cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Job Statistic Information" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    job = json.loads(metrics_file.read_text())
    assert job["status"] == "FINISHED" and len(job["pipelines"]) == 4
    # each source is read once per pipeline that contains it: a: 2 pipelines x 40 rows, b: 2 x 10
    assert job["read_count"] == 2 * 40 + 2 * 10
    assert job["write_count"] == job["read_count"]
    rows = [json.loads(line) for f in out.rglob("*.json") for line in f.read_text().splitlines() if line]
    assert len(rows) == 50
    assert {r["name"] for r in rows} == {"X", "Y", "Z"}
    spans = sorted((p["start"], p["end"]) for p in job["pipelines"])
    assert any(later[0] <= earlier[1] for earlier, later in pairwise(spans)), \
        f"pipelines ran one after another, not concurrently: {spans}"


def test_failed_assert_exits_1_naming_pipeline_and_rule(tmp_path):
    conf = tmp_path / "job.conf"
    conf.write_text(JOB.format(out=tmp_path / "out", min_rows=1000))
    proc = run_cli("run", str(conf), "--pipeline", "2", "--work-dir", str(tmp_path / "work"), "--keep-work-dir",
                   cwd=tmp_path)
    assert proc.returncode == 1
    assert "pipeline 2" in proc.stderr and "sink[1] Assert" in proc.stderr and "MIN_ROW" in proc.stderr
    assert "Traceback" not in proc.stderr
    log = next((tmp_path / "work").glob("pipeline-*.log")).read_text()
    assert "Traceback" in log  # the stack trace is in the log, not on the screen


def test_config_error_exits_2_without_spark(tmp_path):
    conf = tmp_path / "job.conf"
    conf.write_text("source { FakeSource { plugin_output = a } }\n"
                    "sink {\n  Console { plugin_input = b }\n  Console { plugin_input = a }\n}\n")
    proc = run_cli("run", str(conf), cwd=tmp_path)
    assert proc.returncode == 2
    assert "'b' names no source or transform output" in proc.stderr


TABLES = """
env { job.name = "tables", parallelism = 1 }
source { FakeSource { plugin_output = "t", tables_configs = [
  { schema = { table = "shop.orders", fields { id = bigint } }, row.num = 3 },
  { schema = { table = "shop.items", fields { id = bigint } }, row.num = 5 }] } }
sink { LocalFile { plugin_input = "t", path = "OUT/${database_name}/${table_name}", file_format_type = "json" } }
"""


def test_a_multi_table_run_counts_each_table_in_the_summary_and_the_metrics_file(tmp_path):
    out, conf, metrics_file = tmp_path / "out", tmp_path / "job.conf", tmp_path / "metrics.json"
    conf.write_text(TABLES.replace("OUT", str(out)))
    proc = run_cli("run", str(conf), "--metrics-file", str(metrics_file), "--work-dir", str(tmp_path / "work"),
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    job = json.loads(metrics_file.read_text())
    (pipeline,) = job["pipelines"]
    assert pipeline["per_table_read"] == {"source[0] FakeSource": {"shop.orders": 3, "shop.items": 5}}
    assert pipeline["per_table"] == {"sink[0] LocalFile": {"shop.orders": 3, "shop.items": 5}}
    assert [(t["table"], t["status"], t["read"], t["written"]) for t in job["tables"]] == [
        ("shop.items", "FINISHED", 5, 5), ("shop.orders", "FINISHED", 3, 3)]
    assert "Pipeline 1 Tables (read / written)" in proc.stdout
    assert f"{'shop.orders':<26}: {'3 / 3':>19}" in proc.stdout  # SeaTunnel's layout
    written = {f.parent.relative_to(out).as_posix(): len(f.read_text().splitlines()) for f in out.rglob("*.json")}
    assert written == {"shop/orders": 3, "shop/items": 5}
