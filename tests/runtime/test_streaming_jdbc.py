"""A STREAMING pipeline into Jdbc (private PostgreSQL, tests/pg.py): micro-batches through the staged
exactly-once commit, save modes once per stream, commit-log rows of replay-proof batches retired."""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_provider_seatunnel.plan import compile_job
from airflow_provider_seatunnel.runtime import faults
from airflow_provider_seatunnel.runtime.executor import RunContext
from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline
from airflow_provider_seatunnel.spi.errors import PipelineError


def add_csv(directory: Path, name: str, ids: range) -> list[int]:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f".{name}").write_text("".join(f"{i},name{i}\n" for i in ids))
    (directory / f".{name}").rename(directory / name)
    return list(ids)


def test_stream_into_jdbc_exactly_once_with_save_modes_once_per_stream(spark, write_conf, tmp_path, db):
    db.sql("CREATE TABLE synced (id bigint, name text); INSERT INTO synced VALUES (-1, 'stale')")
    text = f"""
env {{ job.mode = STREAMING, job.name = tojdbc, checkpoint.root = "{tmp_path}/ck" }}
source {{ LocalFile {{ plugin_output = rows, path = "{tmp_path}/in", file_format_type = csv,
                      schema = {{ fields {{ id = bigint, name = string }} }} }} }}
sink {{ Jdbc {{ url = "{db.url}", driver = "org.postgresql.Driver", user = "{db.user}", password = "{db.password}",
               generate_sink_sql = true, table = "public.synced", data_save_mode = DROP_DATA }} }}
"""
    plan = compile_job(write_conf(text), use_cache=False)

    def run(**kw):
        return run_streaming_pipeline(RunContext(spark, plan, plan.pipelines[0], "airflow-run", **kw))

    def ids() -> list[int]:
        return [int(r[0]) for r in db.sql("SELECT id FROM synced ORDER BY id")]

    expected = add_csv(tmp_path / "in", "1.csv", range(0, 3))
    assert run()["write_count"] == 3
    assert ids() == expected  # DROP_DATA ran with the stream's first micro-batch
    expected += add_csv(tmp_path / "in", "2.csv", range(3, 5))
    with pytest.raises(PipelineError, match=r"injected fault at batch\.committed"):
        run(options=faults.from_environment({faults.ENV: "batch.committed"}))
    assert ids() == expected  # committed in the database, not yet in Spark's log
    again = run(attempt=2)  # replays micro-batch 1: the commit log has it
    assert [b["batch"] for b in again["streaming"]["batches"]] == [1]
    expected += add_csv(tmp_path / "in", "3.csv", range(5, 9))
    run()
    assert ids() == expected  # every row once, DROP_DATA never ran again
    logged = db.sql("SELECT run_id FROM seatunnel_commits WHERE pipeline = "
                    f"'{plan.pipelines[0].task_id}' ORDER BY run_id")
    assert len(logged) == 1 and logged[0][0].endswith(":batch-2")  # the earlier micro-batches are retired
    assert db.sql("SELECT count(*) FROM pg_tables WHERE tablename LIKE 'st_stage_%'") == [["0"]]
