"""Compiling is safe at DAG-parse time: it imports neither PySpark nor Airflow."""

from __future__ import annotations

import subprocess
import sys

from .conftest import ROOT

PROBE = """
import sys
from airflow_provider_seatunnel.plan import compile_job
compile_job(sys.argv[1], {"output_dir": "/tmp/x"}, use_cache=False)
from airflow_provider_seatunnel.cli import main
heavy = sorted(m for m in sys.modules if m.split(".")[0] in ("pyspark", "airflow", "py4j", "pandas"))
print(",".join(heavy))
"""


def test_compiler_imports_neither_pyspark_nor_airflow():
    proc = subprocess.run([sys.executable, "-c", PROBE, str(ROOT / "dags" / "configs" / "example.conf")],
                          capture_output=True, text=True, cwd=ROOT, check=True)
    assert proc.stdout.strip() == ""
