"""Guard against pyspark and pyspark-client drifting apart (their files overlap)."""

from __future__ import annotations

import re
from importlib.metadata import version
from pathlib import Path


def test_pyspark_and_pyspark_client_are_one_release():
    assert version("pyspark") == version("pyspark-client")


def test_pyspark_reports_the_version_of_its_jars():
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    (core,) = [p.name for p in jars.glob("spark-core_*.jar")]
    jar_version = re.search(r"spark-core_[\d.]+-(.+)\.jar", core).group(1)
    assert pyspark.__version__ == jar_version == version("pyspark")


def test_provider_metadata_entry_point():
    from importlib.metadata import entry_points

    (ep,) = [e for e in entry_points(group="apache_airflow_provider")
             if e.value.startswith("airflow_provider_seatunnel")]
    info = ep.load()()
    assert info["package-name"] == "airflow-provider-seatunnel"
    # Airflow itself finds the provider, its extra link and its operator modules
    from airflow.providers_manager import ProvidersManager

    manager = ProvidersManager()
    assert "airflow-provider-seatunnel" in manager.providers
    link = "airflow_provider_seatunnel.operators.seatunnel.SparkApplicationLink"
    assert link in manager.extra_links_class_names
    for group in info["operators"] + info["hooks"]:
        for module in group["python-modules"]:
            __import__(module)
