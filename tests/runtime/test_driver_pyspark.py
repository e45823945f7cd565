"""How a pipeline driver's Python starts: PySpark from the installed package, not spark-submit's zip
of it."""

from __future__ import annotations

import json
import subprocess
import zipfile
from pathlib import Path

from airflow_provider_seatunnel.plan import compile_job
from airflow_provider_seatunnel.runtime.launcher import (
    APP_FILE,
    pyspark_home,
    submit_command,
    submit_environment,
    write_plan_file,
)
from airflow_provider_seatunnel.runtime.pyspark_internals import without_bundled_pyspark


def _site(root: Path, installed: str, bundled: str) -> tuple[str, str]:
    """A site directory holding a pyspark package whose python/lib/pyspark.zip bundles a copy."""
    package = root / "site" / "pyspark"
    (package / "python" / "lib").mkdir(parents=True)
    (package / "version.py").write_text(f"__version__ = '{installed}'\n")
    bundle = package / "python" / "lib" / "pyspark.zip"
    with zipfile.ZipFile(bundle, "w") as z:
        z.writestr("pyspark/version.py", f"__version__ = '{bundled}'\n")
    return str(root / "site"), str(bundle)


def test_the_zip_of_the_installed_package_goes_when_it_bundles_the_same_version(tmp_path):
    site, bundle = _site(tmp_path, "4.2.0", "4.2.0")
    py4j = str(Path(bundle).with_name("py4j-src.zip"))
    assert without_bundled_pyspark(["/app", bundle, py4j, site]) == ["/app", py4j, site]


def test_the_py4j_zip_goes_when_an_importable_py4j_is_the_same_release(tmp_path):
    site, bundle = _site(tmp_path, "4.2.0", "4.2.0")
    (Path(site) / "py4j").mkdir()
    (Path(site) / "py4j" / "version.py").write_text("__version__ = '0.10.9.9'\n")
    zips = {}
    for release in ("0.10.9.9", "0.10.9.8"):
        zips[release] = str(Path(bundle).with_name(f"py4j-{release}-src.zip"))
        with zipfile.ZipFile(zips[release], "w") as z:
            z.writestr("py4j/version.py", f"__version__ = '{release}'\n")
    assert without_bundled_pyspark([bundle, zips["0.10.9.9"], site]) == [site]
    assert without_bundled_pyspark([zips["0.10.9.8"], site]) == [zips["0.10.9.8"], site]  # another release stays
    assert without_bundled_pyspark([zips["0.10.9.9"]]) == [zips["0.10.9.9"]]  # no py4j package on the path


def test_a_zip_stays_when_the_package_is_another_version_or_not_importable_or_another_spark(tmp_path):
    site, bundle = _site(tmp_path / "a", "4.2.0", "4.1.0")  # e.g. pyspark-client's files over pyspark's
    assert without_bundled_pyspark([bundle, site]) == [bundle, site]
    site, bundle = _site(tmp_path / "b", "4.2.0", "4.2.0")
    assert without_bundled_pyspark([bundle]) == [bundle]  # the package itself is not on the path
    other = tmp_path / "spark-home" / "python" / "lib"
    other.mkdir(parents=True)
    (other / "pyspark.zip").write_bytes(Path(bundle).read_bytes())  # a cluster's SPARK_HOME
    assert without_bundled_pyspark([str(other / "pyspark.zip"), site]) == [str(other / "pyspark.zip"), site]


PROBE = """
import sys
from airflow_provider_seatunnel.runtime.pyspark_internals import without_bundled_pyspark
print("BUNDLED", any(p.endswith("pyspark.zip") for p in sys.path))
sys.path[:] = without_bundled_pyspark(sys.path)
import pyspark
print("FROM", pyspark.__file__)
"""


def test_a_driver_started_by_spark_submit_imports_the_installed_pyspark(tmp_path):
    script = tmp_path / "probe.py"
    script.write_text(PROBE)
    proc = subprocess.run([str(pyspark_home() / "bin" / "spark-submit"), "--master", "local[1]", str(script)],
                          env=submit_environment(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "BUNDLED True" in proc.stdout  # spark-submit put its zip on the path...
    source = next(line.split(" ", 1)[1] for line in proc.stdout.splitlines() if line.startswith("FROM "))
    assert Path(source) == pyspark_home() / "__init__.py"  # ...and the driver reads the package instead


PIPELINE = """
env { job.mode = "BATCH" }
source {
  FakeSource {
    plugin_output = "fake"
    row.num = 20
    split.num = 2
    schema = { fields {
      name = string, age = int, score = double, big = bigint, price = "decimal(10, 2)",
      day = date, at = timestamp, tags = "array<int>", attrs = "map<string, string>", raw = bytes
    } }
  }
}
transform {
  Sql {
    plugin_input = "fake"
    plugin_output = "sql"
    query = "SELECT name, age + 1 AS age, score * 2 AS score, big, price, day, at, tags, attrs, raw, 'x,y' AS pair FROM fake WHERE age >= 0"
  }
  Replace {
    plugin_input = "sql"
    plugin_output = "replaced"
    replace_field = "name"
    pattern = "a"
    replacement = "b"
  }
  Split {
    plugin_input = "replaced"
    plugin_output = "split"
    separator = ","
    split_field = "pair"
    output_fields = [first, second]
  }
}
sink {
  LocalFile {
    plugin_input = "split"
    path = "{out}"
    file_format_type = "csv"
  }
  Assert {
    plugin_input = "split"
    rules {
      row_rules = [{ rule_type = MIN_ROW, rule_value = 20 }]
      field_rules = [{ field_name = first, field_type = string, field_value = [{ equals_to = "x" }] }]
    }
  }
}
"""

DRIVER_PROBE = """
import sys
from airflow_provider_seatunnel.runtime import app
code = app.main(sys.argv[1:])
import pyspark
from pyspark.sql import functions
print("DRIVER", code, pyspark.__file__, hasattr(functions.lit, "pyspark_lit"))
"""


def test_a_pipeline_driver_runs_on_the_installed_pyspark_as_it_is(tmp_path, write_conf):
    """A real pipeline (sources, transforms and sinks that make literals and pass dates, decimals
    and lists to the JVM) through spark-submit: it finishes, on PySpark imported from the
    installed package, whose functions nothing patched."""
    plan = compile_job(write_conf(PIPELINE.replace("{out}", str(tmp_path / "out"))), use_cache=False)
    plan_file = write_plan_file(plan, tmp_path / "work")
    metrics = tmp_path / "metrics.json"
    probe = tmp_path / "probe.py"
    probe.write_text(DRIVER_PROBE)
    cmd = [str(probe) if part == str(APP_FILE) else part
           for part in submit_command(plan, plan.pipelines[0], plan_file, "probe-run", "local[1]", metrics)]
    proc = subprocess.run(cmd, env=submit_environment(), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    assert json.loads(metrics.read_text())["write_count"] == 40  # 20 rows into each sink
    line = next(line for line in proc.stdout.splitlines() if line.startswith("DRIVER "))
    assert line == f"DRIVER 0 {pyspark_home() / '__init__.py'} False"
