"""Killing the Airflow task of a long-running STREAMING pipeline stops its queries cleanly."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

JOB = """
env {
  job.mode = "STREAMING"
  job.name = "forever"
  streaming.trigger = "processing_time"
  checkpoint.interval = 500
  checkpoint.root = "__TMP__/checkpoints"
}
source {
  LocalFile { plugin_output = "orders", path = "__TMP__/in", file_format_type = "csv",
              schema = { fields { id = bigint, name = string } } }
}
sink { LocalFile { plugin_input = "orders", path = "__TMP__/out", file_format_type = "json" } }
"""


class TI:
    try_number = 1
    stats_tags: dict = {}  # noqa: RUF012

    def __init__(self):
        self.xcom = {}

    def xcom_push(self, key, value):
        self.xcom[key] = value


def _rows(out: Path) -> list[dict]:
    return [json.loads(line) for f in out.glob("*.json") for line in f.read_text().splitlines() if line]


def test_on_kill_stops_a_long_running_stream_gracefully(tmp_path, monkeypatch):
    from airflow_provider_seatunnel.operators.seatunnel import SeaTunnelOperator

    monkeypatch.setenv("AIRFLOW_CONN_SPARK_DEFAULT", json.dumps({"conn_type": "spark", "host": "local[1]"}))
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.csv").write_text("".join(f"{i},n{i}\n" for i in range(5)))
    conf = tmp_path / "forever.conf"
    conf.write_text(JOB.replace("__TMP__", str(tmp_path)))
    op = SeaTunnelOperator(task_id="forever", config=str(conf))
    context = {"run_id": "manual__kill", "ti": TI()}
    result: dict = {}

    def run() -> None:
        try:
            result["metrics"] = op.execute(context)
        except Exception as e:  # the assertion below shows it
            result["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    deadline = time.monotonic() + 240
    while len(_rows(tmp_path / "out")) < 5 and time.monotonic() < deadline and thread.is_alive():
        time.sleep(0.3)
    assert len(_rows(tmp_path / "out")) == 5, result  # the stream committed its first micro-batch: now kill
    op.on_kill()
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert "error" not in result, result.get("error")
    metrics = result["metrics"]
    assert metrics["status"] == "FINISHED" and metrics["streaming"]["stopped"] == "stop requested"
    assert metrics["write_count"] == 5 and len(_rows(tmp_path / "out")) == 5
