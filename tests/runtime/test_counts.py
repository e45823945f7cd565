"""Row counts: counting points in the pass that writes the data (SQL metrics, no aggregation)."""

from __future__ import annotations

from airflow_provider_seatunnel.plan.model import PlanVertex
from airflow_provider_seatunnel.runtime.counting import count_rows
from airflow_provider_seatunnel.spi import get_connector
from airflow_provider_seatunnel.spi.connector import SOURCE, KnownPlugin


def _csv(tmp_path, rows: int):
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.csv").write_text("".join(f"{i},n{i}\n" for i in range(rows)))
    return src


def _last_plan(spark) -> str:
    store = spark._jsparkSession.sharedState().statusStore()
    executions = store.executionsList()
    return executions.apply(executions.size() - 1).physicalPlanDescription()


def test_a_source_counts_every_row_it_read_even_where_a_filter_could_be_pushed_into_the_scan(spark, run_job,
                                                                                            tmp_path):
    src, out = _csv(tmp_path, 10), tmp_path / "out"
    [metrics] = run_job(f"""
source {{ LocalFile {{ plugin_output = "t", path = "{src}", file_format_type = "csv",
                      schema = {{ fields {{ id = int, name = string }} }} }} }}
transform {{ Sql {{ plugin_input = "t", plugin_output = "big", query = "SELECT id FROM t WHERE id >= 7" }} }}
sink {{ LocalFile {{ plugin_input = "big", path = "{out}", file_format_type = "csv" }} }}""")
    assert (metrics["read_count"], metrics["write_count"], metrics["failed_count"]) == (10, 3, 7)
    plan = _last_plan(spark)
    assert "CollectMetrics" not in plan  # no aggregation per row where no DELETE row can arrive
    assert "Scan csv" in plan and "PushedFilters" not in plan  # the counting point keeps the filter above the scan


def test_a_persisted_source_feeding_two_sinks_is_counted_once(run_job, tmp_path):
    src = _csv(tmp_path, 6)
    metrics = run_job(f"""
source {{ LocalFile {{ plugin_output = "t", path = "{src}", file_format_type = "csv",
                      schema = {{ fields {{ id = int, name = string }} }} }} }}
transform {{ Sql {{ plugin_input = "t", plugin_output = "odd", query = "SELECT * FROM t WHERE id % 2 = 1" }} }}
sink {{
  LocalFile {{ plugin_input = "t", path = "{tmp_path / 'all'}", file_format_type = "json" }}
  LocalFile {{ plugin_input = "odd", path = "{tmp_path / 'odd'}", file_format_type = "json" }}
}}""")
    assert [(m["read_count"], m["write_count"], m["per_sink"]) for m in metrics] == [
        (6, 9, {"sink[0] LocalFile": 6, "sink[1] LocalFile": 3})]


def test_a_counter_without_an_action_has_no_counts_and_one_action_counts_once(spark):
    df, counter = count_rows(spark.range(0, 25, 1, 3), "t")
    assert counter.get(wait=1) == {}
    df.write.format("noop").mode("overwrite").save()
    assert counter.get() == {"rows": 25}
    df.write.format("noop").mode("overwrite").save()  # a second full pass is not a second 25 rows
    assert counter.get() == {"rows": 25}


def _vertex(plugin: str, kind: str, config: dict) -> PlanVertex:
    return PlanVertex(id=f"{kind}-0", ref=f"{kind}[0]", kind=kind, plugin=plugin, parallelism=1, config=config)


def test_which_vertices_can_emit_rows_other_than_insert():
    fake = get_connector("FakeSource")
    fields = {"schema": {"fields": {"id": "int"}}}
    assert fake.may_emit_changes(_vertex("FakeSource", "source", fields), False) is False
    inserts = {**fields, "rows": [{"kind": "INSERT", "fields": [1]}]}
    assert fake.may_emit_changes(_vertex("FakeSource", "source", inserts), False) is False
    deletes = {**fields, "rows": [{"kind": "INSERT", "fields": [1]}, {"kind": "DELETE", "fields": [2]}]}
    assert fake.may_emit_changes(_vertex("FakeSource", "source", deletes), False) is True
    assert get_connector("LocalFile").may_emit_changes(_vertex("LocalFile", "source", {}), False) is False
    assert get_connector("Jdbc").may_emit_changes(_vertex("Jdbc", "source", {}), False) is False
    sql = get_connector("Sql")
    assert [sql.may_emit_changes(_vertex("Sql", "transform", {}), c) for c in (False, True)] == [False, True]
    extractor = get_connector("RowKindExtractor")
    assert extractor.may_emit_changes(_vertex("RowKindExtractor", "transform", {}), True) is False
    unknown = KnownPlugin("ThirdParty", frozenset({SOURCE}))  # undeclared: it may
    assert unknown.may_emit_changes(_vertex("ThirdParty", "source", {}), False) is True


def test_one_reading_is_shared_by_the_counters_inside_it_and_never_outside(monkeypatch):
    """A progress line reads the counting points once for all its counters; a later question reads afresh
    (a reading kept by time would answer a finished write with the counts from before it)."""
    from airflow_provider_seatunnel.runtime import counting

    reads: list[int] = []

    def marker_rows(spark, since, timeout):
        reads.append(since)
        return {counting._MARKER_BASE + 1: 10 * len(reads), counting._MARKER_BASE + 2: 5}

    monkeypatch.setattr(counting.internals, "marker_rows", marker_rows)
    spark = object()
    with counting.one_reading():
        with counting.one_reading():  # nested: the outer reading
            first = counting._live_rows(spark, 7)
        assert counting._live_rows(spark, 7) is first and reads == [7]
        counting._live_rows(spark, 9)  # another start: its own reading
        assert reads == [7, 9]
    assert counting._live_rows(spark, 7)[counting._MARKER_BASE + 1] == 30 and reads == [7, 9, 7]
