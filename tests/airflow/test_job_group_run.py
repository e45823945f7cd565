"""SeaTunnelJobGroup under real Airflow (``dag.test()``) and real ``spark-submit``."""

from __future__ import annotations

import json
import re
import socket
import threading
from pathlib import Path

ISOLATION = """
env { job.name = "isolation", job.retry.interval.seconds = 1, progress.interval = 1 }
source {
  FakeSource { plugin_output = "web", row.num = 7, schema = { fields { id = bigint, name = string } } }
  FakeSource { plugin_output = "store", row.num = 5, schema = { fields { id = bigint, name = string } } }
}
sink {
  LocalFile { plugin_input = "web", path = "__OUT__/web", file_format_type = "json", data_save_mode = "DROP_DATA" }
  LocalFile { plugin_input = "store", path = "__OUT__/store", file_format_type = "json" }
  Assert { plugin_input = "store", rules { row_rules = [{ rule_type = MIN_ROW, rule_value = 1000 }] } }
}
"""

GROUP_DAG = """
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup

with DAG({dag_id!r}, schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="job", config={config!r})
"""


def _rows(directory: Path) -> list[dict]:
    return [json.loads(line) for f in sorted(directory.glob("*.json")) for line in f.read_text().splitlines() if line]


class StatsdListener:
    """A StatsD server on a loopback UDP port: every line it received (one metric each)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.lines: list[str] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._receive, daemon=True)
        self.thread.start()

    def _receive(self) -> None:
        while not self.done.is_set():
            try:
                self.lines += self.sock.recv(65535).decode().splitlines()
            except TimeoutError:
                continue

    def close(self) -> list[str]:
        self.done.set()
        self.thread.join(5)
        self.sock.close()
        return self.lines


def _stat(lines: list[str], name: str) -> list[str]:
    """The lines of metric ``name`` (with or without InfluxDB-style tags after it)."""
    return [line for line in lines if line.split(":", 1)[0].split(",", 1)[0] == name]


def test_failed_pipeline_leaves_the_other_committed_and_fails_the_summary(run_dag, tmp_path):
    out = tmp_path / "out"
    (out / "web").mkdir(parents=True)
    (out / "web" / "old.json").write_text('{"id": -1}\n')  # dropped once, by the first commit (DROP_DATA)
    conf = tmp_path / "isolation.conf"
    conf.write_text(ISOLATION.replace("__OUT__", str(out)))
    statsd = StatsdListener()  # Airflow's StatsD settings, tags as InfluxDB writes them
    try:
        result = run_dag(GROUP_DAG.format(dag_id="st_isolation", config=str(conf)), "st_isolation", env={
            "AIRFLOW__METRICS__STATSD_ON": "True", "AIRFLOW__METRICS__STATSD_HOST": "127.0.0.1",
            "AIRFLOW__METRICS__STATSD_PORT": str(statsd.port), "AIRFLOW__METRICS__STATSD_PREFIX": "af",
            "AIRFLOW__METRICS__STATSD_INFLUXDB_ENABLED": "True"})
    finally:
        lines = statsd.close()
    tis = result["tis"]
    web = next(t for t in tis if t.startswith("job.web"))
    store = next(t for t in tis if t.startswith("job.store"))
    assert tis["job.prepare"]["state"] == "success", result["log"][-6000:]
    assert tis[web]["state"] == "success", result["log"][-6000:]
    assert tis[store]["state"] == "failed" and tis[store]["try_number"] == 1  # an Assert: never retried
    assert tis["job.summary"]["state"] == "failed"
    assert result["state"] == "failed"
    # the web pipeline committed all its rows; the old file went once, with its commit
    assert len(_rows(out / "web")) == 7 and not (out / "web" / "old.json").exists()
    assert not list((out / "store").glob("*.json"))  # the failed pipeline committed nothing
    markers = list((out / "web" / ".seatunnel-commits").rglob("*.savemode"))
    assert len(markers) == 1 and json.loads(markers[0].read_text())["body"]["actions"] == [f"drop at commit: {out / 'web'}"]
    log = result["log"]
    assert "Job Statistic Information" in log
    # live progress in the task log while a pipeline ran (every second here), then the summary as before
    assert re.search(r"progress after \d+ s: read [\d,]+ rows.*; Spark: ", log), log[-6000:]
    assert "1 of 2 pipelines did not finish" in log and store.split(".", 1)[1] in log
    # metrics through Airflow's Stats: per pipeline and per sink, under names holding the DAG and task
    # ids (a dot of a task id in a group becomes "__", as in Airflow's own names) and tagged ones
    web_name, store_name = (f"af.seatunnel.st_isolation.{t.replace('.', '__')}" for t in (web, store))
    assert [line.split(":", 1)[1] for line in _stat(lines, f"{web_name}.rows_written")] == ["7|c"], [x for x in lines if "seatunnel" in x]
    assert [line.split(":", 1)[1] for line in _stat(lines, f"{web_name}.rows_read")] == ["7|c"]
    assert _stat(lines, f"{web_name}.finished") and _stat(lines, f"{web_name}.duration")[0].endswith("|ms")
    assert _stat(lines, f"{store_name}.failed") and not _stat(lines, f"{store_name}.finished")
    assert [line.split(":", 1)[1] for line in _stat(lines, f"{web_name}.sink_0_LocalFile.rows_written")] == ["7|c"]
    tagged = [line for line in _stat(lines, "af.seatunnel.rows_written") if f"task_id={web}" in line]
    assert tagged and "dag_id=st_isolation" in tagged[0] and tagged[0].endswith(":7|c"), lines
    # the live progress as plain data: the last report of the pipeline's run stays as its XCom
    progress = result["xcoms"].get("seatunnel_progress") or {}
    assert progress, sorted(result["xcoms"])
    for report in progress.values():
        assert report["status"] == "RUNNING" and isinstance(report["per_source"], dict) and report["updated"]


RESTORE = """
env { job.name = "restore", parallelism = 2 }
source {
  FakeSource {
    plugin_output = "web"
    schema = { fields { id = bigint, channel = string } }
    rows = [
      { kind = INSERT, fields = [1, "web"] }, { kind = INSERT, fields = [2, "web"] },
      { kind = INSERT, fields = [3, "web"] }, { kind = INSERT, fields = [4, "web"] }
    ]
  }
  FakeSource {
    plugin_output = "store"
    schema = { fields { id = bigint, channel = string } }
    rows = [{ kind = INSERT, fields = [101, "store"] }, { kind = INSERT, fields = [102, "store"] }]
  }
}
sink {
  LocalFile {
    plugin_input = ["web", "store"]
    path = "__OUT__"
    file_format_type = "json"
    data_save_mode = "DROP_DATA"
  }
}
"""


def restore_job(tmp_path: Path) -> tuple[Path, Path, str]:
    """The RESTORE job over a fresh target that holds an old row: (target, config, the web pipeline's task id)."""
    from airflow_provider_seatunnel.plan import compile_job

    out = tmp_path / "out"
    out.mkdir()
    (out / "old.json").write_text('{"id": -1, "channel": "old"}\n')
    conf = tmp_path / "restore.conf"
    conf.write_text(RESTORE.replace("__OUT__", str(out)))
    return out, conf, next(p.task_id for p in compile_job(conf).pipelines if p.task_id.startswith("web"))


def test_retry_is_an_exactly_once_restore(run_dag, tmp_path):
    """Both pipelines write one sink (the split clones it); the web pipeline's driver is SIGKILLed
    half-way through its commit (one file moved) on attempt 1; Airflow retries it, with nothing setting
    retries anywhere (config, group, DAG): SeaTunnel's restore policy applies. The old data is
    dropped once (by the first commit, not again by the retry or the other pipeline: their rows survive), and every row
    is in the sink exactly once."""
    out, conf, web = restore_job(tmp_path)
    result = run_dag(GROUP_DAG.format(dag_id="st_restore", config=str(conf)), "st_restore",
                     env={"SEATUNNEL_FAULTS": f"sink.move:{web}=kill+1"})
    tis = result["tis"]
    assert result["ops"][f"job.{web}"] == {"retries": 3, "retry_delay": 3.0}  # SeaTunnel's default, not Airflow's 0
    assert result["state"] == "success", result["log"][-8000:]
    assert tis[f"job.{web}"]["try_number"] == 2  # killed once, restored by the retry
    assert all(ti["try_number"] == 1 for task, ti in tis.items() if task != f"job.{web}")
    # FakeSource emits its rows once per parallel reader (SeaTunnel's semantics): 2 readers, 2 copies
    rows = sorted((r["id"], r["channel"]) for r in _rows(out))
    assert rows == sorted(2 * [(1, "web"), (2, "web"), (3, "web"), (4, "web"), (101, "store"), (102, "store")])
    job = result["xcom"]["job.summary"]
    assert job["status"] == "FINISHED" and job["write_count"] == 12 and job["read_count"] == 12

