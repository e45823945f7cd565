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
IN_TASKS = re.compile(r"\b(register_once|mapInArrow|mapInPandas|foreachPartition|mapPartitions|mapPartitionsWithIndex|pandas_udf|"
                      r"DataSourceReader|"
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


# -- connection forms (airflow_provider_seatunnel/connection_forms.py) -------------------------------------------

#: extras the code reads that are no form field, and why
NOT_FORM_FIELDS = {
    "group.id": "the Kafka reader drops it: a pipeline's consumer group comes from its block",
    "service_config": "the AWS provider's nested object (service_config.s3.endpoint_url), written in the extra JSON",
    "s3": "the member of service_config above",
}
#: fields of Airflow's own smtp connection form (the SMTP provider's): no form of ours, when EmailSink reads them
SMTP_FORM_FIELDS = {"from_email", "disable_ssl", "timeout"}
SMTP_READER = "airflow_provider_seatunnel/connectors/email/"
#: connection types whose reader passes every extra through (client settings, catalog properties): their fields
#: are the common ones, read without naming them
PASS_THROUGH = {"seatunnel_kafka", "seatunnel_iceberg", "seatunnel_mongodb"}


def _reads_connection_extra(func) -> bool:
    import ast

    text = ast.unparse(func)
    params = {a.arg for a in func.args.args + func.args.kwonlyargs}
    return "conn.extra" in text or "extra_dejson" in text or bool(params & {"extra", "connection_extra"})


def _extra_keys(path, module) -> dict[str, str]:
    """The connection extras the functions of ``path`` that read a connection's extra name, each with where."""
    import ast

    def key_of(node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return [node.value]
        if isinstance(node, ast.Name) and isinstance(getattr(module, node.id, None), str):
            return [getattr(module, node.id)]
        return loop_keys.get(node.id, []) if isinstance(node, ast.Name) else []

    def extra_like(node):
        return "extra" in ast.unparse(node) or (isinstance(node, ast.Name) and node.id == "lower")

    found: dict[str, str] = {}
    for func in ast.walk(ast.parse(path.read_text())):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _reads_connection_extra(func):
            continue
        loop_keys: dict[str, list[str]] = {}
        for loop in ast.walk(func):  # for key in ("a", "b") / for key, *_ in (("a", ...), ...)
            if isinstance(loop, ast.For) and isinstance(loop.iter, ast.Tuple):
                target = loop.target.elts[0] if isinstance(loop.target, ast.Tuple) else loop.target
                items = [e.elts[0] if isinstance(e, ast.Tuple) else e for e in loop.iter.elts]
                if isinstance(target, ast.Name):
                    loop_keys[target.id] = [e.value for e in items if isinstance(e, ast.Constant)]
        for node in ast.walk(func):
            keys: list[str] = []
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args
                    and node.func.attr in ("get", "pop") and extra_like(node.func.value)):
                keys = key_of(node.args[0])
            elif isinstance(node, ast.Subscript) and extra_like(node.value):
                keys = key_of(node.slice)
            elif isinstance(node, ast.Compare) and isinstance(node.ops[0], ast.In) and extra_like(node.comparators[0]):
                keys = key_of(node.left)
            for key in keys:
                found.setdefault(key, f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_every_connection_extra_the_code_reads_is_a_field_of_a_connection_form():
    import importlib
    import inspect

    from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook

    from airflow_provider_seatunnel.connection_forms import form_fields

    read: dict[str, str] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        name = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for key, where in _extra_keys(path, importlib.import_module(name)).items():
            # an smtp field read by anything but EmailSink counts (it needs a form of ours)
            if key not in read or read[key].startswith(SMTP_READER):
                read[key] = where
    # the readers are found: one extra of each kind of connection
    assert {"driver_path", "driver_class", "master_ui_port", "history_server_url", "db", "passive",
            "no_host_key_check", "region_name", "bootstrap.servers", "headers", "deploy-mode"} <= set(read), read
    fields = form_fields()
    declared = set().union(*fields.values())
    missing = {k: where for k, where in read.items() if k not in declared and k not in NOT_FORM_FIELDS
               and not (k in SMTP_FORM_FIELDS and where.startswith(SMTP_READER))}
    assert not missing, f"connection extras read but in no form (connection_forms.py): {missing}"
    # and every field is read: by name here, by the Spark provider (a Spark connection), or passed through
    spark_reads = inspect.getsource(SparkSubmitHook._resolve_connection)
    unread = {(t, f) for t, names in fields.items() for f in names
              if f not in read and t not in PASS_THROUGH and not (t == "seatunnel_spark" and f'"{f}"' in spark_reads)}
    assert not unread, f"form fields nothing reads: {sorted(unread)}"


def test_the_connection_forms_table_lists_every_type_with_its_fields():
    from airflow_provider_seatunnel.connection_forms import form_fields

    section = (DOCS / "airflow.md").read_text().split("### Connection forms", 1)[1].split("\n### ", 1)[0]
    rows = [line.split("|") for line in section.splitlines() if line.startswith("| `seatunnel_")]
    documented = {re.findall(r"`(\w+)`", row[1])[0]: set(re.findall(r"`([\w.-]+)`", row[3])) for row in rows}
    assert documented == {t: set(fields) for t, fields in form_fields().items()}
