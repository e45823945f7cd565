"""LocalFile reads and writes at the parallelism the plan gives its vertex, whatever its block says.

The source returns exactly ``vertex.parallelism`` partitions per table (Spark's file splits coalesced
or the rows repartitioned); the sink writes the partitions the engine hands it, one file per
non-empty partition, the engine having repartitioned them to the sink's planned parallelism.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from airflow_provider_seatunnel.connectors import localfile as lf
from airflow_provider_seatunnel.runtime import twophase
from airflow_provider_seatunnel.runtime.executor import RunContext, run_pipeline
from airflow_provider_seatunnel.runtime.streaming import run_streaming_pipeline
from airflow_provider_seatunnel.spi.rows import with_kind

LF_2PC = twophase.driver(lf.CONNECTOR)  # the engine's two phases over LocalFile's storage verbs


def text_files(directory: Path, files: int, rows_per_file: int, first: int = 0) -> list[int]:
    """``files`` text files of ``rows_per_file`` ids each; the ids written."""
    directory.mkdir(parents=True, exist_ok=True)
    ids = []
    for f in range(files):
        block = range(first + f * rows_per_file, first + (f + 1) * rows_per_file)
        (directory / f"part-{f}.txt").write_text("".join(f"{i}\n" for i in block))
        ids.extend(block)
    return ids


def data_files(root: Path) -> list[Path]:
    """Files a reader of ``root`` sees (no hidden or underscore paths)."""
    return sorted(p for p in root.rglob("*") if p.is_file()
                  and not any(part.startswith((".", "_")) for part in p.relative_to(root).parts))


def ids_in(files: list[Path]) -> list[int]:
    return sorted(int(line) for f in files for line in f.read_text().splitlines() if line)


def source_block(path: Path, output: str = "t") -> str:
    return (f'LocalFile {{ plugin_output = "{output}", path = "{path}", file_format_type = "text", '
            'schema = { fields { id = int } } }')


def test_unsplit_sink_with_its_own_parallelism_writes_that_many_files(spark, plan_of, tmp_path):
    """The source reads its one file at the env's 2 partitions; the sink, at its own 5, writes 5 files
    (the engine repartitions the sink's input to 5)."""
    expected = text_files(tmp_path / "in", files=1, rows_per_file=20)
    out = tmp_path / "out"
    plan = plan_of(f"""
env {{ parallelism = 2 }}
source {{ {source_block(tmp_path / "in")} }}
sink {{ LocalFile {{ plugin_input = "t", path = "{out}", file_format_type = "text", parallelism = 5 }} }}
""")
    (p,) = plan.pipelines
    assert [(v.ref, v.parallelism) for v in p.vertices] == [("source[0]", 2), ("sink[0]", 5)]
    assert any("runs at its own parallelism 5" in n for n in p.sinks[0].notes)
    assert lf.read(RunContext(spark, plan, p, "r1"), p.sources[0])["t"].rdd.getNumPartitions() == 2
    metrics = run_pipeline(RunContext(spark, plan, p, "r1"))
    assert metrics["write_count"] == 20
    files = data_files(out)
    assert len(files) == 5 and all(f.stat().st_size > 0 for f in files)
    assert ids_in(files) == expected


def test_sink_writes_the_partitions_it_is_handed_not_its_blocks_figure(spark, plan_of, tmp_path):
    """The engine repartitions a sink's input to its planned parallelism; the sink itself never
    repartitions by its block's ``parallelism`` option."""
    out = tmp_path / "out"
    plan = plan_of(f"""
source {{ LocalFile {{ plugin_output = "t", path = "/nowhere", file_format_type = "parquet" }} }}
sink {{ LocalFile {{ plugin_input = "t", path = "{out}", file_format_type = "csv", parallelism = 5 }} }}
""")
    (p,) = plan.pipelines
    ctx = RunContext(spark, plan, p, "r1")
    data = {"t": with_kind(spark.range(30).selectExpr("cast(id as int) id").repartition(3))}
    LF_2PC.commit(ctx, p.sinks[0], LF_2PC.prepare(ctx, p.sinks[0], data))
    files = data_files(out)
    assert len(files) == 3
    assert ids_in(files) == list(range(30))


def test_split_pipelines_write_at_the_planned_parallelism_not_the_blocks(spark, plan_of, tmp_path):
    """Two sources into one sink split into two pipelines whose sink runs at its source's parallelism
    (SeaTunnel's rule for split paths): 2, not the 5 the sink's block asks for."""
    expected = text_files(tmp_path / "a", files=4, rows_per_file=3)
    expected += text_files(tmp_path / "b", files=4, rows_per_file=3, first=100)
    out = tmp_path / "out"
    plan = plan_of(f"""
env {{ parallelism = 2 }}
source {{
  {source_block(tmp_path / "a", "a")}
  {source_block(tmp_path / "b", "b")}
}}
sink {{ LocalFile {{ plugin_input = ["a", "b"], path = "{out}", file_format_type = "text", parallelism = 5 }} }}
""")
    assert len(plan.pipelines) == 2
    before: set[Path] = set()
    for p in plan.pipelines:
        sink = p.sinks[0]
        assert sink.parallelism == 2
        assert any("LocalFile asked for parallelism 5; runs at 2" in n for n in sink.notes)
        assert not any("runs at its own parallelism" in n for n in sink.notes)
        assert run_pipeline(RunContext(spark, plan, p, "r1"))["write_count"] == 12
        now = set(data_files(out))
        assert len(now - before) == 2, sorted(now - before)
        before = now
    assert len(before) == 4
    assert ids_in(sorted(before)) == sorted(expected)


@pytest.mark.parametrize("parallelism", [3, 1])
def test_source_reads_exactly_its_planned_partitions(spark, plan_of, tmp_path, parallelism):
    """Seven small files: Spark packs them into its own number of splits; the source returns the
    plan's figure (repartitioned up to 3, coalesced down to 1)."""
    expected = text_files(tmp_path / "in", files=7, rows_per_file=4)
    natural = spark.read.text([str(f) for f in sorted((tmp_path / "in").iterdir())]).rdd.getNumPartitions()
    assert natural != parallelism  # what the files alone would give: the assertions below see the difference
    out = tmp_path / "out"
    plan = plan_of(f"""
env {{ parallelism = {parallelism} }}
source {{ {source_block(tmp_path / "in")} }}
sink {{ LocalFile {{ plugin_input = "t", path = "{out}", file_format_type = "text" }} }}
""")
    (p,) = plan.pipelines
    assert p.sources[0].parallelism == parallelism == p.sinks[0].parallelism
    got = lf.read(RunContext(spark, plan, p, "r1"), p.sources[0])
    assert got["t"].rdd.getNumPartitions() == parallelism
    assert sorted(r.id for r in got["t"].collect()) == expected
    run_pipeline(RunContext(spark, plan, p, "r1"))
    files = data_files(out)
    assert len(files) == parallelism  # the sink writes the source's partitions as they come
    assert ids_in(files) == expected


def test_tables_configs_each_table_at_the_planned_parallelism(spark, plan_of, tmp_path):
    text_files(tmp_path / "a", files=5, rows_per_file=2)
    text_files(tmp_path / "b", files=1, rows_per_file=6)
    plan = plan_of(f"""
env {{ parallelism = 4 }}
source {{ LocalFile {{
  tables_configs = [
    {{ path = "{tmp_path / "a"}", file_format_type = "text", schema = {{ table = "ta", fields {{ id = int }} }} }},
    {{ path = "{tmp_path / "b"}", file_format_type = "text", schema = {{ table = "tb", fields {{ id = int }} }} }}
  ]
}} }}
sink {{ Console {{ }} }}
""")
    (p,) = plan.pipelines
    got = lf.read(RunContext(spark, plan, p, "r1"), p.sources[0])
    assert {t: df.rdd.getNumPartitions() for t, df in got.items()} == {"ta": 4, "tb": 4}
    assert got["ta"].count() == 10 and got["tb"].count() == 6


def test_stream_micro_batches_come_at_the_planned_parallelism(spark, plan_of, tmp_path):
    """A STREAMING source at parallelism 2: a micro-batch of one file is written as two files."""
    expected = text_files(tmp_path / "in", files=1, rows_per_file=8)
    out = tmp_path / "out"
    plan = plan_of(f"""
env {{ job.mode = "STREAMING", job.name = "par", parallelism = 2, checkpoint.root = "{tmp_path}/checkpoints" }}
source {{ {source_block(tmp_path / "in")} }}
sink {{ LocalFile {{ plugin_input = "t", path = "{out}", file_format_type = "text" }} }}
""")
    (p,) = plan.pipelines
    metrics = run_streaming_pipeline(RunContext(spark, plan, p, "r1"))
    assert metrics["write_count"] == 8 and metrics["streaming"]["micro_batches"] == 1
    files = data_files(out)
    assert len(files) == 2
    assert ids_in(files) == expected
