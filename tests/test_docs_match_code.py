"""Statements of the docs checked against the code they describe: who applies save modes, what the
executors' Python workers run, how the UI plugin is registered, the Jdbc sink's retention default."""

from __future__ import annotations

import re
import tomllib

from airflow_provider_seatunnel.connectors.jdbc.options import DEFAULT_RETENTION_DAYS, SPEC
from airflow_provider_seatunnel.spi import SINK, SaveModes, get_connector
from airflow_provider_seatunnel.spi.registry import available

from .conftest import ROOT

DOCS = ROOT / "docs"
PACKAGE = ROOT / "airflow_provider_seatunnel"
#: what runs our Python code in Spark's tasks: a Python data source, or a Python function per batch
IN_TASKS = re.compile(r"\b(register_once|mapInArrow|mapInPandas|foreachPartition|mapPartitions|pandas_udf|DataSourceReader|"
                      r"DataSourceStreamReader|DataSourceWriter)\b")


def test_prepare_applies_the_save_modes_of_the_sinks_with_the_capability():
    text = (DOCS / "airflow.md").read_text()
    listed = re.search(r"<!-- prepare-save-modes -->(.*?)<!-- /prepare-save-modes -->", text, re.S)
    assert listed, "docs/airflow.md lost its list of the sinks prepare applies save modes for"
    names = [n.strip() for n in listed.group(1).replace("\n", " ").split(",")]
    assert names == [n for n in available(SINK) if isinstance(get_connector(n), SaveModes)]
    assert "Jdbc" not in names  # its pipeline task applies them (docs say so next to the list)


def test_the_executors_table_names_every_connector_that_runs_python_in_tasks():
    text = (DOCS / "deployment.md").read_text()
    section = text.split("### What the executors' Python workers need", 1)[1].split("\n## ", 1)[0]
    documented = set(re.findall(r"`connectors/(\w+)`", section))
    running = {path.relative_to(PACKAGE / "connectors").parts[0] for path in (PACKAGE / "connectors").rglob("*.py")
               if IN_TASKS.search(path.read_text())}
    assert documented == running
    assert "neither this package nor its Python dependencies" not in text


def test_the_ui_plugin_comes_from_the_airflow_plugins_entry_point_not_provider_info():
    from airflow_provider_seatunnel.provider_info import get_provider_info

    entry_points = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    assert entry_points["airflow.plugins"] == {"seatunnel": "airflow_provider_seatunnel.ui.plugin:SeaTunnelPlugin"}
    assert "plugins" not in get_provider_info()
    text = (DOCS / "airflow.md").read_text()
    assert "through the package's `airflow.plugins`\nentry point, not its provider info" in text


def test_the_jdbc_retention_default_is_the_documented_one():
    assert SPEC.get("bookkeeping_retention_days").default == DEFAULT_RETENTION_DAYS
    row = next(line for line in (DOCS / "jdbc.md").read_text().splitlines()
               if line.startswith("| `bookkeeping_retention_days` |"))
    assert row.split("|")[2].strip() == str(DEFAULT_RETENTION_DAYS)
    assert f"default {DEFAULT_RETENTION_DAYS} days" in (DOCS / "jdbc.md").read_text()
