"""The PySpark internals the runtime relies on (runtime/pyspark_internals.py): each test here fails,
naming the patch and the installed PySpark, when PySpark no longer is what a patch was written
for; and on a PySpark a patch was not written for, the runtime takes the public API and still
gives the same answers."""

from __future__ import annotations

import pytest

from airflow_provider_seatunnel.runtime import pyspark_internals as internals
from airflow_provider_seatunnel.runtime.counting import count_rows
from airflow_provider_seatunnel.spi.rows import ROW_KIND

NEWER = "9.9.0"  # a PySpark no patch was written for


def _changed(patch: internals.Patch, what: str) -> str:
    return str(patch.changed([what]))


@pytest.mark.parametrize("patch", list(internals.PATCHES.values()), ids=list(internals.PATCHES))
def test_the_installed_pyspark_is_one_each_patch_was_written_for(patch):
    assert patch.written_for(), _changed(
        patch, "it is not one the patch was written for, so the runtime takes the public API instead: check that "
               "the tests below pass, then add the version to the patch's supported ones (or remove the patch)")


def test_the_switch_turns_patches_off_one_by_one(monkeypatch):
    monkeypatch.delenv(internals.ENV, raising=False)
    assert all(internals.switched_on(name) for name in internals.SWITCHES)
    monkeypatch.setenv(internals.ENV, "off")
    assert not any(internals.switched_on(name) for name in internals.SWITCHES)
    assert not internals.STATUS_STORE_COUNTS.applies()
    monkeypatch.setenv(internals.ENV, "installed_pyspark")
    assert [internals.switched_on(n) for n in internals.SWITCHES] == [False, True]
    monkeypatch.setenv(internals.ENV, "status_store_count")
    with pytest.raises(ValueError, match="unknown patch status_store_count"):
        internals.switched_on("status_store_counts")


def test_a_patch_applies_to_the_versions_it_was_written_for_only(monkeypatch):
    import pyspark

    monkeypatch.delenv(internals.ENV, raising=False)
    patch = internals.Patch("p", ("4.2",))
    assert patch.written_for("4.2.0") and patch.written_for("4.2.3") and patch.written_for("4.2")
    assert not patch.written_for("4.1.1") and not patch.written_for("4.20.0") and not patch.written_for("5.2.0")
    monkeypatch.setattr(pyspark, "__version__", NEWER)
    assert not internals.STATUS_STORE_COUNTS.applies()
    assert f"installed PySpark {NEWER}" in str(internals.STATUS_STORE_COUNTS.changed(["x"]))


# --- installed_pyspark (no patch: the driver's import path) -----------------------------------

def test_the_installed_pyspark_bundles_the_zip_spark_submit_puts_on_a_drivers_path():
    """What :func:`without_bundled_pyspark` looks for (its end-to-end check is in test_driver_pyspark.py)."""
    import zipfile

    from airflow_provider_seatunnel.runtime.launcher import pyspark_home

    home = pyspark_home()
    bundle = home / "python" / "lib" / "pyspark.zip"
    what = f"installed_pyspark, written for the layout of the pyspark 4.2 package, finds PySpark {internals.pyspark_version()}"
    assert bundle.is_file(), f"{what} without {bundle}: drivers import spark-submit's zip again"
    with zipfile.ZipFile(bundle) as z:
        assert z.read("pyspark/version.py") == (home / "version.py").read_bytes(), (
            f"{what} whose {bundle} holds another version.py: drivers import spark-submit's zip again")
    assert internals.without_bundled_pyspark([str(bundle), str(home.parent)]) == [str(home.parent)]


# --- status_store_counts ----------------------------------------------------------------------

def test_status_store_counts_finds_what_it_relies_on(spark):
    problems = internals.status_store_problems(spark)
    assert not problems, str(internals.STATUS_STORE_COUNTS.changed(problems))


def test_a_counting_point_is_read_from_the_status_store_as_assumed(spark, monkeypatch):
    monkeypatch.delenv(internals.ENV, raising=False)
    df, counter = count_rows(spark.range(0, 25, 1, 3), "internals")
    assert counter.key is not None  # the status store path
    df.write.format("noop").mode("overwrite").save()
    rows = internals.marker_rows(spark, counter.since, 10)
    assert rows.get(counter.key + 1_000_000_000) == 25, _changed(
        internals.STATUS_STORE_COUNTS, f"the SQL status store gave {rows} for a counting point over 25 rows")


def _count_everything(spark) -> dict:
    """Counts of the cases the runtime relies on: no action, one, two; and DELETE rows."""
    from pyspark.sql import functions as F

    out = {}
    df, counter = count_rows(spark.range(0, 25, 1, 3), "internals-a")
    out["before"] = counter.get(wait=1)
    df.write.format("noop").mode("overwrite").save()
    out["once"] = counter.get()
    df.write.format("noop").mode("overwrite").save()
    out["twice"] = counter.get()
    kinds = spark.range(0, 8, 1, 2).withColumn(ROW_KIND, (F.col("id") % 4).cast("tinyint"))
    df, counter = count_rows(kinds.where("id >= 2"), "internals-b", deletes=True)
    df.write.format("noop").mode("overwrite").save()
    out["deletes"] = counter.get()
    return out


def test_on_another_pyspark_rows_are_counted_by_observations_with_the_same_counts(spark, monkeypatch):
    import pyspark

    monkeypatch.delenv(internals.ENV, raising=False)
    internals_counts = _count_everything(spark)
    monkeypatch.setattr(pyspark, "__version__", NEWER)
    df, counter = count_rows(spark.range(3), "internals-plan")
    assert counter.key is None  # the public path: DataFrame.observe
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "CollectMetrics" in plan and "SPARK_PARTITION_ID" not in plan.upper()
    observed = _count_everything(spark)
    assert observed == internals_counts == {
        "before": {}, "once": {"rows": 25}, "twice": {"rows": 25}, "deletes": {"rows": 6, "deletes": 3}}


def test_on_another_pyspark_a_job_counts_what_it_read_and_wrote(run_job, tmp_path, monkeypatch):
    import pyspark

    monkeypatch.delenv(internals.ENV, raising=False)
    monkeypatch.setattr(pyspark, "__version__", NEWER)
    src = tmp_path / "in"
    src.mkdir()
    (src / "a.csv").write_text("".join(f"{i},n{i}\n" for i in range(10)))
    [metrics] = run_job(f"""
source {{ LocalFile {{ plugin_output = "t", path = "{src}", file_format_type = "csv",
                      schema = {{ fields {{ id = int, name = string }} }} }} }}
transform {{ Sql {{ plugin_input = "t", plugin_output = "big", query = "SELECT id FROM t WHERE id >= 7" }} }}
sink {{
  LocalFile {{ plugin_input = "big", path = "{tmp_path / 'out'}", file_format_type = "csv" }}
  LocalFile {{ plugin_input = "t", path = "{tmp_path / 'all'}", file_format_type = "json" }}
}}""")
    assert (metrics["read_count"], metrics["write_count"], metrics["per_sink"]) == (
        10, 13, {"sink[0] LocalFile": 3, "sink[1] LocalFile": 10})


def test_a_jvm_lacking_what_status_store_counts_relies_on_is_named_in_the_error(spark, monkeypatch):
    monkeypatch.delenv(internals.ENV, raising=False)
    monkeypatch.setattr(internals, "_checked_jvms", set())
    monkeypatch.setitem(internals.STATUS_STORE_METHODS, "org.apache.spark.sql.execution.ui.SparkPlanGraphNode",
                        {"name": (), "description": ()})
    with pytest.raises(internals.InternalsChanged,
                       match=r"status_store_counts, written for PySpark 4\.2, .*: "
                             r"org\.apache\.spark\.sql\.execution\.ui\.SparkPlanGraphNode\.description\(\) is missing"):
        count_rows(spark.range(3), "internals-broken")
