"""Inputs of one sink with different row types, where the compiler cannot know them (a parquet
source read without a schema): the pipeline fails before the first write, naming both inputs."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.spi.errors import DataError

JOB = """
env { job.mode = BATCH }
source { LocalFile { plugin_output = "raw", path = "IN", file_format_type = "parquet" } }
transform {
  Sql { plugin_input = "raw", plugin_output = "a", query = "select id, name from raw" }
  Sql { plugin_input = "raw", plugin_output = "b", query = "select B_ID, name from raw" }
}
sink { LocalFile { plugin_input = ["a", "b"], path = "OUT", file_format_type = "csv" } }
"""


@pytest.fixture
def parquet_dir(spark, tmp_path):
    path = tmp_path / "in"
    spark.createDataFrame([(1, "x"), (2, "y")], "id int, name string").write.parquet(str(path))
    return path


def test_different_row_types_into_one_sink_fail_before_any_write(run_job, parquet_dir, tmp_path):
    out = tmp_path / "out"
    job = JOB.replace("IN", str(parquet_dir)).replace("OUT", str(out))
    with pytest.raises(DataError) as e:
        run_job(job.replace("B_ID", "cast(id as string) as id"))
    assert "the inputs of this sink have different row types" in str(e.value)
    assert "(id int, name string)" in str(e.value) and "(id string, name string)" in str(e.value)
    written = [f for f in out.rglob("*") if f.is_file() and ".seatunnel" not in str(f)] if out.exists() else []
    assert written == []
    # the same row type on both inputs (the sink is split: one pipeline per input): both inputs' rows
    pipelines = run_job(job.replace("B_ID", "id"), run_id="same")
    assert len(pipelines) == 2
    assert sum(sum(m["per_table"]["sink[0] LocalFile"].values()) for m in pipelines) == 4
