"""Which PySpark a pipeline driver imports: the installed package's, not spark-submit's zip of it."""

from __future__ import annotations

import subprocess
import zipfile
from pathlib import Path

from airflow_provider_seatunnel.runtime.launcher import pyspark_home, submit_environment
from airflow_provider_seatunnel.runtime.session import without_bundled_pyspark


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
from airflow_provider_seatunnel.runtime.session import without_bundled_pyspark
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
