"""The plugin registry: built-ins by name (any case), loaded one module at a time, and entry points."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap

from airflow_provider_seatunnel.spi import SINK, SOURCE, TRANSFORM, Capabilities, available, get_connector, registry

from .conftest import ROOT


def test_every_builtin_name_is_its_modules_connector():
    for key, target in registry._BUILTIN_MODULES.items():
        module, _, attribute = target.partition(":")  # "module" (its CONNECTOR) or "module:OBJECT"
        connector = getattr(importlib.import_module(f"airflow_provider_seatunnel.connectors.{module}"),
                            attribute or "CONNECTOR")
        assert connector.name.lower() == key
        assert get_connector(connector.name.upper()) is connector
    runnable = {name.lower() for name in available()}
    # built-ins that only plan (their options checked, their reason to not run given at compile time:
    # docs/models.md#dynamiccompile, docs/mongodb.md)
    planned = {key for key in registry._BUILTIN_MODULES
               if not any(get_connector(key).can_run(s) for s in get_connector(key).capabilities.sections)}
    assert planned == {"mongodb-cdc", "dynamiccompile"}
    # beside the built-ins, the connectors installed packages register (tests/plugin_package's)
    assert runnable == (set(registry._BUILTIN_MODULES) - planned) | set(registry._plugins())
    assert not get_connector("DynamicCompile").can_run(TRANSFORM)


def test_plugins_known_to_run_elsewhere_plan_under_their_first_spelling():
    starrocks = get_connector("starrocks", SOURCE)  # the StarRocks sink runs here; its source plans only
    assert starrocks.name == "StarRocks" and starrocks.capabilities.sections == {SOURCE}
    assert not starrocks.can_run(SOURCE) and get_connector("Starrocks", SINK).can_run(SINK)
    kudu = get_connector("kudu")
    assert kudu.name == "Kudu" and kudu.capabilities.sections == {SOURCE, SINK}
    assert not kudu.can_run(SINK)
    assert get_connector("NoSuchPlugin") is None


#: the family packages and shared modules of connectors/ (no plugin of their own)
FAMILIES = {"files", "lakehouse", "values", "common", "javatext", "temporal", "streamload"}

PROBE = """
import sys
from airflow_provider_seatunnel.spi import get_connector
get_connector("sql"), get_connector("LocalFile")
loaded = sorted(m.split(".")[2] for m in sys.modules if m.startswith("airflow_provider_seatunnel.connectors."))
print(",".join(loaded))
"""


def test_asking_for_a_plugin_loads_its_module_alone():
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, cwd=ROOT, check=True)
    loaded = set(proc.stdout.strip().split(",")) - FAMILIES  # shared code of a family may load with a plugin
    assert loaded == {"sql", "localfile"}


def test_a_third_party_connector_registers_through_the_entry_point(tmp_path):
    (tmp_path / "my_connector.py").write_text(textwrap.dedent("""
        from airflow_provider_seatunnel.spi import SINK, Capabilities, Connector, Sink

        class MySink(Connector, Sink):
            name = "MySink"
            capabilities = Capabilities(sections=frozenset({SINK}))

            def prepare(self, ctx, vertex, data):
                return None

        CONNECTOR = MySink()
    """))
    dist = tmp_path / "my_connector-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-connector\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[{registry.ENTRY_POINT_GROUP}]\nmysink = my_connector:CONNECTOR\n")
    probe = ("from airflow_provider_seatunnel.spi import SINK, available, get_connector\n"
             "c = get_connector('MYSINK')\nprint(c.name, c.can_run(SINK), 'MySink' in available(SINK))\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True,
                          env={"PYTHONPATH": str(tmp_path), "PATH": ""})
    assert proc.stdout.split() == ["MySink", "True", "True"]


def test_a_connectors_declared_secrets_are_redacted_and_left_out_of_task_ids(tmp_path):
    """Options a connector declares secret (beyond the common names) never reach the plan JSON or the
    pipeline's task id."""
    from airflow_provider_seatunnel.plan.compiler import compile_job
    from airflow_provider_seatunnel.spi import connector as base
    from airflow_provider_seatunnel.spi.contract import SINK as sink_kind

    class Vault(base.Connector):
        name = "VaultSink"
        capabilities = Capabilities(sections=frozenset({sink_kind}))
        secrets = frozenset({"api_key"})

    registry._plugins()["vaultsink"] = Vault()
    try:
        conf = tmp_path / "job.conf"

        def plan(key: str):
            conf.write_text('source { FakeSource { schema = { fields { id = int } } } }\n'
                            f'sink {{ VaultSink {{ api_key = "{key}", region = "eu" }} }}\n')
            return compile_job(str(conf), use_cache=False)

        first, second = plan("s3cr3t-1"), plan("s3cr3t-2")
        text = json.dumps(first.to_dict())
        assert "s3cr3t" not in text and '"region": "eu"' in text
        assert first.pipelines[0].task_id == second.pipelines[0].task_id
        assert first.to_dict(secrets=True)["pipelines"][0]["vertices"][1]["config"]["api_key"] == "s3cr3t-1"
    finally:
        registry._plugins().pop("vaultsink", None)


def test_an_installed_plugin_wins_over_a_name_known_to_run_elsewhere(monkeypatch):
    """A third-party connector named like a SeaTunnel plugin this package cannot run (Socket...) is the
    one found, not the placeholder."""
    from airflow_provider_seatunnel.spi import connector as base
    from airflow_provider_seatunnel.spi.contract import SINK as sink_kind
    from airflow_provider_seatunnel.spi.contract import Sink

    class Socket(base.Connector, Sink):
        name = "Socket"
        capabilities = Capabilities(sections=frozenset({sink_kind}))

        def prepare(self, ctx, vertex, data):
            return None

    assert not get_connector("socket").can_run(sink_kind)
    monkeypatch.setitem(registry._plugins(), "socket", Socket())
    assert get_connector("SOCKET").can_run(sink_kind)
