"""A STREAMING job under real Airflow (``dag.test()``, real spark-submit): the everyday incremental sync.
Each DAG run of the job group resumes the pipeline's checkpoint and processes only the files that
arrived since the previous run; the pipeline task's XCom carries the micro-batch metrics."""

from __future__ import annotations

import json
from datetime import UTC, datetime


def test_each_dag_run_syncs_only_the_new_files(run_dag, tmp_path):
    inp = tmp_path / "in"
    inp.mkdir()
    (inp / "a.csv").write_text("1,a\n2,b\n")
    conf = tmp_path / "stream.conf"
    conf.write_text(f"""
env {{ job.mode = STREAMING, job.name = orders_sync, checkpoint.root = "{tmp_path}/ck" }}
source {{ LocalFile {{ plugin_output = orders, path = "{inp}", file_format_type = csv,
                      schema = {{ fields {{ id = bigint, name = string }} }} }} }}
sink {{ LocalFile {{ plugin_input = orders, path = "{tmp_path}/out", file_format_type = json }} }}
""")
    source = f"""
from datetime import datetime
from airflow.sdk import DAG
from airflow_provider_seatunnel.operators.job_group import SeaTunnelJobGroup
with DAG("streaming_sync", schedule=None, start_date=datetime(2024, 1, 1)) as dag:
    SeaTunnelJobGroup(group_id="sync", config={str(conf)!r})
"""
    batches = []
    for day, (name, text) in enumerate([(None, None), ("b.csv", "3,c\n")], 6):
        if name:
            (inp / name).write_text(text)
        result = run_dag(source, "streaming_sync", run_after=datetime(2024, 5, day, tzinfo=UTC))
        assert result["state"] == "success", result["log"][-6000:]
        (task,) = [k for k in result["xcom"] if k not in ("sync.prepare", "sync.summary")]
        metrics = result["xcom"][task]
        assert metrics["mode"] == "STREAMING" and metrics["status"] == "FINISHED"
        assert metrics["read_count"] == metrics["write_count"] == (2 if name is None else 1)
        batches += [b["batch"] for b in metrics["streaming"]["batches"]]
    assert batches == [0, 1]  # the second DAG run resumed the first one's checkpoint
    rows = [json.loads(line) for f in (tmp_path / "out").glob("*.json") for line in f.read_text().splitlines()]
    assert sorted(r["id"] for r in rows) == [1, 2, 3]
